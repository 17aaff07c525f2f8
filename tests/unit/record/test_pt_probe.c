// SPDX-License-Identifier: MIT
/* PT probe and configuration from sample sysfs trees (tests/data/pt-sysfs,
 * format strings as the kernel's arch/x86/events/intel/pt.c declares). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "pt_testdata.h"
#include "record/pt/pt.h"

static char data[PATH_MAX];

static void tree(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", data, name);
}

/* A copy of tree NAME in a scratch directory, for variants. */
static void scratch_tree(char *out, size_t size, const char *name)
{
	char src[PATH_MAX + 64], cmd[3 * PATH_MAX];
	const char *tmp = getenv("TESTTMP");
	snprintf(out, size, "%s/ptsys.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(out));
	tree(src, sizeof(src), name);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/.' '%s/'", src, out);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_tree(const char *root)
{
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* A fake AMD / Intel CPU for the CPUID guards. */
static uint32_t fake_max_leaf;
static const char *fake_vendor;
static int fake_leaf14_calls;

static void fake_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	memset(r, 0, 4 * sizeof(r[0]));
	if (leaf == 0) {
		r[0] = fake_max_leaf;
		memcpy(&r[1], fake_vendor, 4);
		memcpy(&r[3], fake_vendor + 4, 4);
		memcpy(&r[2], fake_vendor + 8, 4);
	} else if (leaf == 1) {
		/* family 6, model 0x55 (ext 5, base 5), stepping 4 */
		r[0] = (5u << 16) | (6u << 8) | (5u << 4) | 4u;
		r[2] = 1u << 31;
	} else if (leaf == 7) {
		r[1] = 1u << 25;
	} else if (leaf == 0x14) {
		fake_leaf14_calls++;
		r[0] = sub == 0 ? 1 : 0x3fff0249;
		r[1] = sub == 0 ? 0xf : 0;
	} else if (leaf == 0x15) {
		r[0] = 2;
		r[1] = 184;
		r[2] = 24000000;
	}
}

static void probe_skylake(void **state)
{
	(void)state;
	char root[PATH_MAX + 64], why[512] = "";
	struct jpb_pt_caps caps;
	tree(root, sizeof(root), "skylake");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), 0);
	assert_int_equal(caps.pmu_type, 8);
	assert_int_equal(caps.paranoid, 2);
	assert_int_equal(caps.mlock_kb, 516);
	assert_int_equal(caps.ncpus_online, 4);
	assert_int_equal(caps.nr_cpus, 4);
	assert_false(caps.cap_perfmon);
	const struct jpb_pt_format *f = jpb_pt_caps_format(&caps, "mtc_period");
	assert_non_null(f);
	assert_int_equal(f->word, 0);
	assert_int_equal(f->lo, 14);
	assert_int_equal(f->hi, 17);
	f = jpb_pt_caps_format(&caps, "notnt");
	assert_non_null(f);
	assert_int_equal(f->lo, 55);
	uint32_t v;
	assert_int_equal(jpb_pt_caps_get(&caps, "mtc_periods", &v), 0);
	assert_int_equal(v, 0x249); /* caps files are hex */
	assert_int_equal(jpb_pt_caps_get(&caps, "cycle_thresholds", &v), 0);
	assert_int_equal(v, 0x3fff);
	assert_int_equal(jpb_pt_caps_get(&caps, "nonexistent", &v), -1);
	assert_int_equal(caps.max_nonturbo_ratio, 22);
	assert_int_equal(caps.tsc_art_num, 200);
	assert_int_equal(caps.tsc_art_den, 2);
}

static void probe_no_pmu(void **state)
{
	(void)state;
	char root[PATH_MAX + 64], why[512] = "";
	struct jpb_pt_caps caps;
	tree(root, sizeof(root), "nopt");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), jpb_pt_err_no_pmu);
	assert_int_equal(caps.pmu_type, 0);
	assert_non_null(strstr(why, "no Intel PT"));
	assert_non_null(strstr(why, "/sys/bus/event_source/devices/intel_pt"));
	assert_non_null(strstr(why, "--no-pt"));
	assert_non_null(strstr(why, "decode bundles recorded elsewhere"));
	assert_null(strchr(why, '\n'));

	/* With CPUID the reason names the vendor, or the VM. */
	fake_vendor = "AuthenticAMD";
	fake_max_leaf = 0x10;
	assert_int_equal(jpb_pt_probe_with(root, fake_cpuid, &caps, why, sizeof(why)),
			 jpb_pt_err_no_pmu);
	assert_non_null(strstr(why, "no Intel PT: this CPU (AuthenticAMD) does not have it"));
	fake_vendor = "GenuineIntel";
	fake_max_leaf = 0x6; /* an old Intel, in a VM (hypervisor bit) */
	assert_int_equal(jpb_pt_probe_with(root, fake_cpuid, &caps, why, sizeof(why)),
			 jpb_pt_err_no_pmu);
	assert_non_null(strstr(why, "no Intel PT: this VM does not pass it through"));
	fake_max_leaf = 0x16; /* PT in CPUID but no PMU: the kernel's fault */
	assert_int_equal(jpb_pt_probe_with(root, fake_cpuid, &caps, why, sizeof(why)),
			 jpb_pt_err_no_pmu);
	assert_non_null(strstr(why, "kernel exposes no intel_pt PMU"));
}

static void probe_paranoid(void **state)
{
	(void)state;
	char root[PATH_MAX + 64], why[512];
	struct jpb_pt_caps caps;
	scratch_tree(root, sizeof(root), "skylake");
	static const struct { const char *paranoid; int caps; int want; } cases[] = {
		{ "-1\n", 0, 0 }, { "0\n", 0, 0 }, { "1\n", 0, 0 }, { "2\n", 0, 0 },
		{ "3\n", 0, jpb_pt_err_paranoid }, { "4\n", 0, jpb_pt_err_paranoid },
		{ "3\n", 1, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put(root, "proc/sys/kernel/perf_event_paranoid", cases[i].paranoid);
		/* CAP_PERFMON is bit 38 */
		put(root, "proc/self/status", cases[i].caps ?
		    "CapEff:\t0000004000000000\n" : "CapEff:\t0000000000000000\n");
		why[0] = 0;
		int err = jpb_pt_probe(root, &caps, why, sizeof(why));
		assert_int_equal(err, cases[i].want);
		assert_int_equal(caps.paranoid, atoi(cases[i].paranoid));
		if (err) {
			assert_non_null(strstr(why, "perf_event_paranoid is"));
			assert_non_null(strstr(why, "CAP_PERFMON"));
			assert_non_null(strstr(why, "--no-pt"));
		}
	}
	/* CAP_SYS_ADMIN (bit 21) counts as well. */
	put(root, "proc/sys/kernel/perf_event_paranoid", "3\n");
	put(root, "proc/self/status", "CapEff:\t0000000000200000\n");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), 0);
	assert_true(caps.cap_perfmon);
	assert_false(caps.cap_ipc_lock);
	rm_tree(root);
}

static void probe_bad_sysfs(void **state)
{
	(void)state;
	char root[PATH_MAX + 64], why[512];
	struct jpb_pt_caps caps;
	scratch_tree(root, sizeof(root), "skylake");
	put(root, "sys/bus/event_source/devices/intel_pt/format/tsc", "config:x\n");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), jpb_pt_err_sysfs);
	assert_non_null(strstr(why, "format/tsc"));
	put(root, "sys/bus/event_source/devices/intel_pt/format/tsc", "config:10\n");
	put(root, "sys/bus/event_source/devices/intel_pt/type", "pt\n");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), jpb_pt_err_sysfs);
	rm_tree(root);
}

static void format_parse(void **state)
{
	(void)state;
	struct jpb_pt_format f;
	assert_int_equal(jpb_pt_format_parse("a", "config:0\n", &f), 0);
	assert_int_equal(f.lo, 0);
	assert_int_equal(f.hi, 0);
	assert_int_equal(jpb_pt_format_parse("a", "config1:3-9", &f), 0);
	assert_int_equal(f.word, 1);
	assert_int_equal(f.hi, 9);
	assert_int_equal(jpb_pt_format_parse("a", "config:9-3", &f), jpb_pt_err_sysfs);
	assert_int_equal(jpb_pt_format_parse("a", "config:64", &f), jpb_pt_err_sysfs);
	assert_int_equal(jpb_pt_format_parse("a", "config:0-3,8", &f), jpb_pt_err_sysfs);
	assert_int_equal(jpb_pt_format_parse("a", "cfg:1", &f), jpb_pt_err_sysfs);
	assert_int_equal(jpb_pt_format_parse("a", "", &f), jpb_pt_err_sysfs);
}

static void load(struct jpb_pt_caps *caps, const char *name)
{
	char root[PATH_MAX + 64], why[512];
	tree(root, sizeof(root), name);
	assert_int_equal(jpb_pt_probe(root, caps, why, sizeof(why)), 0);
}

static void config_default_skylake(void **state)
{
	(void)state;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	char why[512] = "";
	uint64_t config;
	load(&caps, "skylake");
	jpb_pt_config_default(&cfg);
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	/* pt (0) | mtc (9) | tsc (10) | branch (13) | mtc_period 3 << 14 |
	 * psb_period 3 << 24 */
	uint64_t want = 1ull | 1ull << 9 | 1ull << 10 | 1ull << 13 | 3ull << 14 |
			3ull << 24;
	assert_int_equal(config, want);

	cfg.cyc = 1;
	cfg.cyc_thresh = 2;
	cfg.noretcomp = 1;
	cfg.mtc_period = 6;
	cfg.psb_period = 0;
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	want = 1ull | 1ull << 1 | 1ull << 9 | 1ull << 10 | 1ull << 11 |
	       1ull << 13 | 6ull << 14 | 2ull << 19;
	assert_int_equal(config, want);

	cfg.tsc = 0;
	cfg.mtc = 0;
	cfg.cyc = 0;
	cfg.noretcomp = 0;
	cfg.psb_period = -1;
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	assert_int_equal(config, 1ull | 1ull << 13 | 3ull << 24);
}

/* The bit positions come from format/, not from jpbpf: move them. */
static void config_follows_format(void **state)
{
	(void)state;
	char root[PATH_MAX + 64], why[512];
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	uint64_t config;
	scratch_tree(root, sizeof(root), "skylake");
	put(root, "sys/bus/event_source/devices/intel_pt/format/tsc", "config:40\n");
	put(root, "sys/bus/event_source/devices/intel_pt/format/mtc_period",
	    "config:44-47\n");
	assert_int_equal(jpb_pt_probe(root, &caps, why, sizeof(why)), 0);
	jpb_pt_config_default(&cfg);
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	assert_true(config & 1ull << 40);
	assert_false(config & 1ull << 10);
	assert_int_equal((config >> 44) & 0xf, 3);
	assert_int_equal((config >> 14) & 0xf, 0);
	rm_tree(root);
}

static void config_unsupported(void **state)
{
	(void)state;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	char why[512];
	uint64_t config = 123;
	load(&caps, "skylake");
	jpb_pt_config_default(&cfg);
	cfg.mtc_period = 1; /* 0x249 has bits 0, 3, 6, 9 */
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)),
			 jpb_pt_err_unsupported);
	assert_non_null(strstr(why, "MTC with period 1"));
	assert_int_equal(config, 0);
	jpb_pt_config_default(&cfg);
	cfg.psb_period = 7; /* psb_periods 0x3f: 0..5 */
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)),
			 jpb_pt_err_unsupported);
	jpb_pt_config_default(&cfg);
	cfg.cyc = 1;
	cfg.cyc_thresh = 14; /* 0x3fff: 0..13 */
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)),
			 jpb_pt_err_unsupported);

	/* Broadwell: no MTC, CYC or PSB period; the defaults still work. */
	load(&caps, "broadwell");
	jpb_pt_config_default(&cfg);
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	assert_int_equal(config, 1ull | 1ull << 10 | 1ull << 13);
	cfg.mtc = 1;
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)),
			 jpb_pt_err_unsupported);
	jpb_pt_config_default(&cfg);
	cfg.cyc = 1;
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)),
			 jpb_pt_err_unsupported);
	assert_non_null(strstr(why, "CYC"));
}

static void format_set_width(void **state)
{
	(void)state;
	struct jpb_pt_caps caps;
	uint64_t w[4] = { 0 };
	load(&caps, "skylake");
	assert_int_equal(jpb_pt_format_set(&caps, "mtc_period", 15, w), 0);
	assert_int_equal(w[0], 15ull << 14);
	assert_int_equal(jpb_pt_format_set(&caps, "mtc_period", 16, w), jpb_pt_err_invalid);
	assert_int_equal(jpb_pt_format_set(&caps, "mtc_period", 2, w), 0);
	assert_int_equal(w[0], 2ull << 14); /* replaced, not OR-ed */
	assert_int_equal(jpb_pt_format_set(&caps, "nosuch", 1, w), jpb_pt_err_unsupported);
}

static void config_check(void **state)
{
	(void)state;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	char why[512];
	load(&caps, "skylake");
	caps.memlock_kb = 64;
	jpb_pt_config_default(&cfg);
	/* 4 CPUs x 516 KiB + 64 KiB: one ring of 4 MiB does not fit */
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)),
			 jpb_pt_err_perm);
	assert_non_null(strstr(why, "CAP_IPC_LOCK"));
	assert_non_null(strstr(why, "4 MiB"));
	caps.cap_ipc_lock = 1;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)), 0);
	caps.cap_ipc_lock = 0;
	cfg.aux_size = 128u << 10; /* perf's unprivileged default */
	cfg.data_size = 4096;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)), 0);
	cfg.aux_size = 3u << 20;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)),
			 jpb_pt_err_invalid);
	jpb_pt_config_default(&cfg);
	caps.cap_ipc_lock = 1;
	cfg.snapshot_size = 8u << 20;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)),
			 jpb_pt_err_invalid);
	assert_non_null(strstr(why, "--snapshot"));
	cfg.snapshot_size = 0;
	cfg.exclude_kernel = 0;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)),
			 jpb_pt_err_paranoid);
	caps.paranoid = 1;
	assert_int_equal(jpb_pt_config_check(&caps, &cfg, 4, why, sizeof(why)), 0);
}

static void cpuid_guards(void **state)
{
	(void)state;
	struct jpb_pt_cpuid c;
	fake_vendor = "AuthenticAMD";
	fake_max_leaf = 0x16;
	fake_leaf14_calls = 0;
	jpb_pt_cpuid_read(fake_cpuid, &c);
	assert_string_equal(c.vendor, "AuthenticAMD");
	assert_false(c.has_leaf14);
	assert_false(c.has_leaf15);
	assert_int_equal(fake_leaf14_calls, 0);
	assert_int_equal(c.family, 6);
	assert_int_equal(c.model, 0x55);
	assert_int_equal(c.stepping, 4);

	fake_vendor = "GenuineIntel";
	fake_max_leaf = 0x13;
	jpb_pt_cpuid_read(fake_cpuid, &c);
	assert_false(c.has_leaf14);
	assert_int_equal(fake_leaf14_calls, 0);
	assert_true(c.pt_bit);

	fake_max_leaf = 0x15;
	jpb_pt_cpuid_read(fake_cpuid, &c);
	assert_true(c.has_leaf14);
	assert_int_equal(fake_leaf14_calls, 2);
	assert_int_equal(c.leaf14_1[0], 0x3fff0249);
	assert_true(c.has_leaf15);
	assert_int_equal(c.tsc_ctc_den, 2);
	assert_int_equal(c.tsc_ctc_num, 184);
	assert_int_equal(c.crystal_hz, 24000000);
	assert_int_equal(c.base_mhz, 0);
}

static void meta(void **state)
{
	(void)state;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	char why[512];
	uint64_t config;
	load(&caps, "skylake");
	fake_vendor = "GenuineIntel";
	fake_max_leaf = 0x16;
	jpb_pt_cpuid_read(fake_cpuid, &caps.cpuid);
	jpb_pt_config_default(&cfg);
	assert_int_equal(jpb_pt_config_word(&caps, &cfg, &config, why, sizeof(why)), 0);
	json_t *m = jpb_pt_meta_json(&caps, &cfg, config);
	assert_non_null(m);
	assert_int_equal(json_integer_value(json_object_get(m, "pmu_type")), 8);
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(m, "format"), "psb_period")), "config:24-27");
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(m, "caps"), "mtc_periods")), 0x249);
	json_t *c = json_object_get(m, "config");
	assert_int_equal(json_integer_value(json_object_get(c, "config")),
			 (json_int_t)config);
	assert_string_equal(json_string_value(json_object_get(c, "mode")),
			    "per-cpu");
	json_t *id = json_object_get(m, "cpuid");
	assert_int_equal(json_integer_value(json_object_get(id, "cpuid_0x15_ebx")),
			 184);
	assert_int_equal(json_integer_value(json_object_get(id, "model")), 0x55);
	json_decref(m);
}

static void options(void **state)
{
	(void)state;
	struct jpb_pt_config cfg;
	char why[256];
	uint64_t v;
	assert_int_equal(jpb_pt_parse_size("4M", &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(jpb_pt_parse_size("512k", &v), 0);
	assert_int_equal(v, 512u << 10);
	assert_int_equal(jpb_pt_parse_size("8MiB", &v), 0);
	assert_int_equal(v, 8u << 20);
	assert_int_equal(jpb_pt_parse_size("65536", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(jpb_pt_parse_size("0", &v), jpb_pt_err_invalid);
	assert_int_equal(jpb_pt_parse_size("-1M", &v), jpb_pt_err_invalid);
	assert_int_equal(jpb_pt_parse_size("4X", &v), jpb_pt_err_invalid);
	assert_int_equal(jpb_pt_parse_size("99999999999999999999G", &v), jpb_pt_err_invalid);

	jpb_pt_config_default(&cfg);
	assert_int_equal(jpb_pt_config_option(&cfg, "snapshot", NULL, why, sizeof(why)), 0);
	assert_int_equal(cfg.snapshot_size, cfg.aux_size);
	/* "the whole buffer" follows a later --buffer-size */
	assert_int_equal(jpb_pt_config_option(&cfg, "buffer-size", "16M", why,
					  sizeof(why)), 0);
	assert_int_equal(cfg.aux_size, 16u << 20);
	assert_int_equal(cfg.snapshot_size, 16u << 20);
	assert_int_equal(jpb_pt_config_option(&cfg, "snapshot", "1M", why, sizeof(why)), 0);
	assert_int_equal(cfg.snapshot_size, 1u << 20);
	assert_int_equal(jpb_pt_config_option(&cfg, "cyc", "2", why, sizeof(why)), 0);
	assert_true(cfg.cyc);
	assert_int_equal(cfg.cyc_thresh, 2);
	assert_int_equal(jpb_pt_config_option(&cfg, "mtc-period", "16", why, sizeof(why)),
			 jpb_pt_err_invalid);
	assert_non_null(strstr(why, "--mtc-period"));
	assert_int_equal(jpb_pt_config_option(&cfg, "mtc-period", "6", why, sizeof(why)), 0);
	assert_int_equal(cfg.mtc_period, 6);
	assert_int_equal(jpb_pt_config_option(&cfg, "kernel", NULL, why, sizeof(why)), 0);
	assert_false(cfg.exclude_kernel);
	assert_int_equal(jpb_pt_config_option(&cfg, "pt-per-thread", NULL, why,
					  sizeof(why)), 0);
	assert_int_equal(cfg.mode, JPB_PT_MODE_PER_THREAD);
	assert_int_equal(jpb_pt_config_option(&cfg, "buffer-size", "lots", why,
					  sizeof(why)), jpb_pt_err_invalid);
	assert_non_null(strstr(why, "--buffer-size"));
	assert_int_equal(jpb_pt_config_option(&cfg, "bogus", NULL, why, sizeof(why)),
			 jpb_pt_err_invalid);
	/* every advertised option is accepted with a sensible argument */
	for (const struct jpb_pt_option *o = jpb_pt_options; o->name; o++) {
		jpb_pt_config_default(&cfg);
		const char *arg = o->has_arg == 1 ?
			(strstr(o->name, "size") ? "8M" : "3") : NULL;
		assert_int_equal(jpb_pt_config_option(&cfg, o->name, arg, why,
						  sizeof(why)), 0);
		assert_non_null(strstr(o->help, o->name));
	}
}

int main(void)
{
	if (pt_testdata(data, sizeof(data))) {
		/* The data is part of the repository: not finding it is a
		 * failure, not a reason to skip. */
		puts("1..1\nnot ok 1 - pt probe: cannot find tests/data/pt-sysfs "
		     "(run from the repository or set BUILD)");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe_skylake),
		cmocka_unit_test(probe_no_pmu),
		cmocka_unit_test(probe_paranoid),
		cmocka_unit_test(probe_bad_sysfs),
		cmocka_unit_test(format_parse),
		cmocka_unit_test(config_default_skylake),
		cmocka_unit_test(config_follows_format),
		cmocka_unit_test(config_unsupported),
		cmocka_unit_test(format_set_width),
		cmocka_unit_test(config_check),
		cmocka_unit_test(cpuid_guards),
		cmocka_unit_test(meta),
		cmocka_unit_test(options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
