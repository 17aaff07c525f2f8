// SPDX-License-Identifier: MIT
/* The compile-level keys of `jpbpf info`'s jvm section on a hand-made
 * stream: compiled_by_level (levels without records left out, an
 * out-of-range level under "other"), compiled_level_unknown, compiled_osr. */
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

static char dir[64];

static void put_nm(struct jpb_writer *w, int32_t level, uint32_t flags)
{
	struct jpb_rec_jvm_nmethod_load nm = { .method_id = 7,
					       .code_addr = 0x1000,
					       .code_size = 64,
					       .flags = flags,
					       .level = level };
	struct jpb_buf b = { 0 };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(
						JPB_REC_JVM_NMETHOD_LOAD),
					    1000, &nm, &b), 0);
	jpb_buf_fini(&b);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jpbpf-info-levels-XXXXXX");
	assert_non_null(mkdtemp(dir));
	struct jpb_bundle *bd;
	struct jpb_writer *w;
	assert_int_equal(jpb_bundle_create(&bd, dir), 0);
	assert_int_equal(jpb_writer_open(bd, "jvm", &w), 0);
	put_nm(w, -1, 0);
	put_nm(w, -1, JPB_NM_F_REPLAY);
	put_nm(w, 0, 0);
	put_nm(w, 3, 0);
	put_nm(w, 3, JPB_NM_F_OSR);
	put_nm(w, 4, JPB_NM_F_OSR | JPB_NM_F_COARSE);
	put_nm(w, 4, 0);
	put_nm(w, 4, 0);
	put_nm(w, 9, 0);
	assert_int_equal(jpb_writer_close(w), 0);
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
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void levels(void **state)
{
	(void)state;
	json_t *o;
	char err[256];
	assert_int_equal(info_summarize(dir, &o, err, sizeof(err)), 0);
	json_t *j = json_object_get(o, "jvm");
	assert_non_null(j);
	assert_int_equal(geti(j, "compiled_methods"), 9);
	assert_int_equal(geti(j, "compiled_level_unknown"), 2);
	assert_int_equal(geti(j, "compiled_osr"), 2);
	json_t *l = json_object_get(j, "compiled_by_level");
	assert_non_null(l);
	assert_int_equal(geti(l, "-1"), 2);
	assert_int_equal(geti(l, "0"), 1);
	assert_int_equal(geti(l, "3"), 2);
	assert_int_equal(geti(l, "4"), 3);
	assert_int_equal(geti(l, "other"), 1);
	assert_null(json_object_get(l, "1"));
	assert_null(json_object_get(l, "2"));
	assert_int_equal(json_object_size(l), 5);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(levels),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
