// SPDX-License-Identifier: MIT
/* Packet decisions of one CPU's trace; libipt encodes the bytes. */
#include "ptenc.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define RETSTACK 32 /* below libipt's 64, so ours is always a suffix */

struct ptenc {
	struct ptenc_opts o;
	struct pt_encoder *enc;
	uint8_t scratch[64];
	struct jpb_buf data;
	uint64_t tsc_q16, now_ns;
	uint64_t last_tsc_ns; /* time of the last TSC packet written */
	uint64_t last_ctc;    /* crystal clock at the last TSC or MTC */
	uint64_t last_cyc;    /* core cycles at the last CYC or TSC */

	uint64_t last_ip;
	uint64_t tnt_bits;
	unsigned tnt_n;
	uint64_t rs[RETSTACK];
	unsigned rsn;
	int enabled;

	uint64_t since_psb;
	int psb_due;

	int dropping, forced, resumed;
	uint64_t losses, dropped;
	uint64_t ret_compressed, ret_tip;
	double occ;
	uint64_t occ_ns;

	uint64_t chunk_start;
	struct ptenc_chunk *chunks;
	size_t nchunks, cchunks;
};

struct ptenc *ptenc_new(const struct ptenc_opts *o, uint64_t tsc_q16)
{
	struct ptenc *e = xcalloc(1, sizeof(*e));
	e->o = *o;
	e->tsc_q16 = tsc_q16;
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = e->scratch;
	cfg.end = e->scratch + sizeof(e->scratch);
	e->enc = pt_alloc_encoder(&cfg);
	if (!e->enc)
		die_nomem();
	e->psb_due = 1; /* a stream starts with PSB+ */
	return e;
}

void ptenc_free(struct ptenc *e)
{
	if (!e)
		return;
	pt_free_encoder(e->enc);
	jpb_buf_fini(&e->data);
	free(e->chunks);
	free(e);
}

void ptenc_time(struct ptenc *e, uint64_t ns)
{
	e->now_ns = ns;
}

static void close_chunk(struct ptenc *e, uint32_t flags)
{
	uint64_t end = e->data.len;
	if (end == e->chunk_start && !flags)
		return;
	GROW(e->chunks, e->nchunks, e->cchunks);
	e->chunks[e->nchunks++] = (struct ptenc_chunk){
		e->chunk_start, end - e->chunk_start, e->now_ns, flags
	};
	e->chunk_start = end;
}

static void begin_drop(struct ptenc *e)
{
	if (e->dropping)
		return;
	e->dropping = 1;
	e->losses++;
	e->rsn = 0;
	e->tnt_n = 0;
	e->tnt_bits = 0;
	close_chunk(e, PTENC_TRUNCATED);
}

/* The consumer drains the AUX buffer at a constant rate. */
static void drain(struct ptenc *e)
{
	if (!e->o.buf_size)
		return;
	double d = e->o.drain_bpns * (double)(e->now_ns - e->occ_ns);
	e->occ = e->occ > d ? e->occ - d : 0;
	e->occ_ns = e->now_ns;
}

static void put(struct ptenc *e, const struct pt_packet *pkt)
{
	if (pt_enc_sync_set(e->enc, 0) < 0)
		die("ptenc: encoder reset failed");
	int n = pt_enc_next(e->enc, pkt);
	if (n < 0)
		die("ptenc: pt_enc_next: %s", pt_errstr(pt_errcode(n)));
	if (e->dropping) {
		e->dropped += (uint64_t)n;
		return;
	}
	if (e->o.buf_size) {
		drain(e);
		if (e->occ + n > (double)e->o.buf_size) {
			begin_drop(e);
			e->dropped += (uint64_t)n;
			return;
		}
		e->occ += n;
	}
	if (jpb_buf_put(&e->data, e->scratch, (size_t)n))
		die_nomem();
	e->since_psb += (uint64_t)n;
	if (e->o.psb_period && e->since_psb >= e->o.psb_period)
		e->psb_due = 1;
	if (e->o.aux_watermark &&
	    e->data.len - e->chunk_start >= e->o.aux_watermark)
		close_chunk(e, 0);
}

static void put_simple(struct ptenc *e, enum pt_packet_type t)
{
	struct pt_packet p = { .type = t };
	put(e, &p);
}

static uint64_t core_cycles(const struct ptenc *e)
{
	return e->now_ns * e->o.cbr / 10;
}

/* Before a CYC-eligible packet (TNT, TIP, TIP.PGE/PGD, MTC): the core
 * cycles since the last CYC.  The count restarts at each TSC, so a
 * decoder adding CYC time to the last TSC (as libipt does) gets the
 * model's time exactly, up to the cycle. */
static void put_cyc(struct ptenc *e)
{
	if (!e->o.cyc)
		return;
	uint64_t now = core_cycles(e);
	if (now <= e->last_cyc)
		return;
	struct pt_packet p = { .type = ppt_cyc };
	p.payload.cyc.value = now - e->last_cyc;
	e->last_cyc = now;
	put(e, &p);
}

static void flush_tnt(struct ptenc *e)
{
	if (!e->tnt_n)
		return;
	struct pt_packet p = { .type = e->tnt_n <= 6 ? ppt_tnt_8 : ppt_tnt_64 };
	p.payload.tnt.bit_size = (uint8_t)e->tnt_n;
	p.payload.tnt.payload = e->tnt_bits;
	e->tnt_n = 0;
	e->tnt_bits = 0;
	put_cyc(e);
	put(e, &p);
}

/* Choose the shortest IP compression the decoder can expand from its last
 * IP, as the hardware does. */
static void put_ip(struct ptenc *e, enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p = { .type = t };
	uint64_t l = e->last_ip;
	if ((ip >> 16) == (l >> 16)) {
		p.payload.ip.ipc = pt_ipc_update_16;
		p.payload.ip.ip = ip & 0xffff;
	} else if ((ip >> 32) == (l >> 32)) {
		p.payload.ip.ipc = pt_ipc_update_32;
		p.payload.ip.ip = ip & 0xffffffffull;
	} else {
		p.payload.ip.ipc = pt_ipc_sext_48;
		p.payload.ip.ip = ip & 0xffffffffffffull;
	}
	if (!e->dropping)
		e->last_ip = ip;
	if (t != ppt_fup)
		put_cyc(e);
	put(e, &p);
}

static void put_ip_suppressed(struct ptenc *e, enum pt_packet_type t)
{
	struct pt_packet p = { .type = t };
	p.payload.ip.ipc = pt_ipc_suppressed;
	put(e, &p);
}

/* With MTC on, a TSC is followed by TMA: the crystal clock's low 16 bits
 * at that TSC.  The TSC is taken at the crystal tick, so the fast counter
 * is 0 and MTC-derived time never runs ahead of the real time. */
static void put_tsc(struct ptenc *e)
{
	if (!e->o.tsc)
		return;
	struct pt_packet p = { .type = ppt_tsc };
	uint64_t ctc = e->now_ns / PTENC_NS_PER_CTC;
	p.payload.tsc.tsc = e->o.mtc ? ctc * PTENC_TSC_PER_CTC
				     : (e->now_ns * e->tsc_q16) >> 16;
	put(e, &p);
	if (e->o.mtc) {
		struct pt_packet t = { .type = ppt_tma };
		t.payload.tma.ctc = (uint16_t)ctc;
		t.payload.tma.fc = 0;
		put(e, &t);
		e->last_ctc = ctc;
	}
	if (!e->dropping) /* the time the packet says */
		e->last_tsc_ns = e->o.mtc ? ctc * PTENC_NS_PER_CTC : e->now_ns;
	e->last_cyc = e->o.mtc ? ctc * PTENC_NS_PER_CTC * e->o.cbr / 10
			       : core_cycles(e);
}

/* An MTC when the crystal clock crossed a 2^mtc_freq boundary since the
 * last TSC or MTC; its value is the boundary's, so never ahead of now. */
static void put_mtc(struct ptenc *e)
{
	if (!e->o.mtc || !e->o.tsc)
		return;
	uint64_t ctc = e->now_ns / PTENC_NS_PER_CTC;
	if ((ctc >> e->o.mtc_freq) == (e->last_ctc >> e->o.mtc_freq))
		return;
	/* branches before the boundary go out before it */
	flush_tnt(e);
	struct pt_packet p = { .type = ppt_mtc };
	p.payload.mtc.ctc = (uint8_t)(ctc >> e->o.mtc_freq);
	e->last_ctc = ctc;
	put_cyc(e);
	put(e, &p);
}

static void put_mode_exec(struct ptenc *e)
{
	struct pt_packet p = { .type = ppt_mode };
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	put(e, &p);
}

/* PSB+ resets the decoder's last IP; we also forget the return stack. */
static void put_psb(struct ptenc *e, uint64_t ip)
{
	flush_tnt(e);
	e->psb_due = 0;
	put_simple(e, ppt_psb);
	e->since_psb = 0;
	e->last_ip = 0;
	e->rsn = 0;
	put_tsc(e);
	struct pt_packet cbr = { .type = ppt_cbr };
	cbr.payload.cbr.ratio = e->o.cbr;
	put(e, &cbr);
	put_mode_exec(e);
	if (e->enabled)
		put_ip(e, ppt_fup, ip);
	put_simple(e, ppt_psbend);
}

/* End of a loss: OVF, then FUP where execution resumes if tracing is on. */
static int try_resume(struct ptenc *e, uint64_t ip)
{
	if (!e->dropping)
		return 0;
	if (e->forced)
		return 1;
	drain(e);
	if (e->o.buf_size && e->occ > (double)e->o.buf_size / 2)
		return 1;
	e->dropping = 0;
	e->resumed = 1;
	e->last_ip = 0;
	e->rsn = 0;
	put_simple(e, ppt_ovf);
	if (e->enabled)
		put_ip(e, ppt_fup, ip);
	return 0;
}

int ptenc_insn(struct ptenc *e, uint64_t ip)
{
	if (try_resume(e, ip))
		return 1;
	if (e->psb_due)
		put_psb(e, ip);
	else if (e->enabled)
		put_mtc(e);
	return e->dropping;
}

void ptenc_tnt(struct ptenc *e, int taken)
{
	if (e->dropping)
		return;
	e->tnt_bits = (e->tnt_bits << 1) | (taken ? 1u : 0u);
	if (++e->tnt_n == 47)
		flush_tnt(e);
}

void ptenc_tip(struct ptenc *e, uint64_t target)
{
	flush_tnt(e);
	put_ip(e, ppt_tip, target);
}

void ptenc_call(struct ptenc *e, uint64_t ret_addr)
{
	if (e->dropping || !e->o.retcomp)
		return;
	if (e->rsn == RETSTACK) {
		memmove(e->rs, e->rs + 1, (RETSTACK - 1) * sizeof(e->rs[0]));
		e->rsn--;
	}
	e->rs[e->rsn++] = ret_addr;
}

/* The decoder pops its return stack only on a compressed return, so a
 * mismatch clears ours: what remains is always the top of the decoder's. */
void ptenc_ret(struct ptenc *e, uint64_t target)
{
	if (e->o.retcomp && e->rsn && e->rs[e->rsn - 1] == target) {
		e->rsn--;
		e->ret_compressed += !e->dropping;
		ptenc_tnt(e, 1);
		return;
	}
	e->rsn = 0;
	e->ret_tip += !e->dropping;
	ptenc_tip(e, target);
}

void ptenc_pge(struct ptenc *e, uint64_t ip)
{
	try_resume(e, ip);
	if (e->psb_due)
		put_psb(e, ip);
	put_tsc(e);
	put_mode_exec(e);
	put_ip(e, ppt_tip_pge, ip);
	e->enabled = 1;
}

void ptenc_pgd(struct ptenc *e, uint64_t target)
{
	flush_tnt(e);
	put_ip(e, ppt_tip_pgd, target);
	e->enabled = 0;
	e->rsn = 0;
}

void ptenc_async_pgd(struct ptenc *e, uint64_t ip)
{
	flush_tnt(e);
	put_cyc(e); /* the TIP.PGD's, ahead of its FUP: they bind as a pair */
	put_ip(e, ppt_fup, ip);
	put_ip_suppressed(e, ppt_tip_pgd);
	e->enabled = 0;
	e->rsn = 0;
}

void ptenc_force_drop(struct ptenc *e, int on)
{
	if (on) {
		flush_tnt(e);
		e->forced = 1;
		begin_drop(e);
	} else {
		e->forced = 0;
	}
}

void ptenc_switch_in(struct ptenc *e)
{
	e->forced = 0;
}

int ptenc_enabled(const struct ptenc *e)
{
	return e->enabled;
}

uint64_t ptenc_last_tsc_ns(const struct ptenc *e)
{
	return e->last_tsc_ns;
}

int ptenc_dropping(const struct ptenc *e)
{
	return e->dropping;
}

int ptenc_take_resumed(struct ptenc *e)
{
	int r = e->resumed;
	e->resumed = 0;
	return r;
}

uint64_t ptenc_losses(const struct ptenc *e)
{
	return e->losses;
}

void ptenc_ret_stats(const struct ptenc *e, uint64_t *compressed, uint64_t *tip)
{
	*compressed = e->ret_compressed;
	*tip = e->ret_tip;
}

uint64_t ptenc_dropped_bytes(const struct ptenc *e)
{
	return e->dropped;
}

void ptenc_finish(struct ptenc *e)
{
	flush_tnt(e);
	close_chunk(e, 0);
}

const struct jpb_buf *ptenc_data(const struct ptenc *e)
{
	return &e->data;
}

const struct ptenc_chunk *ptenc_chunks(const struct ptenc *e, size_t *n)
{
	*n = e->nchunks;
	return e->chunks;
}
