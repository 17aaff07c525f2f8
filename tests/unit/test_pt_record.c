// SPDX-License-Identifier: MIT
/* The recorder's system-call path, as far as a machine without Intel PT
 * can drive it: argument checks, a PMU that does not exist, and a
 * software event standing in for intel_pt, which the kernel accepts with
 * jpbpf's exact attr (clockid, sample_id_all, inherit, context_switch,
 * watermarks) and maps the data area for, but which has no AUX area. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bundle.h"
#include "record/pt.h"

struct fixture {
	char dir[256];
	struct jpb_bundle *b;
	struct pt_caps caps;
	struct pt_config cfg;
	struct pt_target target;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TESTTMP");
	snprintf(f->dir, sizeof(f->dir), "%s/ptrec.XXXXXX", tmp ? tmp : "/tmp");
	if (!f || !mkdtemp(f->dir) || jpb_bundle_create(&f->b, f->dir))
		return -1;
	/* A PMU whose only field is "branch" at config bit 3: with TSC off
	 * the config word is 8, PERF_COUNT_SW_EMULATION_FAULTS for the
	 * software PMU. */
	assert_int_equal(pt_format_parse("branch", "config:3", &f->caps.formats[0]), 0);
	f->caps.nformats = 1;
	f->caps.paranoid = 2;
	f->caps.ncpus_online = f->caps.nr_cpus = 1;
	f->caps.cap_ipc_lock = 1;
	pt_config_default(&f->cfg);
	f->cfg.tsc = 0;
	f->cfg.aux_size = 64u << 10;
	f->cfg.data_size = 8u << 10;
	f->target.pid = getpid();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[300];
	jpb_bundle_free(f->b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void bad_arguments(void **state)
{
	struct fixture *f = *state;
	struct pt_recorder *r = (void *)1;
	char why[256];
	f->target.pid = 0;
	assert_int_equal(pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), pt_err_invalid);
	assert_null(r);
	f->target.pid = getpid();
	f->cfg.aux_size = 3000;
	assert_int_equal(pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), pt_err_invalid);
	assert_non_null(strstr(why, "power of two"));
	assert_null(r);
	pt_config_default(&f->cfg); /* tsc on: this PMU has no format/tsc */
	assert_int_equal(pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), pt_err_unsupported);
	assert_non_null(strstr(why, "format/tsc"));
	assert_int_equal(pt_recorder_close(NULL), 0);
}

static void no_such_pmu(void **state)
{
	struct fixture *f = *state;
	struct pt_recorder *r = (void *)1;
	char why[512] = "";
	f->caps.pmu_type = 0x7ffff000; /* no PMU has this type */
	int err = pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target, why,
				   sizeof(why));
	assert_null(r);
	if (err == pt_err_perm) {
		print_message("# perf_event_open not permitted here: %s\n", why);
		skip();
	}
	assert_int_equal(err, pt_err_io);
	assert_non_null(strstr(why, "perf_event_open(type 2147479552"));
	/* nothing that looks like a PT stream was left */
	const char *const *names;
	size_t n;
	assert_int_equal(jpb_bundle_list_streams(f->b, &names, &n), 0);
	assert_int_equal(n, 0);
}

static void software_stand_in(void **state)
{
	struct fixture *f = *state;
	struct pt_recorder *r = (void *)1;
	char why[512] = "";
	f->caps.pmu_type = PERF_TYPE_SOFTWARE;
	int err = pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target, why,
				   sizeof(why));
	assert_null(r);
	if (err == pt_err_perm && strstr(why, "perf_event_open")) {
		print_message("# perf_event_open not permitted here: %s\n", why);
		skip();
	}
	/* The kernel took the attr (no EINVAL) and the data mmap; only the
	 * AUX mmap, which software events lack, failed. */
	assert_int_equal(err, pt_err_io);
	assert_non_null(strstr(why, "AUX area"));
	assert_null(strstr(why, "perf_event_open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(no_such_pmu, setup, teardown),
		cmocka_unit_test_setup_teardown(software_stand_in, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
