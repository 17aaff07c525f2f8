// SPDX-License-Identifier: MIT
/* BPF events to "sched" records, and the info sections that read them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "bundle.h"
#include "info/info.h"
#include "record/sched_events.h"
#include "records.h"
#include "records_sched.h"

#include "bpf/jpbpf.h"

struct calls {
	int n;
	uint32_t event[4], tid[4], nstid[4];
	char comm[4][17];
};

static void on_thread(void *ctx, uint32_t event, uint32_t tid, uint32_t nstid,
		      uint32_t tgid, const char *comm)
{
	struct calls *c = ctx;
	(void)tgid;
	if (c->n < 4) {
		c->event[c->n] = event;
		c->tid[c->n] = tid;
		c->nstid[c->n] = nstid;
		snprintf(c->comm[c->n], 17, "%s", comm);
	}
	c->n++;
}

static char dir[256];

static void write_events(struct calls *calls)
{
	struct jpb_bundle *b;
	struct jpb_sched_sink s = { 0 };
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/sched.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	json_t *meta = jpb_meta_new_base();
	json_t *target = json_object();
	json_object_set_new(target, "pid", json_integer(100));
	json_object_set_new(meta, "target", target);
	assert_int_equal(jpb_meta_save(b, meta), 0);
	json_decref(meta);
	assert_int_equal(jpb_writer_open(b, "sched", &s.w), 0);
	s.on_thread = on_thread;
	s.ctx = calls;

	/* Batches as the BPF side sends them: only n entries travel. */
	struct jpbpf_ev_switches sw = { { JPBPF_EV_SWITCHES, 1, 1000 }, 1, 0,
		{ { 1000, 101, 100, 0, 0, 1, JPBPF_SW_PREV_TRACED } } };
	assert_int_equal(jpb_sched_sink_event(&s, &sw, JPBPF_SWITCHES_SIZE(1)), 0);
	struct jpbpf_ev_switches sw2 = { { JPBPF_EV_SWITCHES, 0, 1100 }, 1, 0,
		{ { 1100, 555, 555, 102, 100, 0,
		    JPBPF_SW_NEXT_TRACED | JPBPF_SW_PREEMPT } } };
	assert_int_equal(jpb_sched_sink_event(&s, &sw2, JPBPF_SWITCHES_SIZE(1)), 0);

	struct jpbpf_ev_task fk = { { JPBPF_EV_FORK, 0, 1200 }, 103, 100, 7,
				    101, 100, 0, "java", "" };
	assert_int_equal(jpb_sched_sink_event(&s, &fk, sizeof(fk)), 0);
	struct jpbpf_ev_task ex = { { JPBPF_EV_EXIT, 1, 1300 }, 103, 100, 7,
				    0, 0, 9, "worker-3", "" };
	/* A comm without NUL must not be read past. */
	memcpy(ex.comm, "0123456789abcdef", 16);
	assert_int_equal(jpb_sched_sink_event(&s, &ex, sizeof(ex)), 0);

	struct jpbpf_ev_method ml;
	memset(&ml, 0, sizeof(ml));
	ml.hdr = (struct jpbpf_ev_hdr){ JPBPF_EV_METHOD_LOAD, 0, 1400 };
	ml.tid = 104, ml.tgid = 100, ml.code_addr = 0x7f0000001000;
	ml.code_size = 512, ml.class_len = 300, ml.method_len = 3, ml.sig_len = 3;
	memset(ml.class_name, 'C', 255);
	strcpy(ml.method_name, "run");
	strcpy(ml.signature, "()V");
	assert_int_equal(jpb_sched_sink_event(&s, &ml, sizeof(ml)), 0);

	/* Short or unknown events are counted, not written; so is a batch
	 * whose count does not fit its size. */
	assert_int_equal(jpb_sched_sink_event(&s, &sw, 8), 0);
	sw.n = 2;
	assert_int_equal(jpb_sched_sink_event(&s, &sw, JPBPF_SWITCHES_SIZE(1)), 0);
	sw.n = JPBPF_BATCH + 1;
	assert_int_equal(jpb_sched_sink_event(&s, &sw, sizeof(sw)), 0);
	struct jpbpf_ev_hdr odd = { 99, 0, 1 };
	assert_int_equal(jpb_sched_sink_event(&s, &odd, sizeof(odd)), 0);

	assert_int_equal(s.n.events, 5);
	assert_int_equal(s.n.switches, 2);
	assert_int_equal(s.n.forks, 1);
	assert_int_equal(s.n.exits, 1);
	assert_int_equal(s.n.loads, 1);
	assert_int_equal(s.n.malformed, 4);

	struct jpb_rec_loss l = { jpb_str_c("ringbuf"), 1, 3, 0, 0 };
	assert_int_equal(jpb_writer_put_rec(s.w, jpb_rectype_find(JPB_REC_LOSS),
					    0, &l, &s.scratch), 0);
	assert_int_equal(jpb_writer_close(s.w), 0);
	jpb_sched_sink_fini(&s);
	jpb_bundle_free(b);
}

static void records_read_back(void **state)
{
	(void)state;
	struct calls calls = { 0 };
	write_events(&calls);
	assert_int_equal(calls.n, 2);
	assert_int_equal(calls.event[0], JPB_THREAD_START);
	assert_int_equal(calls.tid[0], 103);
	assert_int_equal(calls.nstid[0], 7);
	assert_int_equal(calls.event[1], JPB_THREAD_END);
	assert_string_equal(calls.comm[1], "0123456789abcdef");

	char path[300];
	struct jpb_reader *r;
	struct jpb_record rec;
	snprintf(path, sizeof(path), "%s/sched.jpb", dir);
	assert_int_equal(jpb_reader_open_path(path, &r), 0);

	struct jpb_rec_sched_switch sw;
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.type, JPB_REC_SCHED_SWITCH);
	assert_int_equal(rec.time_ns, 1000);
	assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					rec.size, &sw), 0);
	assert_int_equal(sw.cpu, 1);
	assert_int_equal(sw.prev_tid, 101);
	assert_int_equal(sw.prev_state, 1);
	assert_int_equal(sw.traced, 1);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					rec.size, &sw), 0);
	assert_int_equal(sw.preempt, 1);
	assert_int_equal(sw.next_tid, 102);
	assert_int_equal(sw.traced, 2);

	struct jpb_rec_sched_fork fk;
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.type, JPB_REC_SCHED_FORK);
	assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					rec.size, &fk), 0);
	assert_int_equal(fk.child_tid, 103);
	assert_int_equal(fk.child_nstid, 7);
	assert_int_equal(fk.parent_tid, 101);

	struct jpb_rec_sched_exit ex;
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					rec.size, &ex), 0);
	assert_int_equal(ex.exit_code, 9);
	assert_int_equal(ex.comm.len, 16);

	struct jpb_rec_usdt_method m;
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.type, JPB_REC_USDT_METHOD_LOAD);
	assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
					rec.size, &m), 0);
	assert_int_equal(m.code_addr, 0x7f0000001000ull);
	assert_int_equal(m.code_size, 512);
	assert_int_equal(m.class_name.len, 255);
	assert_int_equal(m.flags, JPB_USDT_CLASS_CUT);
	assert_int_equal(m.method_name.len, 3);
	assert_memory_equal(m.signature.ptr, "()V", 3);
	jpb_reader_free(r);
}

static void info_summary(void **state)
{
	(void)state;
	struct calls calls = { 0 };
	write_events(&calls);
	json_t *o;
	char err[256];
	assert_int_equal(info_summarize(dir, &o, err, sizeof(err)), 0);
	json_t *s = json_object_get(o, "sched");
	assert_non_null(s);
	assert_int_equal(json_integer_value(json_object_get(s, "events")), 4);
	assert_int_equal(json_integer_value(json_object_get(s, "switches")), 2);
	assert_int_equal(json_integer_value(json_object_get(s, "lost")), 3);
	assert_int_equal(json_integer_value(json_object_get(s, "cpus")), 2);
	/* The traced sides only: 101 and 102, not 555 nor idle. */
	assert_int_equal(json_integer_value(json_object_get(s, "tids")), 2);
	json_t *tl = json_object_get(s, "tid_list");
	assert_int_equal(json_integer_value(json_array_get(tl, 0)), 101);
	assert_int_equal(json_integer_value(json_array_get(tl, 1)), 102);
	json_t *u = json_object_get(o, "usdt");
	assert_non_null(u);
	assert_int_equal(json_integer_value(json_object_get(u, "compiled_loads")), 1);
	assert_int_equal(json_integer_value(json_object_get(u, "compiled_unloads")), 0);
	assert_int_equal(json_integer_value(json_object_get(u, "names_cut")), 1);
	json_decref(o);
}

/* A full batch: one record per entry, in the batch's order, all on the
 * batch's CPU. */
static void full_batch(void **state)
{
	(void)state;
	struct jpb_bundle *b;
	struct jpb_sched_sink s = { 0 };
	char d[256], path[300];
	const char *tmp = getenv("TESTTMP");
	snprintf(d, sizeof(d), "%s/batch.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(d));
	assert_int_equal(jpb_bundle_create(&b, d), 0);
	assert_int_equal(jpb_writer_open(b, "sched", &s.w), 0);
	struct jpbpf_ev_switches sw = { { JPBPF_EV_SWITCHES, 3, 5000 },
					JPBPF_BATCH, 0, { { 0 } } };
	for (uint32_t i = 0; i < JPBPF_BATCH; i++)
		sw.sw[i] = (struct jpbpf_sw){ 5000 + i, 200 + i, 100, 300 + i,
					      7, 0, JPBPF_SW_PREV_TRACED };
	assert_int_equal(jpb_sched_sink_event(&s, &sw, sizeof(sw)), 0);
	assert_int_equal(s.n.switches, JPBPF_BATCH);
	assert_int_equal(s.n.malformed, 0);
	assert_int_equal(jpb_writer_close(s.w), 0);
	jpb_sched_sink_fini(&s);
	jpb_bundle_free(b);

	struct jpb_reader *r;
	struct jpb_record rec;
	struct jpb_rec_sched_switch out;
	snprintf(path, sizeof(path), "%s/sched.jpb", d);
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	for (uint32_t i = 0; i < JPBPF_BATCH; i++) {
		assert_int_equal(jpb_reader_next(r, &rec), 0);
		assert_int_equal(rec.time_ns, 5000 + i);
		assert_int_equal(jpb_rec_decode(jpb_rectype_find(rec.type),
						rec.payload, rec.size, &out), 0);
		assert_int_equal(out.cpu, 3);
		assert_int_equal(out.prev_tid, 200 + i);
		assert_int_equal(out.next_tid, 300 + i);
		assert_int_equal(out.next_tgid, 7);
	}
	assert_int_not_equal(jpb_reader_next(r, &rec), 0);
	jpb_reader_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_read_back),
		cmocka_unit_test(full_batch),
		cmocka_unit_test(info_summary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
