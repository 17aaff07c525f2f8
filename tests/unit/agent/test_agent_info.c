// SPDX-License-Identifier: MIT
/* The `jvm` and `truth` sections of `jpbpf info` on hand-made streams:
 * counts, inline records (pcs with more than one frame), coverage,
 * pauses, losses; and the jvm record schemas round-trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bundle.h"
#include "info/info.h"
#include "records.h"
#include "records_jvm.h"
#include "records_truth.h"

static char dir[64];

static void put(struct jpb_writer *w, uint16_t type, const void *rec)
{
	struct jpb_buf b = { 0 };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(type), 1000,
					    rec, &b), 0);
	jpb_buf_fini(&b);
}

/* pc map: pc 0x1000 with 1 frame, pc 0x1004 with 3 frames, 0x1008 with 2 */
static void pcmap(struct jpb_buf *b)
{
	static const uint32_t frames[] = { 1, 3, 2 };
	for (int i = 0; i < 3; i++) {
		jpb_buf_u64(b, 0x1000 + 4 * (uint64_t)i);
		jpb_buf_u32(b, frames[i]);
		for (uint32_t k = 0; k < frames[i]; k++) {
			jpb_buf_u64(b, 7 + k);
			jpb_buf_u32(b, 10 * k);
		}
	}
}

static void write_jvm(struct jpb_bundle *bd)
{
	struct jpb_writer *w;
	assert_int_equal(jpb_writer_open(bd, "jvm", &w), 0);
	struct jpb_rec_jvm_info info = { .pid = 10, .nspid = 1, .late_attach = 1,
					 .flags = JPB_JVM_F_TRUTH,
					 .jdk_version = jpb_str_c("17.0.15"),
					 .vm_name = jpb_str_c("OpenJDK") };
	put(w, JPB_REC_JVM_INFO, &info);
	/* bytecodes 0, 1, 1 (twice) and -1: 2 distinct */
	int32_t bcs[] = { 0, 1, 1, -1 };
	for (int i = 0; i < 4; i++) {
		struct jpb_rec_jvm_codelet c = { 0x100 * (uint64_t)i,
						 0x100 * (uint64_t)i + 0x80, bcs[i],
						 (uint32_t)i, jpb_str_c("x") };
		put(w, JPB_REC_JVM_CODELET, &c);
	}
	struct jpb_buf map = { 0 };
	pcmap(&map);
	struct jpb_rec_jvm_nmethod_load nm = { .method_id = 7, .code_addr = 0x1000,
					       .code_size = 64,
					       .flags = JPB_NM_F_COARSE,
					       .level = -1,
					       .pcmap = { map.data, (uint32_t)map.len } };
	put(w, JPB_REC_JVM_NMETHOD_LOAD, &nm);
	nm.flags = 0;
	put(w, JPB_REC_JVM_NMETHOD_LOAD, &nm);
	jpb_buf_fini(&map);
	struct jpb_rec_jvm_class cls = { .name = jpb_str_c("A"),
					 .bytes = { (const uint8_t *)"\xca\xfe\xba\xbe", 4 } };
	put(w, JPB_REC_JVM_CLASS, &cls);
	cls.flags = JPB_CLASS_F_RESOURCE;
	put(w, JPB_REC_JVM_CLASS, &cls);
	put(w, JPB_REC_JVM_CLASS, &cls);
	cls.flags = JPB_CLASS_F_RETRANSFORM;
	put(w, JPB_REC_JVM_CLASS, &cls);
	cls.flags = JPB_CLASS_F_REBUILT;
	put(w, JPB_REC_JVM_CLASS, &cls);
	struct jpb_rec_jvm_class_missing miss = { 0, jpb_str_c("LB.0x1;"),
						  jpb_str_c("hidden") };
	put(w, JPB_REC_JVM_CLASS_MISSING, &miss);
	struct jpb_rec_jvm_pause p = { jpb_str_c("retransform"), 8, 0, 3000000 };
	put(w, JPB_REC_JVM_PAUSE, &p);
	p.duration_ns = 5000000;
	put(w, JPB_REC_JVM_PAUSE, &p);
	struct jpb_rec_thread th = { 0, 42, 10, JPB_THREAD_START,
				     jpb_str_c("main") };
	put(w, JPB_REC_THREAD, &th);
	struct jpb_rec_loss l = { jpb_str_c("jvm"), UINT32_MAX, 5, 0, 0 };
	put(w, JPB_REC_LOSS, &l);
	assert_int_equal(jpb_writer_close(w), 0);
}

static void write_truth(struct jpb_bundle *bd)
{
	struct jpb_writer *w;
	assert_int_equal(jpb_writer_open(bd, "truth", &w), 0);
	struct jpb_rec_truth_method m = { 1, 8, jpb_str_c("LA;"), jpb_str_c("f"),
					  jpb_str_c("()V"),
					  { (const uint8_t *)"\x03\xb1", 2 } };
	put(w, JPB_REC_TRUTH_METHOD, &m);
	uint8_t ev[4 * 8];
	struct jpb_truth_event e[4] = { { 1, 0, 0, JPB_TRUTH_ENTRY },
					{ 1, 0, 3, JPB_TRUTH_BYTECODE },
					{ 1, 1, 0xb1, JPB_TRUTH_BYTECODE },
					{ 1, 0, 0, JPB_TRUTH_EXIT } };
	for (int i = 0; i < 4; i++)
		jpb_truth_event_put(ev + 8 * i, &e[i]);
	struct jpb_rec_truth_events r = { 0, 42, 0, { ev, sizeof(ev) } };
	put(w, JPB_REC_TRUTH_EVENTS, &r);
	r.nstid = 43;
	put(w, JPB_REC_TRUTH_EVENTS, &r);
	assert_int_equal(jpb_writer_close(w), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jpbpf-agent-info-XXXXXX");
	assert_non_null(mkdtemp(dir));
	struct jpb_bundle *bd;
	assert_int_equal(jpb_bundle_create(&bd, dir), 0);
	write_jvm(bd);
	write_truth(bd);
	jpb_bundle_free(bd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static json_int_t geti(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_non_null(v);
	return json_integer_value(v);
}

static void jvm_section(void **state)
{
	(void)state;
	json_t *o;
	char err[256];
	assert_int_equal(info_summarize(dir, &o, err, sizeof(err)), 0);
	json_t *j = json_object_get(o, "jvm");
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "jdk_version")),
			    "17.0.15");
	assert_true(json_is_true(json_object_get(j, "late_attach")));
	assert_true(json_is_true(json_object_get(j, "truth")));
	assert_int_equal(geti(j, "codelets"), 4);
	assert_int_equal(geti(j, "bytecodes_covered"), 2);
	assert_int_equal(geti(j, "compiled_methods"), 2);
	assert_int_equal(geti(j, "coarse_methods"), 1);
	/* 2 pcs with more than one frame, in each of 2 nmethods */
	assert_int_equal(geti(j, "inline_records"), 4);
	assert_int_equal(geti(j, "classes"), 5);
	assert_int_equal(geti(j, "classes_from_resources"), 2);
	assert_int_equal(geti(j, "classes_retransformed"), 1);
	assert_int_equal(geti(j, "classes_rebuilt"), 1);
	assert_int_equal(geti(j, "classes_missing"), 1);
	assert_int_equal(geti(j, "threads"), 1);
	assert_int_equal(geti(j, "pauses"), 2);
	assert_int_equal(geti(j, "pause_max_ns"), 5000000);
	assert_int_equal(geti(j, "pause_total_ns"), 8000000);
	assert_int_equal(geti(j, "lost"), 5);
	json_decref(o);
}

static void truth_section(void **state)
{
	(void)state;
	json_t *o;
	char err[256];
	assert_int_equal(info_summarize(dir, &o, err, sizeof(err)), 0);
	json_t *t = json_object_get(o, "truth");
	assert_non_null(t);
	assert_int_equal(geti(t, "threads"), 2);
	assert_int_equal(geti(t, "bytecodes"), 4);
	assert_int_equal(geti(t, "events"), 8);
	assert_int_equal(geti(t, "methods"), 1);
	json_decref(o);
}

/* Every jvm record type is registered, named jvm_*, in stream "jvm", and
 * an empty struct round-trips. */
static void jvm_schemas(void **state)
{
	(void)state;
	const struct jpb_rectype *types;
	size_t n;
	jpb_rectypes_jvm(&types, &n);
	assert_int_equal(n, 12);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(types[i].type >> 8, 1);
		assert_ptr_equal(jpb_rectype_find(types[i].type), &types[i]);
		assert_string_equal(types[i].stream, "jvm");
		assert_int_equal(strncmp(types[i].name, "jvm_", 4), 0);
		uint8_t zero[256] = { 0 }, back[256];
		assert_true(types[i].struct_size <= sizeof(zero));
		struct jpb_buf b = { 0 };
		assert_int_equal(jpb_rec_encode(&types[i], zero, &b), 0);
		assert_int_equal(jpb_rec_decode(&types[i], b.data, (uint32_t)b.len,
						back), 0);
		jpb_buf_fini(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jvm_section),
		cmocka_unit_test(truth_section),
		cmocka_unit_test(jvm_schemas),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
