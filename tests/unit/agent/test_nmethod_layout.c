// SPDX-License-Identifier: MIT
/* agent/jit.c encodes a jvm_nmethod_load with an empty pc map, then sets
 * the map's length in the record's last four bytes and writes the map
 * behind it.  That holds only while the map is the record's last field, a
 * BYTES (u32 length, then the bytes): this checks the registry still says
 * so, and that the two ways give the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "records.h"
#include "records_jvm.h"

static void test_map_is_last_bytes(void **state)
{
	(void)state;
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_JVM_NMETHOD_LOAD);
	assert_non_null(t);
	const struct jpb_field *f = &t->fields[t->nfields - 1];
	assert_string_equal(f->name, "pcmap");
	assert_int_equal(f->kind, JPB_F_BYTES);
	assert_int_equal(f->offset,
			 offsetof(struct jpb_rec_jvm_nmethod_load, pcmap));
}

static void test_in_place_equals_encode(void **state)
{
	(void)state;
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_JVM_NMETHOD_LOAD);
	uint8_t code[37], map[60];
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)(0xc0 + i);
	for (size_t i = 0; i < sizeof(map); i++)
		map[i] = (uint8_t)(3 * i + 1);
	struct jpb_rec_jvm_nmethod_load r = {
		.method_id = 0x7f0012345678, .code_addr = 0x7f00abcd0000,
		.code_size = sizeof(code), .flags = 5, .level = 4,
		.code = { code, sizeof(code) }, .pcmap = { map, sizeof(map) },
	};
	struct jpb_buf whole = { 0 }, in_place = { 0 };
	assert_int_equal(jpb_rec_encode(t, &r, &whole), 0);
	r.pcmap = (struct jpb_bytes){ NULL, 0 };
	assert_int_equal(jpb_rec_encode(t, &r, &in_place), 0);
	assert_int_equal(jpb_le32(in_place.data + in_place.len - 4), 0);
	jpb_st32(in_place.data + in_place.len - 4, sizeof(map));
	assert_int_equal(jpb_buf_put(&in_place, map, sizeof(map)), 0);
	assert_int_equal(in_place.len, whole.len);
	assert_memory_equal(in_place.data, whole.data, whole.len);
	jpb_buf_fini(&whole);
	jpb_buf_fini(&in_place);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_is_last_bytes),
		cmocka_unit_test(test_in_place_equals_encode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
