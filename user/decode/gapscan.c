// SPDX-License-Identifier: MIT
/*
 * A run's tracing gaps from its packets alone.  The reference scan
 * (stream.c) drives libipt's query decoder through every branch: about a
 * fifth of decode's instructions, nearly all of them spent on TNT bits
 * and TIPs that cannot start or end a gap.  Here libipt's packet decoder
 * reads the packets and the few parts of the query decoder's state that
 * decide its events are followed by hand: time (TSC, TMA, MTC, as
 * pt_time does without CYC), the last IP, the events waiting for the
 * packet they bind to (FUP, MODE.EXEC, PSB+ contents, an overflow's FUP)
 * and where the query decoder stands when it hands an event over (its
 * read-ahead), which names the chunk a gap falls in.
 *
 * It gives up (JPD_SCAN_UNSURE) on whatever it does not follow exactly:
 * CYC, packets it does not expect in user-space traces, anything the
 * query decoder would report as an error (it resynchronises there and
 * drops events), and the errata that rewrite an overflow.  The caller then
 * scans the run with the query decoder: the gap table is the same either
 * way (tests/tools/decode_gapcmp checks it).
 */
#include <string.h>

#include "decode.h"
#include "decode_int.h"

/* Events waiting for the TIP, TIP.PGE or TIP.PGD they bind to. */
enum { W_ASYNC, W_EXEC };
struct waiting {
	uint8_t kind, has_tsc;
	uint64_t tsc, from; /* the FUP's IP for W_ASYNC */
};

#define NWAIT 4u   /* the query decoder holds 8; more means damage */
#define NPEND 4u

struct pgap {
	uint64_t dis, en, dis_ip, en_ip;
	int async;
};

struct pscan {
	struct jpd_stream *st;
	const struct pt_config *cfg;
	struct pt_packet_decoder *pk, *ahead;
	uint64_t base, end; /* the run in the gathered bytes */
	/* time, as libipt's pt_time follows TSC, TMA and MTC */
	int have_tsc, have_tma, have_mtc;
	uint64_t tsc, tbase, fc;
	uint32_t ctc;
	/* the last IP, for IP compression */
	uint64_t ip;
	int have_ip, ip_sup;
	int enabled, header;
	int synced; /* libipt's read-ahead stopped once after the sync */
	/* inside pt_qry_event: a MODE.EXEC was read, no event handed over
	 * yet; libipt fails on a TNT there */
	int in_event;
	struct waiting wait[NWAIT];
	unsigned nwait;
	unsigned npsbend; /* PSB+ events handed over at PSBEND */
	int ovf_fup;      /* an overflow waits for its FUP */
	int ovf_has_tsc;
	uint64_t ovf_tsc;
	/* what stream.c's scan keeps between events */
	uint64_t last, dis, dis_ip;
	int off; /* 0 tracing, 1 async disabled, 2 disabled by a branch */
	/* gaps handed over, named by where the read-ahead stops next */
	struct pgap pend[NPEND];
	unsigned npend;
};

/* ---- time ------------------------------------------------------------ */

static void t_tsc(struct pscan *p, uint64_t tsc)
{
	p->have_tsc = 1;
	p->have_tma = p->have_mtc = 0;
	p->tsc = p->tbase = tsc;
	p->ctc = 0;
	p->fc = 0;
}

static int t_tma(struct pscan *p, const struct pt_packet_tma *t)
{
	/* libipt: a TMA without a TSC before it, or a second one, is an
	 * error (a resync) */
	if (!p->have_tsc || p->have_tma || p->have_mtc)
		return JPD_SCAN_UNSURE;
	uint32_t hi = p->cfg->mtc_freq + 8u;
	p->have_tma = 1;
	p->tbase -= t->fc;
	p->fc += t->fc;
	if (hi <= 16)
		p->have_mtc = 1;
	p->ctc = t->ctc & ((1u << hi) - 1u);
	return 0;
}

/* CTC ticks to TSC ticks: CPUID 0x15's ratio; without it libipt ignores
 * the MTC's time (a configuration error it only counts). */
static int t_mtc(struct pscan *p, uint8_t value)
{
	if (p->have_tsc && !p->have_tma)
		return 0; /* between TSC and TMA: ignored */
	uint32_t last = p->ctc, ctc = (uint32_t)value << p->cfg->mtc_freq;
	int had = p->have_mtc;
	p->have_mtc = 1;
	p->fc = 0;
	p->ctc = ctc;
	if (!had) {
		if (!p->have_tma)
			return 0; /* no idea where in its period tracing began */
		if (last & ~0xffffu)
			return JPD_SCAN_UNSURE;
		/* the bits above TMA's 16 come from this MTC, one period
		 * back if its low bits are behind TMA's */
		uint32_t hi = ctc & ~0xffffu;
		if ((ctc & 0xffffu) < last)
			hi = (hi - (1u << 16)) & (0xffu << p->cfg->mtc_freq);
		last |= hi;
	}
	uint32_t c = ctc;
	if (c < last) {
		c += 1u << (p->cfg->mtc_freq + 8u);
		if (c < last)
			return JPD_SCAN_UNSURE; /* libipt: an error */
	}
	uint32_t eax = p->cfg->cpuid_0x15_eax, ebx = p->cfg->cpuid_0x15_ebx;
	if (!eax || !ebx)
		return 0;
	p->tbase += (uint64_t)(c - last) * ebx / eax;
	p->tsc = p->tbase;
	return 0;
}

/* Whether PK is a timing packet; if so the time follows it, alike inside
 * a PSB+ header and outside one (pt_time does not tell them apart), and
 * RC is what following it gave. */
static int t_packet(struct pscan *p, const struct pt_packet *pk, int *rc)
{
	*rc = 0;
	switch (pk->type) {
	case ppt_tsc:
		t_tsc(p, pk->payload.tsc.tsc);
		return 1;
	case ppt_tma:
		*rc = t_tma(p, &pk->payload.tma);
		return 1;
	case ppt_mtc:
		*rc = t_mtc(p, pk->payload.mtc.ctc);
		return 1;
	default:
		return 0;
	}
}

/* ---- the last IP ------------------------------------------------------ */

static void ip_update(struct pscan *p, const struct pt_packet_ip *pk)
{
	uint64_t keep;
	switch (pk->ipc) {
	case pt_ipc_suppressed:
		p->ip_sup = 1;
		return;
	case pt_ipc_sext_48:
		p->ip = pk->ip & (1ull << 47) ? pk->ip | ~0xffffffffffffull
					       : pk->ip & 0xffffffffffffull;
		break;
	case pt_ipc_update_16:
		keep = ~0xffffull;
		p->ip = (p->ip & keep) | (pk->ip & ~keep);
		break;
	case pt_ipc_update_32:
		keep = ~0xffffffffull;
		p->ip = (p->ip & keep) | (pk->ip & ~keep);
		break;
	case pt_ipc_update_48:
		keep = ~0xffffffffffffull;
		p->ip = (p->ip & keep) | (pk->ip & ~keep);
		break;
	default: /* full (the packet decoder rejects the others) */
		p->ip = pk->ip;
		break;
	}
	p->have_ip = 1;
	p->ip_sup = 0;
}

static int ip_known(const struct pscan *p)
{
	return p->have_ip && !p->ip_sup;
}

/* ---- events, as stream.c's scan takes them ---------------------------- */

/* An event handed over with time TSC (if HAS): the time it is named by. */
static uint64_t event_time(struct pscan *p, int has, uint64_t tsc)
{
	p->in_event = 0;
	if (has)
		p->last = tsc;
	return p->last;
}

static uint64_t now(struct pscan *p)
{
	return event_time(p, p->have_tsc, p->tsc);
}

/* The gaps waiting for their offset get OFF. */
static int resolve(struct pscan *p, uint64_t off)
{
	int rc = 0;
	for (unsigned i = 0; i < p->npend && !rc; i++) {
		const struct pgap *g = &p->pend[i];
		rc = jpd_add_gap(p->st, g->dis, g->en, g->async, off, g->dis_ip,
				 g->en_ip);
	}
	p->npend = 0;
	return rc;
}

/* A gap whose offset is where the query decoder stops reading ahead
 * after handing it over (OFF: known now; UINT64_MAX: the next stop). */
static int gap(struct pscan *p, const struct pgap *g, uint64_t off)
{
	if (p->npend == NPEND)
		return JPD_SCAN_UNSURE;
	p->pend[p->npend++] = *g;
	return off == UINT64_MAX ? 0 : resolve(p, off);
}

/* Tracing resumes at IP: the gap since the disable (or since the last
 * event, without one) ends. */
static int enabled(struct pscan *p, uint64_t t, uint64_t ip, uint64_t off)
{
	struct pgap g = { p->off ? p->dis : t, t, p->off == 1 ? p->dis_ip : 0,
			  ip, p->off != 2 };
	p->off = 0;
	return gap(p, &g, off);
}

static int overflow(struct pscan *p, uint64_t t)
{
	struct pgap g = { t, t, 0, 0, JPD_GAP_OVERFLOW };
	return gap(p, &g, UINT64_MAX);
}

/* The events waiting for a TIP, TIP.PGE or TIP.PGD, in order. */
static void hand_waiting(struct pscan *p, int pgd)
{
	for (unsigned i = 0; i < p->nwait; i++) {
		const struct waiting *w = &p->wait[i];
		uint64_t t = event_time(p, w->has_tsc, w->tsc);
		if (pgd && w->kind == W_ASYNC) { /* an asynchronous disable */
			p->off = 1;
			p->dis = t;
			p->dis_ip = w->from;
		}
	}
	p->nwait = 0;
}

static int wait_for_tip(struct pscan *p, uint8_t kind, uint64_t from)
{
	if (p->nwait == NWAIT)
		return JPD_SCAN_UNSURE;
	p->wait[p->nwait++] = (struct waiting){ kind, (uint8_t)p->have_tsc,
						p->tsc, from };
	return 0;
}

/* ---- packets ---------------------------------------------------------- */

/* Whether the query decoder's read-ahead stops at this packet: a branch,
 * or a packet with an event to hand over. */
static int stops(const struct pscan *p, const struct pt_packet *pk)
{
	switch (pk->type) {
	case ppt_pad: case ppt_psb: case ppt_tsc: case ppt_tma: case ppt_mtc:
	case ppt_cyc: case ppt_unknown:
		return 0;
	case ppt_psbend:
		return p->npsbend > 0;
	case ppt_fup:
		return p->ovf_fup;
	default:
		return 1;
	}
}

/* Erratum BDM70: a FUP in PSB+ while disabled, with a TIP.PGE after it
 * and only status packets between, is no enable: libipt looks ahead. */
static int bdm70_applies(struct pscan *p, uint64_t after)
{
	if (pt_pkt_sync_set(p->ahead, after - p->base) < 0)
		return JPD_SCAN_UNSURE;
	for (;;) {
		struct pt_packet pk;
		int rc = pt_pkt_next(p->ahead, &pk, sizeof(pk));
		if (rc == -pte_eos)
			return 0;
		if (rc < 0)
			return JPD_SCAN_UNSURE;
		switch (pk.type) {
		case ppt_tip_pge:
			return 1;
		case ppt_pad: case ppt_tsc: case ppt_cbr: case ppt_psbend:
		case ppt_pip: case ppt_mode: case ppt_vmcs: case ppt_tma:
		case ppt_mtc: case ppt_cyc: case ppt_mnt:
			continue;
		default:
			return 0;
		}
	}
}

/* After an OVF: 1 if a FUP follows with only timing packets between
 * (the overflow resolved with tracing on), 0 if not, -1 if libipt would
 * report an error. */
static int ovf_fup_follows(struct pscan *p, uint64_t after)
{
	if (pt_pkt_sync_set(p->ahead, after - p->base) < 0)
		return -1;
	for (;;) {
		struct pt_packet pk;
		int rc = pt_pkt_next(p->ahead, &pk, sizeof(pk));
		if (rc == -pte_eos)
			return 0;
		if (rc < 0)
			return -1;
		switch (pk.type) {
		case ppt_fup:
			return 1;
		case ppt_pad: case ppt_mnt: case ppt_cbr: case ppt_tsc:
		case ppt_tma: case ppt_mtc: case ppt_cyc: case ppt_unknown:
			continue;
		case ppt_psbend: case ppt_tip: case ppt_tip_pgd:
		case ppt_tnt_8: case ppt_tnt_64: case ppt_invalid:
			return -1;
		default:
			return 0;
		}
	}
}

static int on_ovf(struct pscan *p, uint64_t after)
{
	/* libipt resets its state but the time */
	p->have_ip = p->ip_sup = 0;
	p->ip = 0;
	p->nwait = 0;
	p->ovf_fup = 0;
	p->header = 0;
	int fup = ovf_fup_follows(p, after);
	const struct pt_errata *e = &p->cfg->errata;
	if (fup < 0 || (fup == 0 && (e->skd010 || e->apl11)) || (fup > 0 && e->apl12))
		return JPD_SCAN_UNSURE;
	p->enabled = fup;
	if (!fup) { /* resolved while disabled: off until the next enable */
		uint64_t t = now(p);
		p->off = 1;
		p->dis = t;
		p->dis_ip = 0;
		return overflow(p, t);
	}
	p->ovf_fup = 1;
	p->ovf_has_tsc = p->have_tsc;
	p->ovf_tsc = p->tsc;
	return 0;
}

static int on_fup(struct pscan *p, const struct pt_packet *pk)
{
	ip_update(p, &pk->payload.ip);
	if (!ip_known(p))
		return JPD_SCAN_UNSURE;
	if (p->ovf_fup) { /* where the overflow resolved */
		p->ovf_fup = 0;
		return overflow(p, event_time(p, p->ovf_has_tsc, p->ovf_tsc));
	}
	return wait_for_tip(p, W_ASYNC, p->ip);
}

static int on_pge(struct pscan *p, const struct pt_packet *pk, uint64_t at)
{
	ip_update(p, &pk->payload.ip);
	if (!ip_known(p))
		return JPD_SCAN_UNSURE;
	for (unsigned i = 0; i < p->nwait; i++)
		if (p->wait[i].kind != W_EXEC)
			return JPD_SCAN_UNSURE; /* libipt: bad context */
	/* the enable comes first; with events still to hand over, libipt
	 * stays at this packet */
	int rc = enabled(p, now(p), p->ip, p->nwait ? at : UINT64_MAX);
	hand_waiting(p, 0);
	p->enabled = 1;
	return rc;
}

static void on_pgd(struct pscan *p, const struct pt_packet *pk)
{
	ip_update(p, &pk->payload.ip);
	if (p->nwait) {
		hand_waiting(p, 1);
	} else {
		p->dis = now(p);
		p->off = 2;
	}
	p->enabled = 0;
}

/* A packet between PSB and PSBEND, other than a timing packet. */
static int in_header(struct pscan *p, const struct pt_packet *pk, uint64_t at)
{
	switch (pk->type) {
	case ppt_pad:
		return 0;
	case ppt_cbr:
		if (!pk->payload.cbr.ratio)
			return JPD_SCAN_UNSURE;
		p->npsbend++;
		return 0;
	case ppt_mode:
		p->npsbend++;
		return 0;
	case ppt_fup:
		if (p->cfg->errata.bdm70 && !p->enabled) {
			int rc = bdm70_applies(p, at + pk->size);
			if (rc)
				return rc < 0 ? rc : 0;
		}
		ip_update(p, &pk->payload.ip);
		if (pk->payload.ip.ipc != pt_ipc_suppressed)
			p->enabled = 1;
		return 0;
	case ppt_psbend:
		p->header = 0;
		if (p->npsbend)
			now(p); /* its events, all at this time */
		p->npsbend = 0;
		return 0;
	case ppt_ovf: /* ends the header too */
		if (p->npsbend)
			now(p);
		p->npsbend = 0;
		return on_ovf(p, at + pk->size);
	default:
		return JPD_SCAN_UNSURE; /* libipt: bad context */
	}
}

static int on_packet(struct pscan *p, const struct pt_packet *pk, uint64_t at)
{
	int rc;
	if (t_packet(p, pk, &rc))
		return rc;
	if (p->header)
		return in_header(p, pk, at);
	switch (pk->type) {
	case ppt_pad:
	case ppt_psbend: /* outside a header: nothing to hand over */
		return 0;
	case ppt_tnt_8:
	case ppt_tnt_64:
		return pk->payload.tnt.bit_size && !p->in_event ? 0 : JPD_SCAN_UNSURE;
	case ppt_tip:
		ip_update(p, &pk->payload.ip);
		hand_waiting(p, 0);
		return 0;
	case ppt_cbr:
		if (!pk->payload.cbr.ratio)
			return JPD_SCAN_UNSURE;
		now(p); /* a standalone event */
		return 0;
	case ppt_mode:
		if (pk->payload.mode.leaf != pt_mol_exec)
			return JPD_SCAN_UNSURE;
		p->in_event = 1;
		return wait_for_tip(p, W_EXEC, 0);
	case ppt_psb:
		p->header = 1;
		p->have_ip = p->ip_sup = 0;
		p->ip = 0;
		return 0;
	case ppt_fup:
		return on_fup(p, pk);
	case ppt_tip_pge:
		return on_pge(p, pk, at);
	case ppt_tip_pgd:
		on_pgd(p, pk);
		return 0;
	case ppt_ovf:
		return on_ovf(p, at + pk->size);
	default:
		return JPD_SCAN_UNSURE;
	}
}

/* TNT-8 and TIP are most of a trace's packets, and only a TIP changes
 * anything here (the last IP, events waiting for it), so they are read in
 * place (Intel SDM, "Packet Descriptions") and the rest by libipt: from
 * AT on, the branches up to the first other packet (or a cut one, or a
 * TIP with a reserved IP compression: libipt says what they are).  Both
 * stop the query decoder's read-ahead. */
static uint64_t skip_branches(struct pscan *p, uint64_t at, int *rc)
{
	/* by IP compression: payload bytes (0xff: reserved), bits kept */
	static const uint8_t ipbytes[8] = { 0, 2, 4, 6, 6, 0xff, 8, 0xff };
	static const uint64_t keep[8] = { 0, ~0xffffull, ~0xffffffffull, 0,
					  ~0xffffffffffffull, 0, 0, 0 };
	const uint8_t *buf = p->st->buf;
	while (at < p->end) {
		uint8_t b = buf[at];
		unsigned size = 1;
		if (b & 1 || b <= 2 || p->in_event) { /* not a TNT-8 with a bit */
			if ((b & 0x1f) != 0x0d)
				break; /* not a TIP */
			unsigned ipc = b >> 5, n = ipbytes[ipc];
			if (n == 0xff || n >= p->end - at)
				break;
			uint64_t ip = 0;
			for (unsigned i = n; i > 0; i--)
				ip = ip << 8 | buf[at + i];
			if (ipc == pt_ipc_suppressed) {
				p->ip_sup = 1;
			} else {
				if (ipc == pt_ipc_sext_48 && ip & (1ull << 47))
					ip |= ~0xffffffffffffull;
				p->ip = (p->ip & keep[ipc]) | ip;
				p->have_ip = 1;
				p->ip_sup = 0;
			}
			if (p->nwait)
				hand_waiting(p, 0);
			size = n + 1;
		}
		p->synced = 1;
		if (p->npend && (*rc = resolve(p, at)))
			break;
		at += size;
	}
	return at;
}

/* Where the query decoder's read-ahead stops in a packet cut by the run's
 * end at AT: at it if its opcode says it stops there (or the opcode
 * itself is cut), else past it (libipt skips a cut status packet). */
static uint64_t cut_stop(const struct pscan *p, uint64_t at)
{
	const uint8_t *b = p->st->buf + at;
	uint64_t left = p->end - at;
	if (!left || p->header)
		return p->end;
	if (b[0] == 0x02) { /* extended: PSB and TMA are no stop */
		if (left < 2)
			return at;
		return b[1] == 0x82 || b[1] == 0x73 ? p->end : at;
	}
	if (b[0] == 0x19 || b[0] == 0x59 || (b[0] & 3) == 3) /* TSC, MTC, CYC */
		return p->end;
	if ((b[0] & 0x1f) == 0x1d && !p->ovf_fup) /* a FUP, read ahead */
		return p->end;
	return at;
}

static int scan_packets(struct pscan *p)
{
	if (pt_pkt_sync_forward(p->pk) < 0)
		return JPD_SCAN_UNSURE; /* no PSB: the reference scan says what */
	/* the run's start: the query decoder names it by its time before
	 * any query, which it has not taken yet */
	int rc = jpd_add_gap(p->st, 0, 0, 1, p->base, 0, 0);
	uint64_t dropped = p->base, at = 0;
	pt_pkt_get_offset(p->pk, &at);
	at += p->base;
	while (!rc) {
		jpd_stream_drop_behind(p->st, &dropped, at);
		if (!p->header) {
			uint64_t next = skip_branches(p, at, &rc);
			if (rc)
				break;
			if (next != at &&
			    pt_pkt_sync_set(p->pk, next - p->base) < 0)
				return JPD_SCAN_UNSURE;
			at = next;
		}
		struct pt_packet pk;
		int st = pt_pkt_next(p->pk, &pk, sizeof(pk));
		/* libipt's sync fails if its first read-ahead runs out */
		if (st == -pte_eos && p->synced) {
			rc = resolve(p, cut_stop(p, at));
			break;
		}
		if (st < 0)
			return JPD_SCAN_UNSURE;
		if (p->header ? pk.type == ppt_ovf || (pk.type == ppt_psbend && p->npsbend)
			      : stops(p, &pk)) {
			p->synced = 1;
			rc = resolve(p, at);
		}
		if (!rc)
			rc = on_packet(p, &pk, at);
		at += (unsigned)st;
	}
	if (!rc)
		rc = resolve(p, p->end);
	if (!rc) /* the run's end, as stream.c's scan adds it */
		rc = jpd_add_gap(p->st, p->off == 1 ? p->dis : p->last, JPD_RUN_END,
				 1, p->end, p->off == 1 ? p->dis_ip : 0, 0);
	jpd_stream_drop(p->st, dropped, p->end);
	return rc;
}

int jpd_scan_packets(struct jpd_ctx *ctx, struct jpd_stream *st,
		     const struct jpd_run *rn)
{
	struct pt_config cfg = jpd_stream_config(ctx, st, rn->begin, rn->end);
	struct pscan p = { .st = st, .cfg = &cfg, .base = rn->begin, .end = rn->end };
	p.pk = pt_pkt_alloc_decoder(&cfg);
	p.ahead = pt_pkt_alloc_decoder(&cfg);
	int rc = p.pk && p.ahead ? scan_packets(&p) : jpb_err_nomem;
	pt_pkt_free_decoder(p.ahead);
	pt_pkt_free_decoder(p.pk);
	return rc;
}
