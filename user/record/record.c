// SPDX-License-Identifier: MIT
/* `jpbpf record`: the orchestration of BPF, procfs, clock and agent. */
#include "record/record.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "attach/attach.h"
#include "bundle.h"
#include "record/bpf_loader.h"
#include "record/clock.h"
#include "record/procfs.h"
#include "record/pt/pt.h"
#include "record/sched_events.h"
#include "records.h"
#include "records_sched.h"

#define POLL_MS 100
#define CLOCK_EVERY_NS 100000000ull /* a calibration pair each 100 ms */
#define CLOCK_TRIES 32
#define STATUS_EVERY_NS 1000000000ull
#define AGENT_FINISH_MS 5000

/* Set by SIGINT/SIGTERM: the one piece of process-wide state, because a
 * signal handler can reach nothing else. */
static volatile sig_atomic_t stop_requested;
/* Set by SIGUSR2: take a PT snapshot (snapshot mode). */
static volatile sig_atomic_t snapshot_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR2)
		snapshot_requested = 1;
	else
		stop_requested = 1;
}

struct thread_ent {
	uint32_t tid, nstid;
	int ended;
	char name[17]; /* comm */
	char java[128]; /* the agent's Java name, if any */
};

struct recorder {
	const struct jpb_record_opts *o;
	struct jpb_bundle *bundle;
	struct jpb_writer *sched;
	struct jpb_bpf *bpf;
	struct jpb_sched_sink sink;
	struct jpb_buf scratch;
	json_t *meta;    /* this recorder's keys of meta.json */
	json_t *missing; /* what the bundle lacks, one string each */
	struct thread_ent *threads;
	size_t nthreads, tcap;
	struct jpb_clock_pair_s *pairs;
	size_t npairs, pcap;
	struct jpb_agent_session *agent;
	struct jpb_pt_recorder *pt; /* NULL with --no-pt */
	int pidfd;
	uint64_t start_ns, stop_ns;
	uint64_t next_clock, next_status;
	const char *stop_reason;
	int target_exited;
	int usdt;
	int tsc_ok; /* jpb_clock_tsc_available(), asked once */
	uint64_t lost;
	uint64_t bytes; /* of stream sched, before the final records */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int put(struct recorder *r, uint16_t type, const void *rec)
{
	int err = jpb_writer_put_rec(r->sched, jpb_rectype_find(type), now_ns(),
				     rec, &r->scratch);
	if (err && !r->sink.err)
		r->sink.err = err;
	return err;
}

/* A fact the bundle must say: a NOTE record, a "missing" entry when it is
 * a gap, and a warning on stderr when it is one. */
static void note(struct recorder *r, uint32_t level, const char *missing,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void note(struct recorder *r, uint32_t level, const char *missing,
		 const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	struct jpb_rec_note n = { level, jpb_str_c("bpf"), jpb_str_c(text) };
	put(r, JPB_REC_NOTE, &n);
	if (missing) {
		char m[1100];
		snprintf(m, sizeof(m), "%s: %s", missing, text);
		json_array_append_new(r->missing, json_string(m));
	}
	if (level >= JPB_NOTE_WARN)
		fprintf(stderr, "jpbpf: warning: %s\n", text);
}

/* ---- threads ------------------------------------------------------- */

static struct thread_ent *thread_find(struct recorder *r, uint32_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	return NULL;
}

static struct thread_ent *thread_add(struct recorder *r, uint32_t tid)
{
	if (JPB_GROW(r->threads, r->nthreads, r->tcap))
		return NULL;
	struct thread_ent *t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

static void thread_record(struct recorder *r, uint32_t event,
			  const struct thread_ent *t)
{
	struct jpb_rec_thread th = { t->tid, t->nstid, (uint32_t)r->o->pid,
				     event, jpb_str_c(t->name) };
	put(r, JPB_REC_THREAD, &th);
}

/* The sink calls this for fork (START) and exit (END) of target threads. */
static void on_thread(void *ctx, uint32_t event, uint32_t tid, uint32_t nstid,
		      uint32_t tgid, const char *comm)
{
	struct recorder *r = ctx;
	if (tgid != (uint32_t)r->o->pid)
		return;
	struct thread_ent *t = thread_find(r, tid);
	if (event == JPB_THREAD_START && t)
		return; /* already listed from /proc: the seeding race */
	if (!t && !(t = thread_add(r, tid)))
		return;
	if (nstid)
		t->nstid = nstid;
	snprintf(t->name, sizeof(t->name), "%s", comm);
	t->ended = event == JPB_THREAD_END;
	thread_record(r, event, t);
	if (r->pt && event == JPB_THREAD_START)
		jpb_pt_recorder_add_thread(r->pt, (pid_t)tid);
	else if (r->pt && event == JPB_THREAD_END)
		jpb_pt_recorder_thread_exit(r->pt, (pid_t)tid);
}

static int seed_threads(struct recorder *r)
{
	uint32_t *tids;
	size_t n;
	int err = jpb_procfs_tids(r->o->pid, &tids, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (thread_find(r, tids[i]))
			continue;
		struct thread_ent *t = thread_add(r, tids[i]);
		if (!t)
			break;
		if (jpb_procfs_nstid(r->o->pid, t->tid, &t->nstid))
			t->nstid = 0;
		jpb_procfs_comm(r->o->pid, t->tid, t->name, sizeof(t->name));
		thread_record(r, JPB_THREAD_SEEN, t);
	}
	free(tids);
	return 0;
}

/* Threads renamed since they were listed (Java names its threads after
 * they start) get a NAME record with their final comm. */
static void rename_threads(struct recorder *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_ent *t = &r->threads[i];
		char name[17];
		if (t->ended || jpb_procfs_comm(r->o->pid, t->tid, name,
						sizeof(name)) != 0)
			continue;
		if (strcmp(name, t->name) != 0) {
			snprintf(t->name, sizeof(t->name), "%s", name);
			thread_record(r, JPB_THREAD_NAME, t);
		}
	}
}

/* The agent names Java threads (Thread.getName()), the kernel only knows
 * a 15-byte comm.  After the agent has finished, its thread records give
 * each nstid its Java name; a final NAME record here carries it into
 * "sched", so that stream is complete on its own and the Java name is the
 * last one readers see. */
static void java_names(struct recorder *r)
{
	struct jpb_reader *rd;
	struct jpb_record rec;
	struct jpb_rec_thread th;
	if (jpb_reader_open(r->bundle, "jvm", &rd) != 0)
		return;
	while (jpb_reader_next(rd, &rec) == 0) {
		if (rec.type != JPB_REC_THREAD ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
				   rec.size, &th) != 0 || !th.name.len)
			continue;
		for (size_t i = 0; i < r->nthreads; i++) {
			struct thread_ent *t = &r->threads[i];
			if ((th.tid && t->tid == th.tid) ||
			    (!th.tid && th.nstid && t->nstid == th.nstid))
				snprintf(t->java, sizeof(t->java), "%.*s",
					 (int)th.name.len, th.name.ptr);
		}
	}
	jpb_reader_free(rd);
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_ent *t = &r->threads[i];
		if (!t->java[0])
			continue;
		struct jpb_rec_thread n = { t->tid, t->nstid, (uint32_t)r->o->pid,
					    JPB_THREAD_NAME, jpb_str_c(t->java) };
		put(r, JPB_REC_THREAD, &n);
	}
}

/* ---- maps ---------------------------------------------------------- */

struct maps_ctx {
	struct recorder *r;
	struct jpb_writer *w;
	uint64_t n;
	int err;
};

static int put_map(const struct jpb_procfs_map *m, void *arg)
{
	struct maps_ctx *c = arg;
	if (!(m->prot & 4 /* PROT_EXEC */))
		return 0;
	struct jpb_rec_mmap rec = {
		.pid = (uint32_t)c->r->o->pid, .prot = m->prot,
		.start = m->start, .end = m->end, .pgoff = m->pgoff,
		.inode = m->inode, .dev_major = m->dev_major,
		.dev_minor = m->dev_minor, .path = jpb_str_c(m->path),
	};
	c->err = jpb_writer_put_rec(c->w, jpb_rectype_find(JPB_REC_MMAP),
				    now_ns(), &rec, &c->r->scratch);
	c->n++;
	return c->err;
}

static void write_maps(struct recorder *r)
{
	struct maps_ctx c = { r, NULL, 0, 0 };
	int err = jpb_writer_open(r->bundle, "maps", &c.w);
	if (err) {
		note(r, JPB_NOTE_ERROR, "maps", "cannot create stream maps: %s",
		     jpb_bundle_errmsg(r->bundle));
		return;
	}
	err = jpb_procfs_maps(r->o->pid, put_map, &c);
	if (err < 0 && !c.err)
		note(r, JPB_NOTE_WARN, "maps", "/proc/%d/maps: %s",
		     (int)r->o->pid, strerror(-err));
	err = jpb_writer_close(c.w);
	if (err)
		note(r, JPB_NOTE_ERROR, "maps", "writing stream maps: %s",
		     jpb_errstr(err));
	json_object_set_new(r->meta, "maps_records", json_integer((json_int_t)c.n));
}

/* ---- clock --------------------------------------------------------- */

static void clock_pair(struct recorder *r)
{
	struct jpb_clock_pair_s p;
	if (!r->tsc_ok || jpb_clock_sample(&p, CLOCK_TRIES))
		return;
	if (r->npairs == r->pcap) {
		size_t cap = r->pcap ? r->pcap * 2 : 256;
		struct jpb_clock_pair_s *v = realloc(r->pairs, cap * sizeof(*v));
		if (!v)
			return;
		r->pairs = v;
		r->pcap = cap;
	}
	r->pairs[r->npairs++] = p;
	struct jpb_rec_clock_pair rec = { p.tsc, p.mono_ns, p.window_ns, p.cpu };
	int err = jpb_writer_put_rec(r->sched, jpb_rectype_find(JPB_REC_CLOCK_PAIR),
				     p.mono_ns, &rec, &r->scratch);
	if (err && !r->sink.err)
		r->sink.err = err;
}

static json_t *clock_json(struct recorder *r)
{
	char why[128];
	json_t *c = json_object();
	json_object_set_new(c, "event_clock", json_string("CLOCK_MONOTONIC"));
	json_object_set_new(c, "event_source", json_string("bpf_ktime_get_ns"));
	json_object_set_new(c, "tsc_in_events", json_false());
	json_object_set_new(c, "tsc_in_events_why",
			    json_string("no BPF helper or kfunc of this kernel "
					"reads the TSC; convert with the "
					"clock_pair records (docs/CLOCK.md)"));
	json_object_set_new(c, "pairs", json_integer((json_int_t)r->npairs));
	if (jpb_clock_tsc_available(why, sizeof(why))) {
		json_object_set_new(c, "tsc", json_string(why));
		return c;
	}
	struct jpb_clock_fit f;
	if (jpb_clock_fit(r->pairs, r->npairs, &f) != 0)
		return c;
	json_t *fit = json_object();
	json_object_set_new(fit, "tsc0", json_integer((json_int_t)f.tsc0));
	json_object_set_new(fit, "mono0_ns", json_integer((json_int_t)f.mono0));
	json_object_set_new(fit, "ns_per_tick", json_real(f.ns_per_tick));
	json_object_set_new(fit, "offset_ns", json_real(f.offset_ns));
	json_object_set_new(fit, "max_residual_ns", json_real(f.max_residual_ns));
	json_object_set_new(fit, "rms_residual_ns", json_real(f.rms_residual_ns));
	json_object_set_new(fit, "max_window_ns", json_real(f.max_window_ns));
	json_object_set_new(fit, "monotonic", json_boolean(f.monotonic));
	json_object_set_new(fit, "formula",
			    json_string("mono_ns = mono0_ns + offset_ns + "
					"ns_per_tick * (tsc - tsc0)"));
	json_object_set_new(c, "tsc_to_mono", fit);
	return c;
}

/* ---- USDT and agent ------------------------------------------------ */

static void attach_usdt(struct recorder *r)
{
	char lib[4200], err[512];
	int rc = jpb_procfs_find_lib(r->o->pid, "libjvm.so", lib, sizeof(lib));
	json_t *u = json_object();
	if (rc) {
		note(r, JPB_NOTE_WARN, "usdt",
		     "pid %d has no libjvm.so mapped (not a HotSpot JVM?): "
		     "no USDT code-cache events, recording scheduling only",
		     (int)r->o->pid);
		json_object_set_new(u, "attached", json_false());
	} else if (jpb_bpf_attach_usdt(r->bpf, r->o->pid, lib, err,
				       sizeof(err)) != 0) {
		note(r, JPB_NOTE_WARN, "usdt", "%s: recording without "
		     "code-cache events", err);
		json_object_set_new(u, "attached", json_false());
		json_object_set_new(u, "binary", json_string(lib));
	} else {
		r->usdt = 1;
		json_object_set_new(u, "attached", json_true());
		json_object_set_new(u, "binary", json_string(lib));
	}
	json_object_set_new(r->meta, "usdt", u);
}

/* An agent call (attach or finish) runs on a helper thread while the
 * recorder's thread keeps draining the ring buffer: attaching retransforms
 * classes and may take seconds, which would otherwise overflow it. */
struct agent_job {
	struct recorder *r;
	int finish; /* 0: attach, 1: finish */
	const char *lib;
	int rc;
	char err[512];
	atomic_int done;
};

static void *agent_thread(void *arg)
{
	struct agent_job *j = arg;
	struct recorder *r = j->r;
	if (j->finish)
		j->rc = jpb_agent_finish(r->agent, AGENT_FINISH_MS, j->err,
					 sizeof(j->err));
	else
		j->rc = jpb_agent_attach(r->o->pid, j->lib,
					 jpb_bundle_dir(r->bundle), NULL,
					 &r->agent, j->err, sizeof(j->err));
	atomic_store(&j->done, 1);
	return NULL;
}

static void tick(struct recorder *r);

static void agent_call(struct recorder *r, struct agent_job *j)
{
	pthread_t th;
	atomic_init(&j->done, 0);
	if (pthread_create(&th, NULL, agent_thread, j) != 0) {
		agent_thread(j);
		return;
	}
	while (!atomic_load(&j->done)) {
		jpb_bpf_poll(r->bpf, 20);
		tick(r);
	}
	pthread_join(th, NULL);
}

static void attach_agent(struct recorder *r, int is_jvm)
{
	char lib[4096];
	struct agent_job j = { .r = r };
	json_t *a = json_object();
	json_object_set_new(r->meta, "agent", a);
	if (r->o->agent_path && !*r->o->agent_path) {
		json_object_set_new(a, "attached", json_false());
		json_object_set_new(a, "reason", json_string("--no-agent"));
		json_array_append_new(r->missing, json_string("agent: --no-agent"));
		return;
	}
	j.rc = -1;
	if (!is_jvm) {
		snprintf(j.err, sizeof(j.err), "not a JVM");
	} else if (!r->o->agent_path &&
		   jpb_agent_find_library(lib, sizeof(lib))) {
		snprintf(j.err, sizeof(j.err), "agent library not found next "
			 "to jpbpf or in $PREFIX/lib/jpbpf");
	} else {
		j.lib = r->o->agent_path ? r->o->agent_path : lib;
		agent_call(r, &j);
	}
	json_object_set_new(a, "attached", json_boolean(j.rc == 0));
	if (j.rc != 0) {
		json_object_set_new(a, "reason", json_string(j.err));
		note(r, JPB_NOTE_WARN, "agent", "agent not attached (%s): no "
		     "Java thread names, code bytes or debug info", j.err);
	}
}

static void finish_agent(struct recorder *r)
{
	struct agent_job j = { .r = r, .finish = 1 };
	if (!r->agent)
		return;
	/* The agent records until now: a decoder (and the tests) compare
	 * its code events with USDT's only before this time. */
	json_object_set_new(json_object_get(r->meta, "agent"), "finish_ns",
			    json_integer((json_int_t)now_ns()));
	agent_call(r, &j);
	if (j.rc != 0)
		note(r, JPB_NOTE_WARN, "agent", "agent finish: %s", j.err);
	jpb_agent_session_free(r->agent);
	r->agent = NULL;
}

/* ---- target and meta.json ------------------------------------------ */

static json_t *target_json(pid_t pid, int *is_jvm)
{
	char buf[4096], path[1024], lib[4200];
	uint32_t nspid;
	uint64_t cg;
	json_t *t = json_object();
	json_object_set_new(t, "pid", json_integer(pid));
	if (jpb_procfs_nstid(pid, (uint32_t)pid, &nspid) == 0)
		json_object_set_new(t, "nspid", json_integer(nspid));
	if (jpb_procfs_comm(pid, 0, buf, sizeof(buf)) == 0)
		json_object_set_new(t, "comm", json_string(buf));
	if (jpb_procfs_cmdline(pid, buf, sizeof(buf)) == 0)
		json_object_set_new(t, "cmdline", json_string(buf));
	if (jpb_procfs_cgroup_id(pid, &cg, path, sizeof(path)) == 0) {
		json_object_set_new(t, "cgroup_id", json_integer((json_int_t)cg));
		json_object_set_new(t, "cgroup", json_string(path));
	}
	*is_jvm = jpb_procfs_find_lib(pid, "libjvm.so", lib, sizeof(lib)) == 0;
	json_object_set_new(t, "jvm", json_boolean(*is_jvm));
	return t;
}

static json_t *lost_json(struct recorder *r)
{
	uint64_t lost[1024];
	size_t n = 1024;
	json_t *a = json_array();
	r->lost = 0;
	if (!r->bpf || jpb_bpf_lost(r->bpf, lost, &n) != 0)
		return a;
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(a, json_integer((json_int_t)lost[i]));
		r->lost += lost[i];
	}
	return a;
}

/* One LOSS record per CPU that dropped events, so the loss is in the
 * stream itself and not only in meta.json. */
static void write_losses(struct recorder *r, json_t *per_cpu)
{
	size_t i;
	json_t *v;
	json_array_foreach(per_cpu, i, v) {
		uint64_t n = (uint64_t)json_integer_value(v);
		if (!n)
			continue;
		struct jpb_rec_loss l = { jpb_str_c("ringbuf"), (uint32_t)i, n,
					  r->start_ns, r->stop_ns };
		put(r, JPB_REC_LOSS, &l);
	}
}

static int save_meta(struct recorder *r)
{
	void *cur = NULL;
	json_t *m;
	/* Another writer (the agent) may have added keys: keep them. */
	if (jpb_meta_load(r->bundle, &cur) == 0 && cur) {
		m = json_deep_copy(cur);
		json_object_update(m, r->meta);
	} else {
		m = json_incref(r->meta);
	}
	int err = jpb_meta_save(r->bundle, m);
	json_decref(m);
	return err;
}

static void meta_counts(struct recorder *r)
{
	json_t *rec = json_object_get(r->meta, "record");
	json_t *per_cpu = lost_json(r);
	json_object_set_new(rec, "stop_ns", json_integer((json_int_t)r->stop_ns));
	json_object_set_new(rec, "stop_reason", json_string(r->stop_reason));
	json_t *b = json_object();
	json_object_set_new(b, "events", json_integer((json_int_t)r->sink.n.events));
	json_object_set_new(b, "switches", json_integer((json_int_t)r->sink.n.switches));
	json_object_set_new(b, "forks", json_integer((json_int_t)r->sink.n.forks));
	json_object_set_new(b, "exits", json_integer((json_int_t)r->sink.n.exits));
	json_object_set_new(b, "execs", json_integer((json_int_t)r->sink.n.execs));
	json_object_set_new(b, "usdt_loads", json_integer((json_int_t)r->sink.n.loads));
	json_object_set_new(b, "usdt_unloads", json_integer((json_int_t)r->sink.n.unloads));
	json_object_set_new(b, "malformed", json_integer((json_int_t)r->sink.n.malformed));
	json_object_set_new(b, "lost", json_integer((json_int_t)r->lost));
	json_object_set(b, "lost_per_cpu", per_cpu);
	json_object_set_new(r->meta, "bpf", b);
	json_object_set_new(r->meta, "clock", clock_json(r));
	write_losses(r, per_cpu);
	json_decref(per_cpu);
}

/* ---- the drain loop ------------------------------------------------ */

static int on_event(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;
	return jpb_sched_sink_event(&r->sink, data, size) ? -1 : 0;
}

static int target_gone(struct recorder *r)
{
	if (r->pidfd >= 0) {
		struct pollfd p = { r->pidfd, POLLIN, 0 };
		return poll(&p, 1, 0) > 0;
	}
	return kill(r->o->pid, 0) != 0 && errno == ESRCH;
}

static void status(struct recorder *r, int last)
{
	uint64_t lost[1024];
	size_t n = 1024;
	uint64_t total = 0;
	if (jpb_bpf_lost(r->bpf, lost, &n) == 0)
		for (size_t i = 0; i < n; i++)
			total += lost[i];
	fprintf(stderr, "\rjpbpf: pid %d: %" PRIu64 " events, %" PRIu64
		" lost, %" PRIu64 " bytes%s", (int)r->o->pid, r->sink.n.events,
		total, jpb_writer_bytes(r->sched), last ? "\n" : "   ");
}

/* Periodic work between polls: calibration pairs, the status line. */
static void tick(struct recorder *r)
{
	uint64_t t = now_ns();
	if (t >= r->next_clock) {
		clock_pair(r);
		r->next_clock = t + CLOCK_EVERY_NS;
	}
	if (r->o->status_line && t >= r->next_status) {
		status(r, 0);
		r->next_status = t + STATUS_EVERY_NS;
	}
}

/* Wait for BPF events or PT wake-ups (AUX watermark, sideband), then
 * deliver both.  Without PT the ring buffer's own poll does it all. */
static int wait_events(struct recorder *r)
{
	if (!r->pt)
		return jpb_bpf_poll(r->bpf, POLL_MS);
	struct pollfd p[9] = { { jpb_bpf_fd(r->bpf), POLLIN, 0 } };
	int ptfds[8];
	size_t n = jpb_pt_recorder_fds(r->pt, ptfds, 8);
	n = n > 8 ? 8 : n;
	for (size_t i = 0; i < n; i++)
		p[i + 1] = (struct pollfd){ ptfds[i], POLLIN, 0 };
	if (poll(p, (nfds_t)n + 1, POLL_MS) < 0 && errno != EINTR)
		return -errno;
	if (snapshot_requested) {
		snapshot_requested = 0;
		jpb_pt_recorder_trigger(r->pt);
	}
	/* Draining never blocks, and it also acts on a pending snapshot
	 * trigger, so it runs on every wake-up, not only on PT's. */
	if (jpb_pt_recorder_drain(r->pt) != 0) {
		note(r, JPB_NOTE_ERROR, NULL, "pt: %s", jpb_pt_recorder_errmsg(r->pt));
		return -EIO;
	}
	return jpb_bpf_poll(r->bpf, 0);
}

static void drain_loop(struct recorder *r)
{
	uint64_t deadline = r->o->duration_ms ?
		r->start_ns + r->o->duration_ms * 1000000u : UINT64_MAX;
	for (;;) {
		int rc = wait_events(r);
		if (rc < 0 && rc != -EINTR) {
			r->stop_reason = r->sink.err ? "bundle write error"
					 : rc == -EIO ? "pt error" : "ring buffer error";
			break;
		}
		if (stop_requested) {
			r->stop_reason = "signal";
			break;
		}
		if (now_ns() >= deadline) {
			r->stop_reason = "duration";
			break;
		}
		if (target_gone(r)) {
			r->target_exited = 1;
			r->stop_reason = "target exited";
			break;
		}
		tick(r);
	}
	jpb_bpf_drain(r->bpf);
	if (r->o->status_line)
		status(r, 1);
}

/* ---- setup and teardown -------------------------------------------- */

static int check_target(pid_t pid, char *errmsg, size_t size)
{
	if (pid <= 0) {
		snprintf(errmsg, size, "pid %d: not a process id", (int)pid);
		return jpb_record_err_target;
	}
	if (kill(pid, 0) == 0)
		return 0;
	if (errno == EPERM) {
		snprintf(errmsg, size, "pid %d: not permitted to trace it "
			 "(run as root)", (int)pid);
		return jpb_record_err_env;
	}
	snprintf(errmsg, size, "pid %d: no such process", (int)pid);
	return jpb_record_err_target;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() must return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
}

static int open_bpf(struct recorder *r, char *errmsg, size_t size)
{
	struct jpb_bpf_opts bo = { r->o->btf_path, r->o->ringbuf_kb * 1024u,
				   r->o->cgroup, (uint32_t)r->o->pid };
	int err = jpb_bpf_open(&r->bpf, &bo, on_event, r, errmsg, size);
	if (err)
		return err == jpb_bpf_err_perm || err == jpb_bpf_err_btf
			       ? jpb_record_err_env : jpb_record_err_internal;
	return 0;
}

static int open_bundle(struct recorder *r, char *errmsg, size_t size)
{
	int err = jpb_bundle_create(&r->bundle, r->o->output);
	if (!err)
		err = jpb_writer_open(r->bundle, "sched", &r->sched);
	if (err) {
		snprintf(errmsg, size, "%s: %s", r->o->output,
			 r->bundle ? jpb_bundle_errmsg(r->bundle) : jpb_errstr(err));
		return jpb_record_err_io;
	}
	r->sink.w = r->sched;
	r->sink.on_thread = on_thread;
	r->sink.ctx = r;
	return 0;
}

static int trace_target(struct recorder *r, char *errmsg, size_t size)
{
	if (jpb_bpf_trace_tgid(r->bpf, (uint32_t)r->o->pid)) {
		snprintf(errmsg, size, "cannot add pid %d to the BPF filter",
			 (int)r->o->pid);
		return jpb_record_err_internal;
	}
	if (!r->o->cgroup)
		return 0;
	char path[1024];
	uint64_t id;
	if (jpb_procfs_cgroup_id(r->o->pid, &id, path, sizeof(path)) ||
	    jpb_bpf_trace_cgroup(r->bpf, id)) {
		snprintf(errmsg, size, "--cgroup: pid %d has no cgroup-v2 "
			 "cgroup to trace", (int)r->o->pid);
		return jpb_record_err_env;
	}
	return 0;
}

static void start(struct recorder *r)
{
	int is_jvm;
	json_t *rec = json_object();
	r->meta = json_object();
	r->missing = json_array();
	json_t *base = jpb_meta_new_base();
	json_object_update(r->meta, base);
	json_decref(base);
	json_object_set_new(r->meta, "target", target_json(r->o->pid, &is_jvm));
	json_object_set_new(rec, "tool", json_string("jpbpf record"));
	json_object_set_new(rec, "pt", json_boolean(r->o->pt_cfg != NULL));
	json_object_set_new(rec, "start_ns", json_integer((json_int_t)r->start_ns));
	json_object_set_new(rec, "duration_ms",
			    json_integer((json_int_t)r->o->duration_ms));
	json_object_set_new(rec, "cgroup_filter", json_boolean(r->o->cgroup));
	json_object_set_new(r->meta, "record", rec);
	if (!r->o->pt_cfg)
		json_array_append_new(r->missing,
				      json_string("pt: recorded with --no-pt"));
	char why[128];
	r->tsc_ok = jpb_clock_tsc_available(why, sizeof(why)) == 0;
	clock_pair(r);
	if (seed_threads(r))
		note(r, JPB_NOTE_WARN, "threads", "pid %d exited before its "
		     "threads could be listed", (int)r->o->pid);
	write_maps(r);
	attach_usdt(r);
	attach_agent(r, is_jvm);
	json_object_set(r->meta, "missing", r->missing);
	save_meta(r);
}

/* PT starts once the agent has exported the code already in the JVM. */
static int open_pt(struct recorder *r, char *errmsg, size_t size)
{
	if (!r->o->pt_cfg)
		return 0;
	struct jpb_pt_target t = { r->o->pid, "pt" };
	char why[512] = "";
	if (jpb_pt_recorder_open(&r->pt, r->bundle, r->o->pt_caps, r->o->pt_cfg,
			     &t, why, sizeof(why)) == 0)
		return 0;
	snprintf(errmsg, size, "Intel PT: %s", why);
	note(r, JPB_NOTE_ERROR, "pt", "cannot open Intel PT: %s", why);
	return jpb_record_err_env;
}

/* Stop PT, drain what is left, and put its figures in meta.json. */
static int finish_pt(struct recorder *r, uint64_t *bytes)
{
	if (!r->pt)
		return 0;
	int err = jpb_pt_recorder_stop(r->pt);
	struct jpb_pt_stats st;
	jpb_pt_recorder_stats(r->pt, &st);
	*bytes = st.bytes;
	json_t *m = jpb_pt_recorder_meta(r->pt);
	if (m)
		json_object_set_new(r->meta, "pt", m);
	if (err)
		note(r, JPB_NOTE_ERROR, "pt", "%s", jpb_pt_recorder_errmsg(r->pt));
	int cerr = jpb_pt_recorder_close(r->pt);
	r->pt = NULL;
	return err ? err : cerr;
}

/* Everything after the loop; returns the first bundle error. */
static int finish(struct recorder *r, uint64_t *pt_bytes)
{
	int pterr = finish_pt(r, pt_bytes);
	finish_agent(r);
	if (r->bpf && jpb_bpf_stop(r->bpf) < 0)
		note(r, JPB_NOTE_ERROR, "sched", "the last batches of context "
		     "switches could not be read from the kernel");
	clock_pair(r);
	rename_threads(r);
	java_names(r);
	r->stop_ns = now_ns();
	r->bytes = jpb_writer_bytes(r->sched);
	meta_counts(r);
	if (r->sink.n.malformed)
		note(r, JPB_NOTE_ERROR, NULL, "%" PRIu64 " malformed BPF "
		     "events skipped", r->sink.n.malformed);
	if (r->lost)
		note(r, JPB_NOTE_WARN, NULL, "%" PRIu64 " BPF events lost: ring "
		     "buffer full (see the loss records; --ringbuf-kb)", r->lost);
	json_object_set(r->meta, "missing", r->missing);
	int err = jpb_writer_close(r->sched);
	r->sched = NULL;
	json_object_set_new(json_object_get(r->meta, "bpf"), "bytes",
			    json_integer((json_int_t)r->bytes));
	int merr = save_meta(r);
	if (pterr)
		return jpb_err_io;
	return err ? err : merr;
}

static void cleanup(struct recorder *r)
{
	if (r->sched)
		jpb_writer_close(r->sched);
	jpb_sched_sink_fini(&r->sink);
	jpb_buf_fini(&r->scratch);
	jpb_bpf_free(r->bpf);
	jpb_bundle_free(r->bundle);
	json_decref(r->meta);
	json_decref(r->missing);
	free(r->threads);
	free(r->pairs);
	if (r->pidfd >= 0)
		close(r->pidfd);
}

int jpb_record_run(const struct jpb_record_opts *o,
		   struct jpb_record_result *res, char *errmsg, size_t size)
{
	struct recorder r = { .o = o, .pidfd = -1 };
	memset(res, 0, sizeof(*res));
	int err = check_target(o->pid, errmsg, size);
	if (!err)
		err = open_bpf(&r, errmsg, size);
	if (!err)
		err = open_bundle(&r, errmsg, size);
	if (!err) {
		r.pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
		stop_requested = 0;
		install_signals();
		r.start_ns = now_ns();
		r.next_clock = r.start_ns + CLOCK_EVERY_NS;
		r.next_status = r.start_ns + STATUS_EVERY_NS;
		err = trace_target(&r, errmsg, size);
	}
	if (!err) {
		start(&r);
		err = open_pt(&r, errmsg, size);
		if (!err)
			drain_loop(&r);
		else
			r.stop_reason = "pt could not be opened";
		int ferr = finish(&r, &res->pt_bytes);
		if (ferr && !err) {
			snprintf(errmsg, size, "%s: finishing the bundle: %s",
				 o->output, jpb_errstr(ferr));
			err = jpb_record_err_io;
		}
		if (!err && r.nthreads == 0) {
			snprintf(errmsg, size, "pid %d exited before recording "
				 "began (bundle %s says so)", (int)o->pid,
				 o->output);
			err = jpb_record_err_target;
		}
		res->bytes = r.bytes;
		res->events = r.sink.n.events;
		res->lost = r.lost;
		res->target_exited = r.target_exited;
		res->usdt = r.usdt;
		res->agent = json_is_true(json_object_get(
			json_object_get(r.meta, "agent"), "attached"));
	}
	cleanup(&r);
	return err;
}
