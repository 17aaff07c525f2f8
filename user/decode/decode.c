// SPDX-License-Identifier: MIT
/*
 * The decoder's driver: loads the image and the schedule, decodes the PT
 * streams on a pool of workers (one stream per job), then merges every
 * thread's pieces from all CPUs in time order into decoded/tidN.  The
 * merge order is (tid, first TSC, cpu, piece) whatever the worker count,
 * so the output does not depend on -j.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"
#include "decode_int.h"
#include "records_pt.h"

/* Work items on a pool of threads: streams to prepare, then chunks. */
struct pool {
	struct jpd_ctx *ctx;
	struct jpd_stream *streams;
	size_t nstreams;
	struct jpd_chunk **chunks;
	size_t nchunks;
	struct jpd_worker *workers;
	unsigned nworkers;
	atomic_size_t next, done;
	atomic_uint ids;
	const struct jpd_options *opt;
	pthread_mutex_t progress_lock; /* the callback is called serially */
};

static void *prepare_worker(void *arg)
{
	struct pool *p = arg;
	for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->nstreams;)
		jpd_stream_prepare(p->ctx, &p->streams[i]);
	return NULL;
}

static void *chunk_worker(void *arg)
{
	struct pool *p = arg;
	struct jpd_worker *w = &p->workers[atomic_fetch_add(&p->ids, 1)];
	for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->nchunks;) {
		struct jpd_chunk *c = p->chunks[i];
		/* a chunk decodes the same on any worker after any chunk */
		if (jpd_image_iscache_reset(&p->ctx->img, w->iscache)) {
			c->rc = jpb_err_internal;
			snprintf(c->err, sizeof(c->err),
				 "decode: %s: chunk at offset %llu: section cache reset failed",
				 c->st->name, (unsigned long long)c->begin);
		} else
			jpd_chunk_decode(p->ctx, w, c);
		/* the decoder reads a few packets past the chunk's end */
		jpd_stream_drop(c->st, c->warm, c->end + (64u << 10));
		jpd_stream_drop_gaps(c->st);
		size_t d = atomic_fetch_add(&p->done, 1) + 1;
		if (p->opt->progress) {
			pthread_mutex_lock(&p->progress_lock);
			p->opt->progress(p->opt->progress_arg, d, p->nchunks);
			pthread_mutex_unlock(&p->progress_lock);
		}
	}
	return NULL;
}

/* FN(ARG) on JOBS threads (this one alone for 1), joined. */
static int run_threads(void *arg, unsigned jobs, void *(*fn)(void *))
{
	if (jobs <= 1) {
		fn(arg);
		return 0;
	}
	pthread_t *th = calloc(jobs, sizeof(*th));
	if (!th)
		return jpb_err_nomem;
	unsigned started = 0;
	for (; started < jobs; started++)
		if (pthread_create(&th[started], NULL, fn, arg))
			break;
	if (!started)
		fn(arg);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}

static int run_pool(struct pool *p, unsigned jobs, void *(*fn)(void *))
{
	atomic_store(&p->next, 0);
	atomic_store(&p->ids, 0);
	return run_threads(p, jobs, fn);
}

static int open_workers(struct jpd_ctx *ctx, struct jpd_worker *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct jpd_worker *w = &ws[i];
		w->id = i;
		snprintf(w->spillpath, sizeof(w->spillpath), "%s/ev-%u.bin",
			 ctx->tmpdir, i);
		w->spill = fopen(w->spillpath, "w+");
		if (!w->spill)
			return jpb_err_io;
		w->iscache = jpd_image_iscache(&ctx->img);
		if (!w->iscache)
			return jpb_err_nomem;
	}
	return 0;
}

static void close_workers(struct jpd_worker *ws, unsigned n)
{
	for (unsigned i = 0; ws && i < n; i++) {
		if (ws[i].spill) {
			fclose(ws[i].spill);
			unlink(ws[i].spillpath);
		}
		if (ws[i].iscache)
			pt_iscache_free(ws[i].iscache);
		jpb_buf_fini(&ws[i].out);
	}
	free(ws);
}

/* ---- configuration from meta.json "pt" -------------------------------- */

static json_int_t jint(json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

void jpd_config_from_meta(struct pt_config *cfg, struct jpb_bundle *b)
{
	pt_config_init(cfg);
	void *vm = NULL;
	if (jpb_meta_load(b, &vm) || !vm)
		return;
	json_t *meta = vm, *pt = json_object_get(meta, "pt");
	json_t *cpuid = json_object_get(pt, "cpuid");
	json_t *cpu = cpuid ? cpuid : json_object_get(meta, "cpu");
	const char *vendor = json_string_value(json_object_get(cpu, "vendor"));
	if (vendor && strstr(vendor, "Intel")) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = (uint16_t)jint(cpu, "family");
		cfg->cpu.model = (uint8_t)jint(cpu, "model");
		cfg->cpu.stepping = (uint8_t)jint(cpu, "stepping");
		pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	cfg->cpuid_0x15_eax = (uint32_t)jint(cpuid, "cpuid_0x15_eax");
	cfg->cpuid_0x15_ebx = (uint32_t)jint(cpuid, "cpuid_0x15_ebx");
	cfg->nom_freq = (uint8_t)jint(pt, "max_nonturbo_ratio");
	cfg->mtc_freq = (uint8_t)jint(json_object_get(pt, "config"), "mtc_period");
}

/* The TSC's rate as the recording CPU describes it, in ticks per ns (0:
 * not known): CPUID 0x15's crystal times its ratio, else the nominal
 * (max non-turbo) ratio times 100 MHz.  It is the clock's slope when one
 * calibration pair is all the sched stream kept (a short recording has
 * two, at its start and end: losing one to damage gave slope 1, and every
 * switch time after the pair was off by the TSC's rate). */
static double meta_tsc_per_ns(struct jpb_bundle *b)
{
	void *vm = NULL;
	if (jpb_meta_load(b, &vm) || !vm)
		return 0;
	json_t *pt = json_object_get(vm, "pt"), *cpuid = json_object_get(pt, "cpuid");
	json_int_t hz = jint(cpuid, "crystal_hz"), eax = jint(cpuid, "cpuid_0x15_eax"),
		   ebx = jint(cpuid, "cpuid_0x15_ebx");
	if (hz > 0 && eax > 0 && ebx > 0)
		return (double)hz * (double)ebx / (double)eax / 1e9;
	return (double)jint(pt, "max_nonturbo_ratio") * 0.1;
}

/* ---- merge ---------------------------------------------------------- */

struct pref {
	struct jpd_piece *p;
	FILE *spill;
};

static int cmp_pref(const void *a, const void *b)
{
	const struct jpd_piece *x = ((const struct pref *)a)->p,
			       *y = ((const struct pref *)b)->p;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->first_tsc != y->first_tsc)
		return x->first_tsc < y->first_tsc ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

struct tout {
	struct jpd_ctx *ctx;
	struct jpb_writer *w;
	const struct jpb_rectype *tev, *tgap;
	struct jpb_buf scratch;
	uint64_t seq;
	struct jpb_rec_decoded_thread th;
};

static int put_gap(struct tout *o, const struct jpd_piece *p)
{
	const struct jpd_clock *clk = &o->ctx->sched.clock;
	struct jpb_rec_decoded_gap g = {
		.tid = o->th.tid, .cpu = p->cpu, .first_tsc = p->gap_first,
		.last_tsc = p->gap_last, .cause = p->gap_cause,
		.error = p->gap_error, .pt_offset = p->gap_offset,
		.first_ns = jpd_tsc_to_ns(clk, p->gap_first),
		.last_ns = jpd_tsc_to_ns(clk, p->gap_last),
	};
	return jpb_writer_put_rec(o->w, o->tgap, g.first_ns, &g, &o->scratch);
}

/* A piece's spill bytes are already the packed events of one record: its
 * first event's time is absolute, i.e. relative to first_tsc = 0. */
static int copy_piece(struct tout *o, const struct pref *r, struct jpb_buf *in)
{
	const struct jpd_piece *p = r->p;
	jpb_buf_reset(in);
	if (jpb_buf_reserve(in, p->len))
		return jpb_err_nomem;
	if (pread(fileno(r->spill), in->data, p->len, (off_t)p->off) !=
	    (ssize_t)p->len)
		return jpb_err_io;
	struct jpb_rec_decoded_events ev = {
		.tid = o->th.tid, .cpu = p->cpu, .seq = o->seq, .first_tsc = 0,
		.count = (uint32_t)(p->events + p->gaps),
		.events = { in->data, (uint32_t)p->len },
	};
	int rc = jpb_writer_put_rec(o->w, o->tev,
				    jpd_tsc_to_ns(&o->ctx->sched.clock, p->first_tsc),
				    &ev, &o->scratch);
	o->seq += ev.count;
	o->th.pieces++;
	o->th.events += p->events;
	o->th.gaps += p->gaps;
	o->th.interp += p->interp;
	o->th.compiled += p->compiled;
	o->th.transitions += p->transitions;
	return rc || !p->has_gap ? rc : put_gap(o, p);
}

static const char *thread_name(const struct jpd_sched *s, uint32_t tid)
{
	for (size_t i = 0; i < s->ntids; i++)
		if (s->tids[i] == tid)
			return s->names[i];
	return "";
}

/* One thread's pieces, written to decoded/tidN by whichever worker takes
 * it; its decoded_thread record goes to the summary afterwards, in tid
 * order, so the output does not depend on which worker wrote what. */
struct tgroup {
	struct pref *refs;
	size_t n;
	uint64_t bytes;
	struct jpb_rec_decoded_thread th;
	int rc;
	char err[300]; /* the writer's message, when it failed */
};

struct mpool {
	struct jpd_ctx *ctx;
	struct tgroup *g, **order; /* order: largest first */
	size_t ng;
	atomic_size_t next;
};

static int write_thread(struct jpd_ctx *ctx, struct tgroup *g, struct jpb_buf *in)
{
	struct tout o = { .ctx = ctx };
	o.tev = jpb_rectype_find(JPB_REC_DECODED_EVENTS);
	o.tgap = jpb_rectype_find(JPB_REC_DECODED_GAP);
	o.th.tid = g->refs[0].p->tid;
	char name[64];
	snprintf(name, sizeof(name), "decoded/tid%u", o.th.tid);
	int rc = jpb_writer_open(ctx->b, name, &o.w);
	if (rc) /* not the bundle's errmsg: other workers may be setting it */
		snprintf(g->err, sizeof(g->err), "%s: cannot create: %s", name,
			 jpb_errstr(rc));
	else
		jpb_writer_set_nosync(o.w); /* derived data: see DECODER.md */
	for (size_t i = 0; i < g->n && !rc; i++)
		rc = copy_piece(&o, &g->refs[i], in);
	if (o.w) {
		/* flush first: a full disk's message dies with the writer */
		if (!rc)
			rc = jpb_writer_flush(o.w, 0);
		if (rc)
			snprintf(g->err, sizeof(g->err), "%s", jpb_writer_errmsg(o.w));
		int crc = jpb_writer_close(o.w);
		rc = rc ? rc : crc;
	}
	o.th.name = jpb_str_c(thread_name(&ctx->sched, o.th.tid));
	g->th = o.th;
	jpb_buf_fini(&o.scratch);
	return rc;
}

static void *merge_worker(void *arg)
{
	struct mpool *m = arg;
	struct jpb_buf in = { 0 };
	for (size_t i; (i = atomic_fetch_add(&m->next, 1)) < m->ng;)
		m->order[i]->rc = write_thread(m->ctx, m->order[i], &in);
	jpb_buf_fini(&in);
	return NULL;
}

static int cmp_bytes(const void *a, const void *b)
{
	const struct tgroup *x = *(struct tgroup *const *)a,
			    *y = *(struct tgroup *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Split the sorted refs into threads, biggest first for the workers. */
static int group_threads(struct pref *refs, size_t total, struct mpool *m)
{
	size_t ng = 0;
	for (size_t i = 0; i < total; i++)
		ng += !i || refs[i].p->tid != refs[i - 1].p->tid;
	m->g = calloc(ng + 1, sizeof(*m->g));
	m->order = calloc(ng + 1, sizeof(*m->order));
	if (!m->g || !m->order)
		return jpb_err_nomem;
	for (size_t i = 0; i < total; i++) {
		if (!i || refs[i].p->tid != refs[i - 1].p->tid)
			m->g[m->ng++].refs = refs + i;
		struct tgroup *g = &m->g[m->ng - 1];
		g->n++;
		g->bytes += refs[i].p->len;
	}
	for (size_t i = 0; i < m->ng; i++)
		m->order[i] = &m->g[i];
	qsort(m->order, m->ng, sizeof(*m->order), cmp_bytes);
	return 0;
}

static int merge(struct jpd_ctx *ctx, struct pool *pl, unsigned jobs,
		 struct jpb_writer *summary, struct jpd_summary *sum,
		 char *err, size_t errsize)
{
	size_t total = 0;
	for (size_t i = 0; i < pl->nchunks; i++)
		total += pl->chunks[i]->npieces;
	struct pref *refs = calloc(total + 1, sizeof(*refs));
	if (!refs)
		return jpb_err_nomem;
	size_t k = 0;
	for (size_t i = 0; i < pl->nchunks; i++)
		for (size_t j = 0; j < pl->chunks[i]->npieces; j++) {
			struct jpd_piece *p = &pl->chunks[i]->pieces[j];
			refs[k++] = (struct pref){ p, pl->workers[p->spill].spill };
		}
	qsort(refs, total, sizeof(*refs), cmp_pref);
	struct mpool m = { .ctx = ctx };
	int rc = group_threads(refs, total, &m);
	if (!rc)
		rc = run_threads(&m, jobs < m.ng ? jobs : (unsigned)m.ng, merge_worker);
	struct jpb_buf scratch = { 0 };
	const struct jpb_rectype *tth = jpb_rectype_find(JPB_REC_DECODED_THREAD);
	for (size_t i = 0; i < m.ng && !rc; i++) {
		rc = m.g[i].rc;
		if (rc && m.g[i].err[0])
			snprintf(err, errsize, "decode: %s", m.g[i].err);
		if (!rc)
			rc = jpb_writer_put_rec(summary, tth, 0, &m.g[i].th, &scratch);
		sum->threads += m.g[i].th.tid != 0;
	}
	jpb_buf_fini(&scratch);
	free(m.g);
	free(m.order);
	free(refs);
	return rc;
}

/* ---- driver ----------------------------------------------------------- */

static int list_pt(struct jpb_bundle *b, struct jpd_stream **out, size_t *n)
{
	const char *const *names;
	size_t count;
	int rc = jpb_bundle_list_streams(b, &names, &count);
	if (rc)
		return rc;
	struct jpd_stream *sts = calloc(count + 1, sizeof(*sts));
	if (!sts)
		return jpb_err_nomem;
	size_t k = 0;
	for (size_t i = 0; i < count; i++) {
		unsigned v;
		char c;
		if (sscanf(names[i], "pt/cpu%u%c", &v, &c) == 1) {
			sts[k].cpu = v;
		} else if (sscanf(names[i], "pt/tid%u%c", &v, &c) == 1) {
			sts[k].cpu = 100000 + (uint32_t)k; /* no CPU: unique id */
			sts[k].tid = v;
		} else {
			continue;
		}
		sts[k++].name = names[i];
	}
	*out = sts;
	*n = k;
	return 0;
}

static void clear_output(struct jpb_bundle *b)
{
	char dir[4096];
	if (jpb_bundle_path(b, "decoded", dir, sizeof(dir)))
		return;
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".jpb") &&
		    (!strncmp(e->d_name, "tid", 3) || !strcmp(e->d_name, "summary.jpb")))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* A stream's counts: its chunks', summed. */
static void sum_chunks(struct jpd_stream *s)
{
	for (size_t i = 0; i < s->nchunks; i++) {
		const struct jpd_counts *c = &s->chunks[i].n;
		s->n.blocks += c->blocks;
		s->n.events += c->events;
		s->n.gaps += c->gaps;
		s->n.errors += c->errors;
		s->n.unattributed += c->unattributed;
		s->n.switches += c->switches;
		s->n.interp += c->interp;
		s->n.compiled += c->compiled;
		s->n.transitions += c->transitions;
		for (int k = 0; k < 8; k++)
			s->n.gaps_by_cause[k] += c->gaps_by_cause[k];
		s->npieces += s->chunks[i].npieces;
	}
	s->n.errors += s->errors;
}

static int write_stream_summaries(struct jpb_writer *w, struct jpd_stream *sts,
				  size_t n, struct jpd_summary *sum)
{
	struct jpb_buf scratch = { 0 };
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct jpd_stream *s = &sts[i];
		sum_chunks(s);
		struct jpb_rec_decoded_stream r = {
			.stream = jpb_str_c(s->name), .cpu = s->cpu,
			.pt_bytes = s->pt_bytes,
			.events = s->n.events, .gaps = s->n.gaps, .errors = s->n.errors,
			.unattributed = s->n.unattributed, .pieces = s->npieces,
			.switches = s->n.switches,
		};
		rc = jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_DECODED_STREAM), 0,
					&r, &scratch);
		sum->pt_bytes += s->pt_bytes;
		sum->blocks += s->n.blocks;
		sum->events += s->n.events;
		sum->interp += s->n.interp;
		sum->compiled += s->n.compiled;
		sum->transitions += s->n.transitions;
		sum->gaps += s->n.gaps;
		sum->errors += s->n.errors;
		sum->unattributed += s->n.unattributed;
		sum->switches += s->n.switches;
		sum->aux_truncated += s->aux_truncated;
		for (int c = 0; c < 8; c++)
			sum->gaps_by_cause[c] += s->n.gaps_by_cause[c];
	}
	jpb_buf_fini(&scratch);
	return rc;
}

static void cleanup(struct jpd_ctx *ctx, struct jpd_stream *sts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jpd_stream_fini(&sts[i]);
	free(sts);
	if (ctx->img.codefile[0])
		unlink(ctx->img.codefile);
	jpd_image_fini(&ctx->img);
	jpd_sched_fini(&ctx->sched);
	rmdir(ctx->tmpdir);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int prepare(struct jpd_ctx *ctx, char *err, size_t errsize)
{
	char dir[2048];
	if (jpb_bundle_path(ctx->b, "decoded", dir, sizeof(dir)) ||
	    (mkdir(dir, 0755) && errno != EEXIST)) {
		snprintf(err, errsize, "decode: %s: %s", dir, strerror(errno));
		return jpb_err_io;
	}
	snprintf(ctx->tmpdir, sizeof(ctx->tmpdir), "%s/.tmp-%d", dir, (int)getpid());
	if (mkdir(ctx->tmpdir, 0700) && errno != EEXIST) {
		snprintf(err, errsize, "decode: %s: %s", ctx->tmpdir, strerror(errno));
		return jpb_err_io;
	}
	snprintf(ctx->img.codefile, sizeof(ctx->img.codefile), "%s/code.bin",
		 ctx->tmpdir);
	clear_output(ctx->b);
	jpd_config_from_meta(&ctx->base_cfg, ctx->b);
	ctx->sched.clock.tsc_per_ns = meta_tsc_per_ns(ctx->b);
	int rc = jpd_sched_load(&ctx->sched, ctx->b, err, errsize);
	return rc ? rc : jpd_image_load(&ctx->img, ctx->b, &ctx->sched.clock, err, errsize);
}

/* Prepare the streams (gather, scan, split) on the pool, then decode all
 * their chunks on it; every worker has its own section cache and spill. */
static int decode_streams(struct jpd_ctx *ctx, struct pool *p, unsigned jobs)
{
	/* BPF timestamps against PT: trust them to a few microseconds */
	const struct jpd_clock *clk = &ctx->sched.clock;
	uint64_t t0 = clk->n ? clk->ns[0] : 0;
	ctx->window = jpd_ns_to_tsc(clk, t0 + 5000) - jpd_ns_to_tsc(clk, t0);
	int rc = run_pool(p, jobs < p->nstreams ? jobs : (unsigned)p->nstreams,
			  prepare_worker);
	if (ctx->attribution != JPD_ATTR_TIME)
		jpd_continuity(ctx, p->streams, p->nstreams);
	for (size_t i = 0; i < p->nstreams; i++) {
		jpd_stream_chunk_states(ctx, &p->streams[i]);
		jpd_stream_drop_gaps(&p->streams[i]);
	}
	size_t total = 0;
	for (size_t i = 0; i < p->nstreams; i++)
		total += p->streams[i].nchunks;
	p->chunks = calloc(total + 1, sizeof(*p->chunks));
	if (!p->chunks)
		return jpb_err_nomem;
	/* the streams side by side, each in order */
	for (size_t k = 0, more = 1; more; k++) {
		more = 0;
		for (size_t i = 0; i < p->nstreams; i++)
			if (k < p->streams[i].nchunks) {
				p->chunks[p->nchunks++] = &p->streams[i].chunks[k];
				more = 1;
			}
	}
	p->nworkers = jobs < p->nchunks ? jobs : (unsigned)p->nchunks;
	p->workers = calloc(p->nworkers + 1, sizeof(*p->workers));
	if (!p->workers)
		return jpb_err_nomem;
	if (!rc)
		rc = open_workers(ctx, p->workers, p->nworkers);
	if (!rc)
		rc = run_pool(p, p->nworkers, chunk_worker);
	for (unsigned i = 0; i < p->nworkers && !rc; i++)
		if (fflush(p->workers[i].spill))
			rc = jpb_err_io;
	return rc;
}

/* A second warning goes after the first, not over it. */
static void add_warning(char *err, size_t errsize, const char *what)
{
	size_t len = strnlen(err, errsize);
	if (len + 3 < errsize)
		snprintf(err + len, errsize - len, "%s%s", len ? "; " : "", what);
}

int jpd_decode(struct jpb_bundle *b, const struct jpd_options *opt,
	       struct jpd_summary *sum, char *err, size_t errsize)
{
	double t0 = now_s();
	struct jpd_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return jpb_err_nomem;
	ctx->b = b;
	ctx->attribution = opt->attribution;
	ctx->chunk_bytes = opt->chunk_bytes ? opt->chunk_bytes : JPD_CHUNK_BYTES;
	memset(sum, 0, sizeof(*sum));
	struct jpd_stream *sts = NULL;
	size_t n = 0;
	int rc = prepare(ctx, err, errsize);
	if (!rc)
		rc = list_pt(b, &sts, &n);
	unsigned jobs = opt->jobs;
	if (!jobs) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		jobs = c > 0 ? (unsigned)c : 1;
	}
	struct pool p = { .ctx = ctx, .streams = sts, .nstreams = n, .opt = opt,
			  .progress_lock = PTHREAD_MUTEX_INITIALIZER };
	double t1 = now_s();
	if (!rc)
		rc = decode_streams(ctx, &p, jobs);
	sum->decode_seconds = now_s() - t1;
	for (size_t i = 0; i < n && !rc; i++)
		if (sts[i].rc) {
			snprintf(err, errsize, "%s", sts[i].err);
			rc = sts[i].rc;
		}
	for (size_t i = 0; i < p.nchunks && !rc; i++)
		if (p.chunks[i]->rc) {
			snprintf(err, errsize, "%s", p.chunks[i]->err);
			rc = p.chunks[i]->rc;
		}
	struct jpb_writer *w = NULL;
	if (!rc)
		rc = jpb_writer_open(b, "decoded/summary", &w);
	if (!rc) {
		jpb_writer_set_nosync(w);
		rc = write_stream_summaries(w, sts, n, sum);
	}
	if (!rc)
		rc = merge(ctx, &p, jobs, w, sum, err, errsize);
	if (w) {
		int crc = jpb_writer_close(w);
		rc = rc ? rc : crc;
	}
	if (rc && !err[0])
		snprintf(err, errsize, "decode: %s", jpb_errstr(rc));
	sum->streams = (unsigned)n;
	sum->chunks = p.nchunks;
	sum->nmethods = ctx->img.nnm;
	sum->missing_pcmaps = ctx->img.missing_pcmaps;
	sum->coarse_pcmaps = ctx->img.coarse_pcmaps;
	sum->zl_entries = ctx->img.zl_entries;
	sum->zl_loops = ctx->img.zl_loops;
	sum->unload_mismatch = ctx->img.unload_mismatch;
	sum->files = ctx->img.nfiles;
	sum->files_missing = ctx->img.files_missing;
	/* A damaged stream that still decoded up to its damage is not a
	 * failure; its message stays for the caller to print. */
	for (size_t i = 0; i < n && !rc; i++)
		if (sts[i].err[0])
			add_warning(err, errsize, sts[i].err);
	sum->jvm_damaged = ctx->img.jvm_damaged;
	if (!rc && ctx->img.jvm_damaged)
		add_warning(err, errsize, ctx->img.jvm_damage);
	close_workers(p.workers, p.nworkers);
	free(p.chunks);
	cleanup(ctx, sts, n);
	free(ctx);
	sum->seconds = now_s() - t0;
	return rc;
}
