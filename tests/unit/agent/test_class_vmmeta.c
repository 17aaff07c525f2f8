// SPDX-License-Identifier: MIT
/* agent/class_vmmeta.c against HotSpot-shaped metadata built here: a
 * ConstMethod with its inlined tables laid out from the end as
 * constMethod.cpp lays them out (JDK 17 offsets and flag bits), and a
 * ConstantPool with its operands.  The VMStructs lookups and memory reads
 * are fakes: a read outside the objects built here fails, as
 * process_vm_readv on an unmapped address does.  Checks that the tables
 * are found behind every combination of the tables after them, and that
 * each inconsistency gives its reason, never a wrong table or a crash
 * (the suite runs under ASan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The fakes replace agent/vmstructs.[ch]. */
#define JPBPF_AGENT_VMSTRUCTS_H

struct region {
	const void *p;
	size_t len;
};
static struct region regions[8];
static unsigned nregions;

static void readable(const void *p, size_t len)
{
	regions[nregions++] = (struct region){ p, len };
}

static int vms_init(void)
{
	return 0;
}

static int vms_read(uint64_t addr, void *buf, size_t len)
{
	for (unsigned i = 0; i < nregions; i++) {
		uint64_t lo = (uint64_t)(uintptr_t)regions[i].p;
		if (addr >= lo && len <= regions[i].len &&
		    addr - lo <= regions[i].len - len) {
			memcpy(buf, (const void *)(uintptr_t)addr, len);
			return 0;
		}
	}
	return -1;
}

static int vms_read_u64(uint64_t addr, uint64_t *v)
{
	return vms_read(addr, v, sizeof(*v));
}

static int vms_read_i32(uint64_t addr, int32_t *v)
{
	return vms_read(addr, v, sizeof(*v));
}

static const struct {
	const char *type, *field;
	uint64_t off, size;
} fields[] = {
	{ "Method", "_constMethod", 8, 8 },
	{ "ConstMethod", "_constants", 8, 8 },
	{ "ConstMethod", "_constMethod_size", 24, 4 },
	{ "ConstMethod", "_flags", 28, 2 },
	{ "ConstMethod", "_code_size", 32, 2 },
	{ "ConstMethod", "_name_index", 34, 2 },
	{ "ConstMethod", "_signature_index", 36, 2 },
	{ "ConstMethod", "_max_stack", 40, 2 },
	{ "ConstMethod", "_max_locals", 42, 2 },
	{ "ExceptionTableElement", "start_pc", 0, 2 },
	{ "ExceptionTableElement", "end_pc", 2, 2 },
	{ "ExceptionTableElement", "handler_pc", 4, 2 },
	{ "ExceptionTableElement", "catch_type_index", 6, 2 },
	{ "ConstantPool", "_length", 60, 4 },
	{ "ConstantPool", "_operands", 32, 8 },
	{ "Array<int>", "_length", 0, 4 },
	{ "Array<u2>", "_data", 4, 2 },
};

static const struct {
	const char *name;
	int64_t v;
} consts[] = {
	{ "ConstMethod::_has_linenumber_table", 1 },
	{ "ConstMethod::_has_checked_exceptions", 2 },
	{ "ConstMethod::_has_localvariable_table", 4 },
	{ "ConstMethod::_has_exception_table", 8 },
	{ "ConstMethod::_has_generic_signature", 16 },
	{ "ConstMethod::_has_method_parameters", 32 },
	{ "ConstMethod::_has_method_annotations", 128 },
	{ "ConstMethod::_has_parameter_annotations", 256 },
	{ "ConstMethod::_has_type_annotations", 512 },
	{ "ConstMethod::_has_default_annotations", 1024 },
	{ "HeapWordSize", 8 },
	{ "ConstantPool::_indy_bsm_offset", 0 },
	{ "ConstantPool::_indy_argc_offset", 1 },
	{ "ConstantPool::_indy_argv_offset", 2 },
	/* type sizes */
	{ "ConstMethod", 48 },
	{ "ExceptionTableElement", 8 },
	{ "CheckedExceptionElement", 2 },
	{ "MethodParametersElement", 4 },
	{ "Array<u2>", 8 },
};

static int vms_field_info(const char *type, const char *field, uint64_t *off,
			  uint64_t *size)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].type, type) &&
		    !strcmp(fields[i].field, field)) {
			*off = fields[i].off;
			*size = fields[i].size;
			return 0;
		}
	return -1;
}

static int vms_field_offset(const char *type, const char *field,
			    uint64_t *off)
{
	uint64_t size;
	return vms_field_info(type, field, off, &size);
}

static int lookup(const char *name, int64_t *v)
{
	for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++)
		if (!strcmp(consts[i].name, name)) {
			*v = consts[i].v;
			return 0;
		}
	return -1;
}

static int vms_int_constant(const char *name, int32_t *v)
{
	int64_t x;
	if (lookup(name, &x) != 0)
		return -1;
	*v = (int32_t)x;
	return 0;
}

static int vms_type_size(const char *type, uint64_t *size)
{
	int64_t x;
	if (lookup(type, &x) != 0)
		return -1;
	*size = (uint64_t)x;
	return 0;
}

#include "agent/class_vmmeta.c"

/* ---- a ConstMethod, laid out as HotSpot does -------------------------- */

enum { F_LINES = 1, F_CHECKED = 2, F_LVT = 4, F_EXC = 8, F_GENERIC = 16,
       F_PARAMS = 32, F_ANNOT1 = 128, F_ANNOT2 = 512 };
#define CODE_LEN 40
#define POOL_ADDR 0x7f0000001000ull

struct fake {
	uint64_t slot;          /* the jmethodID points here */
	uint8_t method[88];
	uint64_t cm[64];        /* the ConstMethod, 8-byte words */
	struct cvm_exc exc[3];
	unsigned nexc;
};

static void put16(uint8_t *p, size_t at, unsigned v)
{
	uint16_t x = (uint16_t)v;
	memcpy(p + at, &x, 2);
}

/* Tables from the end: annotations, generic signature, parameters,
 * checked exceptions, exception table, local variables. */
static size_t put_tables(uint8_t *b, size_t end, unsigned flags,
			 const struct fake *f)
{
	end -= 8 * (size_t)(!!(flags & F_ANNOT1) + !!(flags & F_ANNOT2));
	if (flags & F_GENERIC)
		put16(b, end -= 2, 77);
	if (flags & F_PARAMS) {
		put16(b, end -= 2, 3);
		end -= 3 * 4;
	}
	if (flags & F_CHECKED) {
		put16(b, end -= 2, 2);
		end -= 2 * 2;
	}
	if (flags & F_EXC) {
		put16(b, end -= 2, f->nexc);
		end -= 8 * (size_t)f->nexc;
		for (unsigned i = 0; i < f->nexc; i++) {
			put16(b, end + 8 * i, f->exc[i].start_pc);
			put16(b, end + 8 * i + 2, f->exc[i].end_pc);
			put16(b, end + 8 * i + 4, f->exc[i].handler_pc);
			put16(b, end + 8 * i + 6, f->exc[i].catch_type);
		}
	}
	if (flags & F_LVT) {
		put16(b, end -= 2, 1);
		end -= 12;
	}
	return end;
}

static const void *make(struct fake *f, unsigned flags)
{
	uint8_t *b = (uint8_t *)f->cm;
	size_t words = 24; /* header 48 + code 40 + lines + tables */
	memset(b, 0xa5, sizeof(f->cm)); /* nothing is read uninitialised */
	uint64_t cm = (uint64_t)(uintptr_t)f->cm, pool = POOL_ADDR;
	memcpy(f->method + 8, &cm, 8);
	f->slot = (uint64_t)(uintptr_t)f->method;
	memcpy(b + 8, &pool, 8);
	int32_t size = (int32_t)words;
	memcpy(b + 24, &size, 4);
	put16(b, 28, flags);
	put16(b, 32, CODE_LEN);
	put16(b, 34, 11);
	put16(b, 36, 12);
	put16(b, 40, 5);
	put16(b, 42, 3);
	assert_true(put_tables(b, words * 8, flags, f) >= 48 + CODE_LEN + 8);
	nregions = 0;
	readable(&f->slot, 8);
	readable(f->method, sizeof(f->method));
	readable(f->cm, words * 8);
	return &f->slot;
}

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->exc[0] = (struct cvm_exc){ 0, 10, 20, 7 };
	f->exc[1] = (struct cvm_exc){ 4, 30, 35, 0 };
	f->nexc = 2;
	return f;
}

static void test_tables_behind_every_combination(void **state)
{
	(void)state;
	const unsigned after[] = { F_CHECKED, F_GENERIC, F_PARAMS, F_ANNOT1,
				   F_ANNOT2 };
	for (unsigned mask = 0; mask < 32; mask++) {
		struct fake *f = fake_new();
		unsigned flags = F_EXC | F_LINES | F_LVT;
		for (unsigned i = 0; i < 5; i++)
			if (mask & (1u << i))
				flags |= after[i];
		struct cvm_method m;
		assert_int_equal(cvm_method_read(make(f, flags), CODE_LEN, 3, &m),
				 CVM_OK);
		assert_int_equal(m.pool, POOL_ADDR);
		assert_int_equal(m.name_index, 11);
		assert_int_equal(m.sig_index, 12);
		assert_int_equal(m.max_stack, 5);
		assert_int_equal(m.nexc, 2);
		assert_memory_equal(m.exc, f->exc, 2 * sizeof(*m.exc));
		cvm_method_fini(&m);
		free(f);
	}
}

static void test_no_table(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct cvm_method m;
	assert_int_equal(cvm_method_read(make(f, F_LINES | F_CHECKED),
					 CODE_LEN, 3, &m), CVM_OK);
	assert_int_equal(m.nexc, 0);
	assert_null(m.exc);
	assert_int_equal(m.max_stack, 5);
	free(f);
}

/* Each inconsistency: its reason and an empty result. */
static void expect(struct fake *f, const void *id, uint32_t code_len,
		   int why)
{
	struct cvm_method m;
	assert_int_equal(cvm_method_read(id, code_len, 3, &m), why);
	assert_int_equal(m.nexc, 0);
	assert_null(m.exc);
	free(f);
}

static void test_inconsistent(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	expect(f, make(f, F_EXC), CODE_LEN + 1, CVM_MISMATCH);
	f = fake_new();
	const void *id = make(f, F_EXC);
	put16((uint8_t *)f->cm, 42, 4); /* max_locals */
	expect(f, id, CODE_LEN, CVM_MISMATCH);
	f = fake_new();
	f->exc[1].handler_pc = CODE_LEN;
	expect(f, make(f, F_EXC), CODE_LEN, CVM_ENTRY);
	f = fake_new();
	f->exc[0].end_pc = f->exc[0].start_pc;
	expect(f, make(f, F_EXC | F_GENERIC), CODE_LEN, CVM_ENTRY);
	f = fake_new();
	f->exc[0].end_pc = CODE_LEN + 1;
	expect(f, make(f, F_EXC), CODE_LEN, CVM_ENTRY);
	/* A length running past the code: a wrong layout guess. */
	f = fake_new();
	id = make(f, F_EXC);
	put16((uint8_t *)f->cm, 24 * 8 - 2, 5000);
	expect(f, id, CODE_LEN, CVM_RANGE);
	f = fake_new();
	id = make(f, F_EXC | F_PARAMS);
	put16((uint8_t *)f->cm, 24 * 8 - 2, 0xffff); /* parameters */
	expect(f, id, CODE_LEN, CVM_RANGE);
	f = fake_new();
	id = make(f, F_EXC);
	int32_t huge = 1 << 28, tiny = 5;
	memcpy((uint8_t *)f->cm + 24, &huge, 4);
	expect(f, id, CODE_LEN, CVM_RANGE);
	f = fake_new();
	id = make(f, F_EXC);
	memcpy((uint8_t *)f->cm + 24, &tiny, 4);
	expect(f, id, CODE_LEN, CVM_RANGE);
}

static void test_unreadable(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	uint64_t slot = 0x10;
	make(f, F_EXC);
	expect(f, &slot, CODE_LEN, CVM_UNREADABLE); /* slot not readable */
	f = fake_new();
	const void *id = make(f, F_EXC);
	uint64_t bad = 0x1000;
	memcpy(f->method + 8, &bad, 8);
	expect(f, id, CODE_LEN, CVM_UNREADABLE);
	/* The tail lies beyond what can be read. */
	f = fake_new();
	id = make(f, F_EXC);
	regions[2].len = 48 + CODE_LEN;
	expect(f, id, CODE_LEN, CVM_UNREADABLE);
}

static void test_operands(void **state)
{
	(void)state;
	uint8_t pool[72] = { 0 };
	struct {
		int32_t len;
		uint16_t data[8];
	} arr = { 6, { 2, 0, 9, 1, 13, 0, 0, 0 } };
	uint64_t arr_p = (uint64_t)(uintptr_t)&arr, pool_p =
		(uint64_t)(uintptr_t)pool;
	int32_t count = 20;
	memcpy(pool + 60, &count, 4);
	nregions = 0;
	readable(pool, sizeof(pool));
	readable(&arr, sizeof(arr));
	uint16_t *ops;
	uint32_t len;
	/* No operands at all. */
	assert_int_equal(cvm_operands_read(pool_p, 20, &ops, &len), CVM_OK);
	assert_null(ops);
	memcpy(pool + 32, &arr_p, 8);
	assert_int_equal(cvm_operands_read(pool_p, 20, &ops, &len), CVM_OK);
	assert_int_equal(len, 6);
	assert_memory_equal(ops, arr.data, 12);
	free(ops);
	assert_int_equal(cvm_operands_read(pool_p, 21, &ops, &len),
			 CVM_MISMATCH);
	arr.len = -1;
	assert_int_equal(cvm_operands_read(pool_p, 20, &ops, &len), CVM_RANGE);
	arr.len = 4096; /* more than the array holds: the read fails */
	assert_int_equal(cvm_operands_read(pool_p, 20, &ops, &len),
			 CVM_UNREADABLE);
	assert_null(ops);
	assert_int_equal(cvm_operands_read(0x1000, 20, &ops, &len),
			 CVM_UNREADABLE);
}

static void test_stats_str(void **state)
{
	(void)state;
	struct cvm_stats s = { 0 };
	char buf[512];
	s.methods = 7;
	cvm_count(&s.fallback[CVM_ENTRY]);
	cvm_count(&s.bootstrap);
	cvm_stats_str(&s, buf, sizeof(buf));
	assert_non_null(strstr(buf, "7 rebuilt methods with exception tables"));
	assert_non_null(strstr(buf, "1 without (entry outside the code or "
				    "the constant pool 1)"));
	assert_non_null(strstr(buf, "1 rebuilt classes with BootstrapMethods, "
				    "0 not (none)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_behind_every_combination),
		cmocka_unit_test(test_no_table),
		cmocka_unit_test(test_inconsistent),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_operands),
		cmocka_unit_test(test_stats_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
