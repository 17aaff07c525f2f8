// SPDX-License-Identifier: MIT
/* The simulator's PT writer (tests/sim/ptenc.c), read back with libipt's
 * packet decoder: the packets a CPU would write for each situation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <intel-pt.h>

/* The simulator is test-only code outside libjpbpf.a: compile it in. */
#include "tests/sim/ptenc.c"
#include "tests/sim/util.c"

#define MAXP 256

struct pkts {
	struct pt_packet p[MAXP];
	size_t n;
};

static void decode(const struct ptenc *e, struct pkts *out)
{
	const struct jpb_buf *d = ptenc_data(e);
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = d->data;
	cfg.end = d->data + d->len;
	struct pt_packet_decoder *dec = pt_pkt_alloc_decoder(&cfg);
	assert_non_null(dec);
	assert_int_equal(pt_pkt_sync_set(dec, 0), 0);
	out->n = 0;
	int rc;
	while (out->n < MAXP &&
	       (rc = pt_pkt_next(dec, &out->p[out->n], sizeof(out->p[0]))) >= 0)
		out->n++;
	pt_pkt_free_decoder(dec);
}

static struct ptenc *new_enc(int retcomp)
{
	struct ptenc_opts o = { .psb_period = 4096, .retcomp = retcomp, .tsc = 1,
				.cbr = 24, .aux_watermark = 1 << 16 };
	struct ptenc *e = ptenc_new(&o, 2u << 16);
	ptenc_time(e, 1000);
	return e;
}

/* Index of the first packet of TYPE at or after FROM, or -1. */
static long find(const struct pkts *p, enum pt_packet_type t, size_t from)
{
	for (size_t i = from; i < p->n; i++)
		if (p->p[i].type == t)
			return (long)i;
	return -1;
}

#define IP 0x00007f3a10001000ull

static void test_start_psb_and_pge(void **state)
{
	(void)state;
	struct ptenc *e = new_enc(1);
	ptenc_pge(e, IP);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	static const enum pt_packet_type want[] = { ppt_psb, ppt_tsc, ppt_cbr,
						    ppt_mode, ppt_psbend, ppt_tsc,
						    ppt_mode, ppt_tip_pge };
	assert_int_equal(p.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(p.p[i].type, want[i]);
	assert_int_equal(p.p[1].payload.tsc.tsc, 2000); /* 2 GHz */
	assert_int_equal(p.p[2].payload.cbr.ratio, 24);
	/* after PSB the last IP is 0: a full (sign-extended 48-bit) IP */
	assert_int_equal(p.p[7].payload.ip.ipc, pt_ipc_sext_48);
	assert_int_equal(p.p[7].payload.ip.ip, IP);
	ptenc_free(e);
}

static void test_tnt_and_ip_compression(void **state)
{
	(void)state;
	struct ptenc *e = new_enc(1);
	ptenc_pge(e, IP);
	static const int bits[] = { 1, 0, 0, 1, 1, 1, 0, 1 };
	for (size_t i = 0; i < 8; i++)
		ptenc_tnt(e, bits[i]);
	ptenc_tip(e, IP + 0x40);          /* same upper 48 bits */
	ptenc_tip(e, IP + 0x10000000ull); /* same upper 32 bits */
	ptenc_tip(e, 0x00007f3b20000000ull);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	long t = find(&p, ppt_tnt_64, 0);
	assert_true(t > 0);
	assert_int_equal(p.p[t].payload.tnt.bit_size, 8);
	assert_int_equal(p.p[t].payload.tnt.payload, 0x9d); /* oldest bit first */
	long a = find(&p, ppt_tip, (size_t)t);
	assert_int_equal(p.p[a].payload.ip.ipc, pt_ipc_update_16);
	assert_int_equal(p.p[a].payload.ip.ip, (IP + 0x40) & 0xffff);
	assert_int_equal(p.p[a + 1].payload.ip.ipc, pt_ipc_update_32);
	assert_int_equal(p.p[a + 2].payload.ip.ipc, pt_ipc_sext_48);
	ptenc_free(e);
}

static void test_return_compression(void **state)
{
	(void)state;
	for (int rc = 0; rc <= 1; rc++) {
		struct ptenc *e = new_enc(rc);
		ptenc_pge(e, IP);
		ptenc_call(e, IP + 5);
		ptenc_ret(e, IP + 5);   /* matches the call */
		ptenc_call(e, IP + 0x20);
		ptenc_ret(e, IP + 0x99); /* does not match */
		ptenc_ret(e, IP + 0x20); /* stack was cleared: no compression */
		ptenc_finish(e);
		struct pkts p;
		decode(e, &p);
		long pge = find(&p, ppt_tip_pge, 0);
		size_t tips = 0, tnt = 0;
		for (size_t i = (size_t)pge + 1; i < p.n; i++) {
			tips += p.p[i].type == ppt_tip;
			tnt += p.p[i].type == ppt_tnt_8;
		}
		assert_int_equal(tips, rc ? 2 : 3);
		assert_int_equal(tnt, rc ? 1 : 0);
		uint64_t c, tip;
		ptenc_ret_stats(e, &c, &tip);
		assert_int_equal(c, rc ? 1 : 0);
		ptenc_free(e);
	}
}

static void test_psb_period_has_fup(void **state)
{
	(void)state;
	struct ptenc_opts o = { .psb_period = 256, .retcomp = 1, .tsc = 0, .cbr = 24,
				.aux_watermark = 1 << 16 };
	struct ptenc *e = ptenc_new(&o, 2u << 16);
	ptenc_pge(e, IP);
	for (int i = 0; i < 200; i++) {
		assert_int_equal(ptenc_insn(e, IP + (uint64_t)i * 8), 0);
		ptenc_tip(e, IP + (uint64_t)(i % 2) * 0x10000000ull);
	}
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	long psb2 = find(&p, ppt_psb, 1);
	assert_true(psb2 > 0);
	long fup = find(&p, ppt_fup, (size_t)psb2);
	long end = find(&p, ppt_psbend, (size_t)psb2);
	assert_true(fup > psb2 && fup < end); /* FUP inside PSB+: tracing on */
	assert_int_equal(p.p[fup].payload.ip.ipc, pt_ipc_sext_48);
	assert_int_equal(find(&p, ppt_tsc, 0), -1); /* --no-tsc */
	ptenc_free(e);
}

static void test_forced_loss_ovf_fup(void **state)
{
	(void)state;
	struct ptenc *e = new_enc(1);
	ptenc_pge(e, IP);
	ptenc_tnt(e, 1);
	ptenc_force_drop(e, 1);
	assert_true(ptenc_dropping(e));
	ptenc_tip(e, IP + 0x100); /* lost */
	assert_int_equal(ptenc_insn(e, IP + 0x100), 1);
	ptenc_force_drop(e, 0);
	assert_int_equal(ptenc_insn(e, IP + 0x200), 0); /* resumes here */
	assert_int_equal(ptenc_take_resumed(e), 1);
	assert_int_equal(ptenc_take_resumed(e), 0);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	long tnt = find(&p, ppt_tnt_8, 0), ovf = find(&p, ppt_ovf, 0);
	assert_true(tnt > 0 && ovf > tnt); /* bits before the loss kept */
	assert_int_equal(find(&p, ppt_tip, 0), -1);
	assert_int_equal(p.p[ovf + 1].type, ppt_fup);
	assert_int_equal(p.p[ovf + 1].payload.ip.ip, IP + 0x200);
	assert_int_equal(ptenc_losses(e), 1);
	assert_true(ptenc_dropped_bytes(e) > 0);
	size_t n;
	const struct ptenc_chunk *ch = ptenc_chunks(e, &n);
	assert_true(n >= 1);
	assert_int_equal(ch[0].flags, PTENC_TRUNCATED);
	ptenc_free(e);
}

static void test_buffer_model_overflows(void **state)
{
	(void)state;
	struct ptenc_opts o = { .psb_period = 4096, .retcomp = 1, .tsc = 1, .cbr = 24,
				.buf_size = 128, .drain_bpns = 0.001,
				.aux_watermark = 1 << 16 };
	struct ptenc *e = ptenc_new(&o, 2u << 16);
	ptenc_time(e, 1000);
	ptenc_pge(e, IP);
	for (int i = 0; i < 100; i++)
		ptenc_tip(e, IP + 0x10000000ull * (uint64_t)(i % 3));
	assert_true(ptenc_dropping(e));
	assert_true(ptenc_data(e)->len <= 128);
	/* nothing drains without time passing */
	assert_int_equal(ptenc_insn(e, IP), 1);
	ptenc_time(e, 1000 + 200000); /* 200 bytes drained */
	assert_int_equal(ptenc_insn(e, IP + 8), 0);
	assert_int_equal(ptenc_take_resumed(e), 1);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	assert_true(find(&p, ppt_ovf, 0) > 0);
	ptenc_free(e);
}

static void test_mtc_and_tma(void **state)
{
	(void)state;
	struct ptenc_opts o = { .psb_period = 4096, .retcomp = 1, .tsc = 1, .cbr = 20,
				.mtc = 1, .mtc_freq = 3, .aux_watermark = 1 << 16 };
	struct ptenc *e = ptenc_new(&o, 2u << 16);
	ptenc_time(e, 1000 * 40 + 7); /* 7 ns past crystal tick 1000 */
	ptenc_pge(e, IP);
	ptenc_tnt(e, 1);
	ptenc_time(e, 1008 * 40 + 1); /* crossed the 2^3 boundary at 1008 */
	assert_int_equal(ptenc_insn(e, IP + 4), 0);
	ptenc_time(e, 1009 * 40); /* same MTC period: none */
	assert_int_equal(ptenc_insn(e, IP + 8), 0);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	long tsc = find(&p, ppt_tsc, 0);
	assert_int_equal(p.p[tsc].payload.tsc.tsc, 1000 * 80); /* at the tick */
	assert_int_equal(p.p[tsc + 1].type, ppt_tma);
	assert_int_equal(p.p[tsc + 1].payload.tma.ctc, 1000);
	assert_int_equal(p.p[tsc + 1].payload.tma.fc, 0);
	long mtc = find(&p, ppt_mtc, 0);
	assert_true(mtc > find(&p, ppt_tnt_8, 0)); /* earlier branches first */
	assert_int_equal(p.p[mtc].payload.mtc.ctc, 1008 >> 3);
	assert_int_equal(find(&p, ppt_mtc, (size_t)mtc + 1), -1);
	assert_int_equal(ptenc_last_tsc_ns(e), 1000 * 40);
	ptenc_free(e);
}

/* CYC: the core cycles (CBR 20: 2 per ns) since the last CYC or TSC,
 * before each TNT, TIP and asynchronous PGD (ahead of its FUP); none
 * where no cycle passed.  Their sum is the time since the TSC. */
static void test_cyc_counts_cycles(void **state)
{
	(void)state;
	struct ptenc_opts o = { .psb_period = 4096, .retcomp = 1, .tsc = 1,
				.cbr = 20, .cyc = 1, .aux_watermark = 1 << 16 };
	struct ptenc *e = ptenc_new(&o, 2u << 16);
	ptenc_time(e, 1000);
	ptenc_pge(e, IP); /* right after its TSC: no CYC */
	ptenc_time(e, 1100);
	ptenc_tip(e, IP + 0x40);
	ptenc_time(e, 1500);
	ptenc_tnt(e, 1);
	ptenc_tnt(e, 0);
	ptenc_time(e, 1600);
	ptenc_tip(e, IP + 0x80); /* the TNT's CYC covers it */
	ptenc_time(e, 2000);
	ptenc_async_pgd(e, IP + 0x90);
	ptenc_finish(e);
	struct pkts p;
	decode(e, &p);
	static const enum pt_packet_type want[] = {
		ppt_psb, ppt_tsc, ppt_cbr, ppt_mode, ppt_psbend, ppt_tsc, ppt_mode,
		ppt_tip_pge, ppt_cyc, ppt_tip, ppt_cyc, ppt_tnt_8, ppt_tip, ppt_cyc,
		ppt_fup, ppt_tip_pgd
	};
	assert_int_equal(p.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(p.p[i].type, want[i]);
	assert_int_equal(p.p[8].payload.cyc.value, 200);
	assert_int_equal(p.p[10].payload.cyc.value, 1000);
	assert_int_equal(p.p[13].payload.cyc.value, 800);
	assert_int_equal(p.p[5].payload.tsc.tsc + 200 + 1000 + 800, 2 * 2000);
	ptenc_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_psb_and_pge),
		cmocka_unit_test(test_tnt_and_ip_compression),
		cmocka_unit_test(test_return_compression),
		cmocka_unit_test(test_psb_period_has_fup),
		cmocka_unit_test(test_forced_loss_ovf_fup),
		cmocka_unit_test(test_buffer_model_overflows),
		cmocka_unit_test(test_mtc_and_tma),
		cmocka_unit_test(test_cyc_counts_cycles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
