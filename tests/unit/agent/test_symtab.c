// SPDX-License-Identifier: MIT
/* agent/symtab.c on this test's own executable: several names found in
 * one pass at the addresses the loader gave them, an absent name told
 * from a file without a .symtab, and files that are no ELF at all. */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/symtab.c"

/* Global, so that the link keeps them in the .symtab by these names. */
__attribute__((used, noinline)) int jpb_symtab_probe_fn(int x)
{
	return x * 3 + 1;
}
__attribute__((used)) char jpb_symtab_probe_var[4096];

/* The executable comes first; its load bias is 0 unless it is a PIE. */
static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

static uint64_t file_value(const void *p)
{
	uint64_t bias = UINT64_MAX;
	dl_iterate_phdr(first_bias, &bias);
	assert_int_not_equal(bias, UINT64_MAX);
	return (uint64_t)(uintptr_t)p - bias;
}

static void test_many_names_one_pass(void **state)
{
	(void)state;
	struct symtab_want w[] = {
		{ .name = "jpb_symtab_probe_var" },
		{ .name = "jpb_symtab_probe_absent" },
		{ .name = "jpb_symtab_probe_fn" },
		{ .name = "jpb_symtab_probe_var" }, /* asked twice: both */
		{ .name = "jpb_symtab_probe_f" },   /* a prefix of a name */
	};
	assert_int_equal(symtab_find("/proc/self/exe", w, 5), 0);
	assert_true(w[0].found && w[2].found && w[3].found);
	assert_false(w[1].found);
	assert_false(w[4].found);
	assert_int_equal(w[0].value, file_value(jpb_symtab_probe_var));
	assert_int_equal(w[3].value, w[0].value);
	assert_int_equal(w[2].value, file_value((const void *)(uintptr_t)
						jpb_symtab_probe_fn));
	/* ASan may pad a global with its redzone; never smaller. */
	assert_true(w[0].size >= sizeof(jpb_symtab_probe_var));
	assert_true(w[2].size > 0);
	assert_int_equal(jpb_symtab_probe_fn(2), 7);
}

static void test_no_names(void **state)
{
	(void)state;
	struct symtab_want w[1] = { { .name = "unused", .found = 1 } };
	assert_int_equal(symtab_find("/proc/self/exe", w, 0), 0);
	assert_int_equal(w[0].found, 1); /* not among the N */
}

/* A file without a .symtab: no ELF (elf_begin gives a kind without
 * sections, the path a stripped library takes), or no file at all. */
static void test_no_symtab(void **state)
{
	(void)state;
	char path[] = "/tmp/jpb-symtab-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	struct symtab_want w[] = { { .name = "main", .found = 1 } };
	assert_int_equal(symtab_find(path, w, 1), -1);
	assert_false(w[0].found);
	unlink(path);
	w[0].found = 1;
	assert_int_equal(symtab_find(path, w, 1), -1);
	assert_false(w[0].found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_names_one_pass),
		cmocka_unit_test(test_no_names),
		cmocka_unit_test(test_no_symtab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
