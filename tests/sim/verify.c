// SPDX-License-Identifier: MIT
#include "verify.h"

#include <intel-pt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "records_jvm.h"
#include "records_pt.h"
#include "records_sched.h"
#include "simrec.h"
#include "util.h"

/* Code with its lifetime [load_ns, unload_ns) from the jvm stream: the
 * code cache reuses addresses, so the image is versioned by time. */
struct sect {
	uint64_t start;
	uint8_t *bytes;
	uint64_t size;
	uint64_t load_ns, unload_ns;
	int freed;
};

struct image {
	struct sect *s;
	size_t n, cap;
	/* the decoder reading through this image, for its time */
	struct pt_insn_decoder *insn;
	struct pt_block_decoder *blk;
	uint32_t mult, shift;
	uint64_t time_zero;
};

static void add_sect(struct image *im, uint64_t start, const uint8_t *p,
		     uint64_t size, uint64_t load_ns)
{
	GROW(im->s, im->n, im->cap);
	struct sect *s = &im->s[im->n++];
	s->start = start;
	s->size = size;
	s->bytes = xrealloc(NULL, size ? size : 1);
	memcpy(s->bytes, p, size);
	s->load_ns = load_ns;
	s->unload_ns = UINT64_MAX;
	s->freed = 0;
}

static void unload_sect(struct image *im, uint64_t start, uint64_t ns)
{
	for (size_t i = im->n; i-- > 0;)
		if (im->s[i].start == start && im->s[i].unload_ns == UINT64_MAX &&
		    im->s[i].load_ns != 0 && !im->s[i].freed) {
			im->s[i].unload_ns = ns;
			im->s[i].freed = 1;
			return;
		}
}

/* The decoder's time: its last TSC, through the ring's perf clock. */
static uint64_t decoder_ns(const struct image *im)
{
	uint64_t tsc = 0;
	if (im->insn)
		pt_insn_time(im->insn, &tsc, NULL, NULL);
	else if (im->blk)
		pt_blk_time(im->blk, &tsc, NULL, NULL);
	if (!im->shift && !im->mult)
		return tsc;
	return im->time_zero + (uint64_t)(((unsigned __int128)tsc * im->mult) >> im->shift);
}

/* The code at IP as of the decoder's time T: the version live at T, else
 * the first loaded after T (loaded since the last TSC), else the last. */
static const struct sect *pick(const struct image *im, uint64_t ip, uint64_t t)
{
	const struct sect *live = NULL, *next = NULL, *last = NULL;
	for (size_t i = 0; i < im->n; i++) {
		const struct sect *s = &im->s[i];
		if (ip < s->start || ip >= s->start + s->size)
			continue;
		if (s->load_ns <= t && t < s->unload_ns)
			live = s;
		else if (s->load_ns > t && (!next || s->load_ns < next->load_ns))
			next = s;
		if (!last || s->load_ns >= last->load_ns)
			last = s;
	}
	return live ? live : next ? next : last;
}

static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid,
		    uint64_t ip, void *ctx)
{
	(void)asid;
	const struct image *im = ctx;
	const struct sect *s = pick(im, ip, decoder_ns(im));
	if (!s)
		return -pte_nomap;
	uint64_t n = s->start + s->size - ip;
	if (n > size)
		n = size;
	memcpy(buf, s->bytes + (ip - s->start), n);
	return (int)n;
}

static int load_image(struct jpb_bundle *b, struct image *im)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, "jvm", &r);
	if (rc)
		return rc;
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		const struct jpb_rectype *t = jpb_rectype_find(rec.type);
		if (rec.type == JPB_REC_JVM_CODE_BLOB) {
			struct jpb_rec_jvm_code_blob cb;
			if ((rc = jpb_rec_decode(t, rec.payload, rec.size, &cb)))
				break;
			add_sect(im, cb.start, cb.code.ptr, cb.code.len, 0);
		} else if (rec.type == JPB_REC_JVM_NMETHOD_LOAD) {
			struct jpb_rec_jvm_nmethod_load nl;
			if ((rc = jpb_rec_decode(t, rec.payload, rec.size, &nl)))
				break;
			add_sect(im, nl.code_addr, nl.code.ptr, nl.code.len,
				 rec.time_ns);
		} else if (rec.type == JPB_REC_JVM_NMETHOD_UNLOAD) {
			struct jpb_rec_jvm_nmethod_unload nu;
			if ((rc = jpb_rec_decode(t, rec.payload, rec.size, &nu)))
				break;
			unload_sect(im, nu.code_addr, rec.time_ns);
		}
	}
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

static int load_stream(struct jpb_bundle *b, const char *name, uint16_t type,
		       struct jpb_buf *out, struct image *im)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, name, &r);
	if (rc)
		return rc;
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type == JPB_REC_PT_RING && im) {
			struct jpb_rec_pt_ring ring;
			if ((rc = jpb_rec_decode(jpb_rectype_find(rec.type),
						 rec.payload, rec.size, &ring)))
				break;
			im->mult = ring.time_mult;
			im->shift = ring.time_shift;
			im->time_zero = ring.time_zero;
		}
		if (rec.type == type) {
			const uint8_t *p = rec.payload;
			uint32_t n = rec.size;
			if (type == JPB_REC_PT_AUX_DATA) {
				struct jpb_rec_pt_aux_data d;
				if ((rc = jpb_rec_decode(jpb_rectype_find(type), p, n, &d)))
					break;
				p = d.data.ptr;
				n = d.data.len;
			}
			if (jpb_buf_put(out, p, n))
				die_nomem();
		}
	}
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

/* The truth, walked as the decoder reports instructions. */
struct cmp {
	const uint8_t *t;
	size_t n, k;
	const char *what;
	unsigned cpu;
	FILE *out;
	int bad;
	struct image *img;
};

static uint64_t tr(const struct cmp *c, size_t k)
{
	return jpb_le64(c->t + 8 * k) & ~SIM_ITRUTH_RESUME;
}

static void mismatch(struct cmp *c, uint64_t ip, const char *why)
{
	if (c->bad++)
		return;
	fprintf(c->out,
		"verify: cpu%u %s decoder: %s at truth index %zu: decoded %#llx, "
		"truth %#llx\n",
		c->cpu, c->what, why, c->k, (unsigned long long)ip,
		(unsigned long long)(c->k < c->n ? tr(c, c->k) : 0));
}

static void expect(struct cmp *c, uint64_t ip)
{
	if (c->bad)
		return;
	if (c->k >= c->n || tr(c, c->k) != ip)
		mismatch(c, ip, "instruction differs");
	c->k++;
}

/* After OVF the decoder resumes where the truth marks a resume. */
static void overflow(struct cmp *c)
{
	while (c->k < c->n && !(jpb_le64(c->t + 8 * c->k) & SIM_ITRUTH_RESUME))
		c->k++;
}

/* The decoder ran out of trace: fine where the truth says the trace ends
 * inside a loss with no resume after this point. */
static void ended(struct cmp *c)
{
	if (c->bad || c->k == c->n)
		return;
	if (c->n && jpb_le64(c->t + 8 * (c->n - 1)) == SIM_ITRUTH_LOST_END) {
		size_t k = c->k;
		while (k < c->n - 1 && !(jpb_le64(c->t + 8 * k) & SIM_ITRUTH_RESUME))
			k++;
		if (k == c->n - 1) {
			c->k = c->n;
			return;
		}
	}
	mismatch(c, 0, "decoder ended before the truth");
}

static void handle_event(struct cmp *c, const struct pt_event *ev,
			 struct verify_stats *st)
{
	switch (ev->type) {
	case ptev_overflow:
		st->overflows++;
		overflow(c);
		break;
	case ptev_enabled:
		st->enables++;
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		st->disables++;
		break;
	default:
		break;
	}
}

static int insn_pass(struct pt_config *cfg, struct pt_image *im, struct cmp *c,
		     struct verify_stats *st)
{
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(cfg);
	if (!d)
		die_nomem();
	pt_insn_set_image(d, im);
	c->img->insn = d;
	c->img->blk = NULL;
	int status = pt_insn_sync_forward(d);
	while (status >= 0 && !c->bad) {
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(d, &ev, sizeof(ev));
			if (status < 0)
				break;
			handle_event(c, &ev, st);
		}
		if (status < 0)
			break;
		struct pt_insn insn = { 0 };
		status = pt_insn_next(d, &insn, sizeof(insn));
		if (status < 0) {
			if (status == -pte_eos)
				break;
			mismatch(c, insn.ip, pt_errstr(pt_errcode(status)));
			break;
		}
		st->insns++;
		expect(c, insn.ip);
	}
	if (status < 0 && status != -pte_eos && !c->bad)
		mismatch(c, 0, pt_errstr(pt_errcode(status)));
	pt_insn_free_decoder(d);
	c->img->insn = NULL;
	ended(c);
	return c->bad;
}

static int block_pass(struct pt_config *cfg, struct pt_image *im, struct cmp *c,
		      struct verify_stats *st)
{
	struct pt_block_decoder *d = pt_blk_alloc_decoder(cfg);
	if (!d)
		die_nomem();
	pt_blk_set_image(d, im);
	c->img->insn = NULL;
	c->img->blk = d;
	struct verify_stats dummy = { 0 };
	int status = pt_blk_sync_forward(d);
	while (status >= 0 && !c->bad) {
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_blk_event(d, &ev, sizeof(ev));
			if (status < 0)
				break;
			handle_event(c, &ev, &dummy);
		}
		if (status < 0)
			break;
		struct pt_block blk = { 0 };
		status = pt_blk_next(d, &blk, sizeof(blk));
		if (status < 0 && status != -pte_eos) {
			mismatch(c, blk.ip, pt_errstr(pt_errcode(status)));
			break;
		}
		if (!blk.ninsn) {
			if (status == -pte_eos)
				break;
			continue;
		}
		st->blocks++;
		/* a block is ninsn consecutive truth instructions */
		if (c->k >= c->n || tr(c, c->k) != blk.ip)
			mismatch(c, blk.ip, "block start differs");
		else if (c->k + blk.ninsn > c->n ||
			 tr(c, c->k + blk.ninsn - 1) != blk.end_ip)
			mismatch(c, blk.end_ip, "block end differs");
		c->k += blk.ninsn;
		if (status == -pte_eos)
			break;
	}
	if (status < 0 && status != -pte_eos && !c->bad)
		mismatch(c, 0, pt_errstr(pt_errcode(status)));
	pt_blk_free_decoder(d);
	c->img->blk = NULL;
	ended(c);
	return c->bad;
}

static void count_ipc(const struct pt_packet_ip *ip, struct verify_stats *st)
{
	if (ip->ipc == pt_ipc_update_16)
		st->ip16++;
	else if (ip->ipc == pt_ipc_update_32)
		st->ip32++;
	else if (ip->ipc != pt_ipc_suppressed)
		st->ip48++;
}

static int packet_pass(struct pt_config *cfg, struct verify_stats *st, FILE *out,
		       unsigned cpu)
{
	struct pt_packet_decoder *d = pt_pkt_alloc_decoder(cfg);
	if (!d)
		die_nomem();
	int rc = pt_pkt_sync_set(d, 0);
	struct pt_packet p;
	while (rc >= 0 && (rc = pt_pkt_next(d, &p, sizeof(p))) >= 0) {
		switch (p.type) {
		case ppt_psb: st->psb++; break;
		case ppt_tnt_8:
		case ppt_tnt_64: st->tnt++; break;
		case ppt_tip: st->tip++; count_ipc(&p.payload.ip, st); break;
		case ppt_tip_pge: st->pge++; count_ipc(&p.payload.ip, st); break;
		case ppt_tip_pgd: st->pgd++; count_ipc(&p.payload.ip, st); break;
		case ppt_fup: st->fup++; count_ipc(&p.payload.ip, st); break;
		case ppt_ovf: st->ovf++; break;
		case ppt_tsc: st->tsc++; break;
		case ppt_mode: st->mode++; break;
		case ppt_cbr: st->cbr++; break;
		case ppt_mtc: st->mtc++; break;
		case ppt_tma: st->tma++; break;
		case ppt_cyc: st->cyc++; break;
		default: break;
		}
	}
	pt_pkt_free_decoder(d);
	if (rc == -pte_eos)
		return 0;
	fprintf(out, "verify: cpu%u packet decoder: %s\n", cpu,
		pt_errstr(pt_errcode(rc)));
	return 1;
}

/* libipt needs the crystal clock ratio and MTC period to use MTC
 * packets: from meta.json "pt", as the decoder would take them. */
static void timing_config(struct jpb_bundle *b, struct pt_config *cfg)
{
	void *meta;
	if (jpb_meta_load(b, &meta) || !meta)
		return;
	json_t *pt = json_object_get(meta, "pt");
	json_t *id = json_object_get(pt, "cpuid");
	json_t *conf = json_object_get(pt, "config");
	json_t *mtc = json_object_get(conf, "mtc");
	if (!json_is_true(mtc) && !(json_is_integer(mtc) && json_integer_value(mtc) > 0))
		return;
	cfg->cpuid_0x15_eax = (uint32_t)json_integer_value(
		json_object_get(id, "cpuid_0x15_eax"));
	cfg->cpuid_0x15_ebx = (uint32_t)json_integer_value(
		json_object_get(id, "cpuid_0x15_ebx"));
	cfg->mtc_freq = (uint8_t)json_integer_value(
		json_object_get(conf, "mtc_period"));
	cfg->nom_freq = (uint8_t)json_integer_value(
		json_object_get(pt, "max_nonturbo_ratio"));
}

static int verify_cpu(struct jpb_bundle *b, unsigned cpu, struct image *img,
		      FILE *out, struct verify_stats *st)
{
	char pt[32], it[40];
	snprintf(pt, sizeof(pt), "pt/cpu%u", cpu);
	snprintf(it, sizeof(it), "sim/itruth/cpu%u", cpu);
	struct jpb_buf trace = { 0 }, truth = { 0 };
	int rc = load_stream(b, pt, JPB_REC_PT_AUX_DATA, &trace, img);
	if (!rc)
		rc = load_stream(b, it, SIM_REC_ITRUTH, &truth, NULL);
	if (rc) {
		fprintf(out, "verify: %s: %s\n", it, jpb_errstr(rc));
		goto done;
	}
	st->truth += truth.len / 8;
	if (truth.len >= 8 &&
	    jpb_le64(truth.data + truth.len - 8) == SIM_ITRUTH_LOST_END)
		st->truth--;
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = trace.data;
	cfg.end = trace.data + trace.len;
	timing_config(b, &cfg);
	struct pt_image *im = pt_image_alloc("sim");
	pt_image_set_callback(im, read_mem, img);
	struct cmp c = { truth.data, truth.len / 8, 0, "insn", cpu, out, 0, img };
	if (trace.len)
		rc = packet_pass(&cfg, st, out, cpu);
	if (!rc && trace.len)
		rc = insn_pass(&cfg, im, &c, st);
	else if (c.n)
		mismatch(&c, 0, "no trace but instructions in the truth"), rc = 1;
	if (!rc && trace.len) {
		struct cmp cb = { truth.data, truth.len / 8, 0, "block", cpu, out, 0, img };
		rc = block_pass(&cfg, im, &cb, st);
	}
	pt_image_free(im);
done:
	jpb_buf_fini(&trace);
	jpb_buf_fini(&truth);
	return rc;
}

/* Switches, and threads that ran on more than one CPU (migrations). */
static int sched_stats(struct jpb_bundle *b, struct verify_stats *st)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, "sched", &r);
	if (rc)
		return rc;
	struct { uint32_t tid; uint64_t cpus; } seen[256];
	size_t nseen = 0;
	struct jpb_record rec;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		if (rec.type != JPB_REC_SCHED_SWITCH)
			continue;
		struct jpb_rec_sched_switch sw;
		if ((rc = jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					 rec.size, &sw)))
			break;
		st->switches++;
		if (!sw.next_tid)
			continue;
		size_t i = 0;
		while (i < nseen && seen[i].tid != sw.next_tid)
			i++;
		if (i == nseen && nseen < 256)
			seen[nseen++].tid = sw.next_tid, seen[i].cpus = 0;
		if (i < nseen)
			seen[i].cpus |= 1ull << (sw.cpu % 64);
	}
	for (size_t i = 0; i < nseen; i++)
		st->migrating_threads += __builtin_popcountll(seen[i].cpus) > 1;
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

int verify_bundle(struct jpb_bundle *b, FILE *out, struct verify_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct image img = { 0 };
	int rc = load_image(b, &img);
	if (rc) {
		fprintf(out, "verify: jvm: %s\n", jpb_errstr(rc));
		return rc;
	}
	const char *const *names;
	size_t n;
	rc = jpb_bundle_list_streams(b, &names, &n);
	unsigned cpus = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		unsigned cpu;
		if (sscanf(names[i], "pt/cpu%u", &cpu) == 1 && cpu + 1 > cpus)
			cpus = cpu + 1;
	}
	int bad = 0;
	st->cpus = cpus;
	if (!rc && (rc = sched_stats(b, st)))
		fprintf(out, "verify: sched: %s\n", jpb_errstr(rc));
	for (unsigned c = 0; !rc && c < cpus; c++) {
		int r = verify_cpu(b, c, &img, out, st);
		if (r < 0)
			rc = r;
		else
			bad |= r;
	}
	for (size_t i = 0; i < img.n; i++)
		free(img.s[i].bytes);
	free(img.s);
	return rc ? rc : bad;
}
