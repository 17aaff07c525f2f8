// SPDX-License-Identifier: MIT
/* The tracing gap scan from packets (user/decode/gapscan.c) against its
 * reference, libipt's query decoder (stream.c): packet sequences made
 * with libipt's encoder, each scanned both ways; the gap tables (times,
 * offsets, IPs, kinds) must be the same, and the packet scan must keep
 * the runs it can follow (no fallback) and give up the others.  Every
 * prefix of a sequence (a run cut anywhere) and every one-bit flip of it
 * (damage) must give the same table too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "decode/decode_int.h"

struct table {
	size_t n, fallbacks;
	uint64_t v[256][6]; /* dis, en, goff, dis_ip, en_ip, async */
};

static struct pt_errata errata; /* per test */
static int mtc;                 /* MTC timing configured */
static char what[64];           /* the damage being tried */

/* A stream of LEN bytes, two runs if CUT (the second after a hole). */
static struct jpd_stream *scan_stream(const uint8_t *bytes, size_t len, size_t cut, int mode,
				      int *rc)
{
	static char dir[64];
	char path[96];
	snprintf(dir, sizeof(dir), "/tmp/test_gapscan-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pt.bin", dir);
	FILE *f = fopen(path, "w+");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	fflush(f);
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fileno(f), 0);
	assert_true(map != MAP_FAILED);
	fclose(f);
	unlink(path);
	static struct jpd_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	pt_config_init(&ctx.base_cfg);
	ctx.base_cfg.errata = errata;
	if (mtc) {
		ctx.base_cfg.mtc_freq = 3;
		ctx.base_cfg.cpuid_0x15_eax = 2;
		ctx.base_cfg.cpuid_0x15_ebx = 168;
	}
	snprintf(ctx.tmpdir, sizeof(ctx.tmpdir), "%s", dir);
	ctx.scan = mode;
	static struct jpd_stream st;
	st = (struct jpd_stream){ .name = "pt/cpu0", .buf = map, .size = len };
	st.runs = calloc(2, sizeof(*st.runs));
	assert_non_null(st.runs);
	st.runs[0] = (struct jpd_run){ 0, cut ? cut : len, 0, 0 };
	st.runs[1] = (struct jpd_run){ cut, len, 1, 0 };
	st.nruns = cut ? 2 : 1;
	*rc = jpd_stream_scan(&ctx, &st);
	rmdir(dir);
	return &st;
}

static int scan(const uint8_t *bytes, size_t len, int mode, struct table *t)
{
	int rc;
	struct jpd_stream *st = scan_stream(bytes, len, 0, mode, &rc);
	memset(t, 0, sizeof(*t));
	if (!rc) {
		assert_true(st->ngaps <= 256);
		t->n = st->ngaps;
		t->fallbacks = st->scan_fallbacks;
		for (size_t i = 0; i < st->ngaps; i++) {
			const uint64_t row[6] = { st->dis[i], st->en[i], st->goff[i],
						  st->dis_ip[i], st->en_ip[i], st->async[i] };
			memcpy(t->v[i], row, sizeof(row));
		}
	}
	jpd_stream_fini(st);
	return rc;
}

/* Scans both ways; returns the packet scan's fallbacks. */
static size_t same(const uint8_t *bytes, size_t len, size_t *ngaps)
{
	static struct table q, p;
	int rq = scan(bytes, len, JPD_SCAN_QUERY, &q);
	int rp = scan(bytes, len, JPD_SCAN_AUTO, &p);
	if (rq != rp || q.n != p.n) {
		print_error("%s len %zu: query rc %d, %zu gaps; packets rc %d, %zu gaps\n",
			    what, len, rq, q.n, rp, p.n);
		fail();
	}
	for (size_t i = 0; i < q.n; i++)
		for (int k = 0; k < 6; k++)
			if (q.v[i][k] != p.v[i][k]) {
				print_error("%s len %zu gap %zu column %d: query %llx, packets %llx\n",
					    what, len, i, k, (unsigned long long)q.v[i][k],
					    (unsigned long long)p.v[i][k]);
				fail();
			}
	if (ngaps)
		*ngaps = q.n;
	return p.fallbacks;
}

/* ---- packet sequences -------------------------------------------------- */

struct seq {
	uint8_t buf[1u << 17];
	struct pt_encoder *e;
};

static void seq_init(struct seq *s)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = s->buf;
	cfg.end = s->buf + sizeof(s->buf);
	s->e = pt_alloc_encoder(&cfg);
	assert_non_null(s->e);
}

static size_t seq_len(struct seq *s)
{
	uint64_t off = 0;
	pt_enc_get_offset(s->e, &off);
	pt_free_encoder(s->e);
	return off;
}

static void put(struct seq *s, struct pt_packet p)
{
	assert_true(pt_enc_next(s->e, &p) > 0);
}

#define PK(T) (struct pt_packet){ .type = (T) }
static struct pt_packet ipk(enum pt_packet_type t, enum pt_ip_compression c, uint64_t ip)
{
	struct pt_packet p = { .type = t };
	p.payload.ip.ipc = c;
	p.payload.ip.ip = ip;
	return p;
}
static struct pt_packet tsc(uint64_t v)
{
	struct pt_packet p = { .type = ppt_tsc };
	p.payload.tsc.tsc = v;
	return p;
}
static struct pt_packet cbr(uint8_t r)
{
	struct pt_packet p = { .type = ppt_cbr };
	p.payload.cbr.ratio = r;
	return p;
}
static struct pt_packet exec64(void)
{
	struct pt_packet p = { .type = ppt_mode };
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	return p;
}
static struct pt_packet tnt(uint8_t bits, uint64_t v)
{
	struct pt_packet p = { .type = ppt_tnt_8 };
	p.payload.tnt.bit_size = bits;
	p.payload.tnt.payload = v;
	return p;
}
static struct pt_packet mtcp(uint8_t ctc)
{
	struct pt_packet p = { .type = ppt_mtc };
	p.payload.mtc.ctc = ctc;
	return p;
}
static struct pt_packet tma(uint16_t ctc, uint16_t fc)
{
	struct pt_packet p = { .type = ppt_tma };
	p.payload.tma.ctc = ctc;
	p.payload.tma.fc = fc;
	return p;
}

static void header(struct seq *s, uint64_t t, int fup, uint64_t ip)
{
	put(s, PK(ppt_psb));
	put(s, tsc(t));
	if (mtc)
		put(s, tma(0x1234, 17));
	put(s, cbr(20));
	put(s, exec64());
	if (fup)
		put(s, ipk(ppt_fup, pt_ipc_full, ip));
	put(s, PK(ppt_psbend));
}

/* Enables, synchronous and asynchronous disables, TIPs and MODE.EXEC
 * waiting for their TIP, a PGD with only a MODE.EXEC waiting. */
static size_t seq_flow(struct seq *s)
{
	seq_init(s);
	header(s, 1000, 0, 0);
	put(s, exec64());
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	put(s, tnt(3, 5));
	put(s, ipk(ppt_tip, pt_ipc_update_16, 0x1234));
	put(s, tsc(2000));
	put(s, ipk(ppt_fup, pt_ipc_update_32, 0x401100));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, tsc(3000));
	put(s, exec64());
	put(s, ipk(ppt_tip_pge, pt_ipc_sext_48, 0x401200));
	put(s, tnt(1, 1));
	put(s, ipk(ppt_tip_pgd, pt_ipc_update_16, 0x5000));
	put(s, tsc(4000));
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401300));
	put(s, cbr(21));
	put(s, tnt(6, 0x2a));
	put(s, exec64());
	put(s, ipk(ppt_tip, pt_ipc_update_32, 0x402000));
	put(s, ipk(ppt_fup, pt_ipc_update_16, 0x2010));
	put(s, ipk(ppt_tip, pt_ipc_full, 0x403000));
	put(s, tnt(2, 1));
	put(s, exec64());
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, tsc(5000));
	put(s, ipk(ppt_tip_pge, pt_ipc_update_16, 0x3000));
	put(s, tnt(2, 2));
	return seq_len(s);
}

/* PSB+ right after an enable and after a disable: the query decoder's
 * read-ahead runs into them (the offset a gap is named by). */
static size_t seq_psb(struct seq *s)
{
	seq_init(s);
	header(s, 1000, 0, 0);
	put(s, tsc(1500));
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	put(s, PK(ppt_pad));
	header(s, 1600, 1, 0x401000);
	put(s, tnt(4, 9));
	put(s, ipk(ppt_tip, pt_ipc_full, 0x404000));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, tsc(1700));
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	/* a PSB+ without events to hand over at its PSBEND */
	put(s, PK(ppt_psb));
	put(s, tsc(1800));
	put(s, ipk(ppt_fup, pt_ipc_full, 0x401000));
	put(s, PK(ppt_psbend));
	put(s, tsc(1900));
	put(s, tnt(1, 0));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	header(s, 2000, 0, 0);
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x405000));
	put(s, tnt(1, 1));
	return seq_len(s);
}

/* Overflows: resolved with tracing on (FUP), off (TIP.PGE), inside a
 * PSB+, and at the end. */
static size_t seq_ovf(struct seq *s)
{
	seq_init(s);
	header(s, 1000, 1, 0x401000);
	put(s, tnt(3, 1));
	put(s, PK(ppt_ovf));
	put(s, tsc(1100));
	put(s, cbr(22));
	put(s, ipk(ppt_fup, pt_ipc_full, 0x401050));
	put(s, tnt(2, 3));
	put(s, ipk(ppt_tip, pt_ipc_update_16, 0x1060));
	put(s, PK(ppt_ovf));
	put(s, tsc(1200));
	put(s, exec64());
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401070));
	put(s, tnt(1, 0));
	put(s, PK(ppt_psb));
	put(s, tsc(1300));
	put(s, cbr(20));
	put(s, PK(ppt_ovf));
	put(s, ipk(ppt_fup, pt_ipc_full, 0x401080));
	put(s, tnt(2, 1));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, tsc(1400));
	put(s, PK(ppt_ovf));
	return seq_len(s);
}

/* MTC timing: TSC, TMA, MTCs (CPUID 0x15 ratio), with events between. */
static size_t seq_mtc(struct seq *s)
{
	seq_init(s);
	header(s, 100000, 0, 0);
	put(s, mtcp(0x47));
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	put(s, mtcp(0x48));
	put(s, tnt(2, 1));
	put(s, ipk(ppt_fup, pt_ipc_full, 0x401010));
	put(s, mtcp(0x4a));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, mtcp(0x02)); /* wraps */
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401020));
	put(s, tsc(200000));
	put(s, mtcp(0x10)); /* between TSC and TMA: ignored */
	put(s, tma(0x2345, 3));
	put(s, mtcp(0x47));
	put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401030));
	put(s, tnt(1, 1));
	return seq_len(s);
}

static void test_flow(void **state)
{
	(void)state;
	static struct seq s;
	size_t n, len = seq_flow(&s);
	assert_int_equal(same(s.buf, len, &n), 0);
	assert_true(n >= 6); /* run start, 4 enables, run end */
}

static void test_psb_after_events(void **state)
{
	(void)state;
	static struct seq s;
	size_t n, len = seq_psb(&s);
	assert_int_equal(same(s.buf, len, &n), 0);
	assert_true(n >= 5);
}

static void test_overflow(void **state)
{
	(void)state;
	static struct seq s;
	size_t n, len = seq_ovf(&s);
	assert_int_equal(same(s.buf, len, &n), 0);
	assert_true(n >= 6); /* start, 4 overflows, end */
}

/* An overflow that resolved with tracing off (OVF, then TSC + TIP.PGE):
 * the CPU ran untraced code from the loss to the enable, so the enable's
 * gap starts at the overflow's time (a switch in between lies in it), and
 * both scans say so. */
static void test_overflow_then_enable(void **state)
{
	(void)state;
	static struct seq s;
	static struct table t;
	size_t len = seq_ovf(&s);
	assert_int_equal(same(s.buf, len, NULL), 0);
	assert_int_equal(scan(s.buf, len, JPD_SCAN_AUTO, &t), 0);
	size_t i = 0;
	while (i < t.n && t.v[i][4] != 0x401070) /* the TIP.PGE */
		i++;
	assert_true(i > 0 && i < t.n);
	assert_int_equal(t.v[i - 1][5], JPD_GAP_OVERFLOW);
	assert_int_equal(t.v[i - 1][1], 1100);
	assert_int_equal(t.v[i][0], 1100); /* was 1200: the stretch in no gap */
	assert_int_equal(t.v[i][1], 1200);
	assert_int_equal(t.v[i][5], 1); /* the kernel ran: asynchronous */
	assert_int_equal(t.v[i][3], 0); /* where it stopped is lost */
}

static void test_mtc(void **state)
{
	(void)state;
	static struct seq s;
	mtc = 1;
	size_t n, len = seq_mtc(&s);
	assert_int_equal(same(s.buf, len, &n), 0);
	assert_true(n >= 5);
	mtc = 0;
}

/* Erratum BDM70: a FUP in PSB+ before a TIP.PGE is no enable. */
static void test_bdm70(void **state)
{
	(void)state;
	static struct seq s;
	errata.bdm70 = 1;
	seq_init(&s);
	header(&s, 1000, 1, 0x401000);
	put(&s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	put(&s, tnt(1, 1));
	header(&s, 2000, 1, 0x401000);
	put(&s, tnt(1, 1));
	size_t n, len = seq_len(&s);
	assert_int_equal(same(s.buf, len, &n), 0);
	assert_true(n >= 3);
	errata.bdm70 = 0;
}

/* What the packet scan does not follow goes to the query decoder. */
static void test_gives_up(void **state)
{
	(void)state;
	static struct seq s;
	seq_init(&s); /* CYC */
	header(&s, 1000, 0, 0);
	put(&s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000));
	struct pt_packet c = { .type = ppt_cyc };
	c.payload.cyc.value = 5;
	put(&s, c);
	put(&s, tnt(1, 1));
	size_t len = seq_len(&s);
	assert_int_equal(same(s.buf, len, NULL), 1);
	seq_init(&s); /* an enable without an IP: an error for libipt */
	header(&s, 1000, 0, 0);
	put(&s, ipk(ppt_tip_pge, pt_ipc_suppressed, 0));
	put(&s, tnt(1, 1));
	len = seq_len(&s);
	assert_int_equal(same(s.buf, len, NULL), 1);
	errata.skd010 = 1; /* an overflow's FUP may be missing */
	len = seq_ovf(&s);
	assert_int_equal(same(s.buf, len, NULL), 1);
	errata.skd010 = 0;
}

/* N enables (each with its TSC) after the run's start, then a hole and a
 * second run from *CUT: the first run's end is gap N + 1. */
static size_t seq_hole(struct seq *s, unsigned n, size_t *cut)
{
	seq_init(s);
	header(s, 1000, 0, 0);
	for (unsigned i = 0; i < n; i++) {
		put(s, tsc(2000 + 10 * i));
		put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x401000 + i));
		put(s, tnt(1, 1));
		put(s, ipk(ppt_tip_pgd, pt_ipc_suppressed, 0));
	}
	pt_enc_get_offset(s->e, cut);
	header(s, 900000, 0, 0);
	put(s, ipk(ppt_tip_pge, pt_ipc_full, 0x405000));
	put(s, tnt(1, 1));
	return seq_len(s);
}

/* The end of a run is patched when a run follows a hole (its trace
 * ended at its last time); the scan keeps 4096 gaps in memory and writes
 * the rest out, so the gap it patches may already be in the file: with
 * the run's end the 4095th, 4096th or 4097th gap, the same table. */
static void test_run_end_after_flush(void **state)
{
	(void)state;
	static struct seq s;
	for (unsigned n = 4093; n <= 4095; n++) {
		size_t cut, len = seq_hole(&s, n, &cut);
		for (int mode = JPD_SCAN_AUTO; mode <= JPD_SCAN_QUERY; mode++) {
			int rc;
			struct jpd_stream *st = scan_stream(s.buf, len, cut, mode, &rc);
			uint64_t last = 2000 + 10 * (n - 1);
			assert_int_equal(rc, 0);
			assert_int_equal(st->ngaps, n + 5); /* + 2 starts, 2 ends, 1 enable */
			assert_int_equal(st->en[n + 1], last);
			assert_int_equal(st->runs[1].hole_tsc, last);
			assert_int_equal(st->en[n + 3], 900000);
			assert_int_equal(st->en[n + 4], JPD_RUN_END);
			for (size_t i = 1; i < st->ngaps; i++)
				assert_true(st->en[i - 1] <= st->en[i]);
			jpd_stream_fini(st);
		}
	}
}

/* A run cut anywhere, and one bit flipped anywhere. */
static void test_cut_and_flipped(void **state)
{
	(void)state;
	static struct seq s;
	size_t (*const make[])(struct seq *) = { seq_flow, seq_psb, seq_ovf, seq_mtc };
	for (size_t k = 0; k < 4; k++) {
		mtc = make[k] == seq_mtc;
		size_t len = make[k](&s);
		for (size_t cut = 1; cut < len; cut++)
			same(s.buf, cut, NULL);
		for (size_t i = 0; i < len; i++)
			for (int bit = 0; bit < 8; bit++) {
				s.buf[i] ^= (uint8_t)(1u << bit);
				snprintf(what, sizeof(what), "sequence %zu, byte %zu bit %d:",
					 k, i, bit);
				same(s.buf, len, NULL);
				s.buf[i] ^= (uint8_t)(1u << bit);
			}
	}
	mtc = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flow),
		cmocka_unit_test(test_psb_after_events),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_overflow_then_enable),
		cmocka_unit_test(test_mtc),
		cmocka_unit_test(test_bdm70),
		cmocka_unit_test(test_gives_up),
		cmocka_unit_test(test_cut_and_flipped),
		cmocka_unit_test(test_run_end_after_flush),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
