// SPDX-License-Identifier: MIT
/* Discovering Intel PT: sysfs PMU description, permissions and CPUID. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "record/pt/pt.h"

#define PT_SYSFS "sys/bus/event_source/devices/intel_pt"
#define WHAT_WORKS \
	"jpbpf can still record everything else with --no-pt and decode " \
	"bundles recorded elsewhere"

const char *jpb_pt_errstr(int err)
{
	switch (err) {
	case jpb_pt_ok: return "success";
	case jpb_pt_err_no_pmu: return "no Intel PT PMU";
	case jpb_pt_err_paranoid: return "perf_event_paranoid forbids Intel PT";
	case jpb_pt_err_perm: return "missing capability for Intel PT";
	case jpb_pt_err_sysfs: return "unreadable intel_pt sysfs";
	case jpb_pt_err_unsupported: return "option not supported by this PT";
	case jpb_pt_err_invalid: return "invalid argument";
	case jpb_pt_err_nomem: return "out of memory";
	case jpb_pt_err_io: return "system call failed";
	case jpb_pt_err_bundle: return "bundle write failed";
	case jpb_pt_err_overflow: return "ring pointers inconsistent";
	}
	return "unknown PT error";
}

/* ROOT/REL into BUF (NUL-terminated, trailing newline kept).  0 or -errno. */
static int read_small(const char *root, const char *rel, char *buf,
		      size_t size)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, size - 1, f);
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	buf[n] = 0;
	return err;
}

static int parse_uint(const char *s, int base, uint64_t *v)
{
	char *end;
	while (isspace((unsigned char)*s))
		s++;
	if (!isxdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	return *end ? -1 : 0;
}

int jpb_pt_format_parse(const char *name, const char *text, struct jpb_pt_format *f)
{
	unsigned lo, hi;
	char word[16];
	int n = 0;
	memset(f, 0, sizeof(*f));
	if (strlen(name) >= sizeof(f->name))
		return jpb_pt_err_invalid;
	strcpy(f->name, name);
	if (sscanf(text, "%15[a-z0-9]:%u%n", word, &lo, &n) != 2)
		return jpb_pt_err_sysfs;
	hi = lo;
	if (text[n] == '-') {
		int m = 0;
		if (sscanf(text + n + 1, "%u%n", &hi, &m) != 1)
			return jpb_pt_err_sysfs;
		n += 1 + m;
	}
	while (isspace((unsigned char)text[n]))
		n++;
	/* Non-contiguous fields ("config:0-3,8") are legal sysfs, but no
	 * Intel PT field has one; refusing beats setting wrong bits. */
	if (text[n] || hi < lo || hi > 63)
		return jpb_pt_err_sysfs;
	if (!strcmp(word, "config"))
		f->word = 0;
	else if (!strcmp(word, "config1"))
		f->word = 1;
	else if (!strcmp(word, "config2"))
		f->word = 2;
	else if (!strcmp(word, "config3"))
		f->word = 3;
	else
		return jpb_pt_err_sysfs;
	f->lo = lo;
	f->hi = hi;
	return 0;
}

const struct jpb_pt_format *jpb_pt_caps_format(const struct jpb_pt_caps *caps,
				       const char *name)
{
	for (size_t i = 0; i < caps->nformats; i++)
		if (!strcmp(caps->formats[i].name, name))
			return &caps->formats[i];
	return NULL;
}

int jpb_pt_caps_get(const struct jpb_pt_caps *caps, const char *name, uint32_t *v)
{
	for (size_t i = 0; i < caps->ncaps; i++)
		if (!strcmp(caps->caps[i].name, name)) {
			*v = caps->caps[i].value;
			return 0;
		}
	return -1;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Call FN for each regular entry of ROOT/REL in name order (stable meta). */
static int for_each_file(const char *root, const char *rel,
			 int (*fn)(struct jpb_pt_caps *, const char *, const char *),
			 struct jpb_pt_caps *caps, char *why, size_t size)
{
	char path[4096], text[256], file[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(why, size, "cannot list %s: %s", path, strerror(errno));
		return jpb_pt_err_sysfs;
	}
	char *names[64];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64)
		if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", rel, names[i]);
		if (!err && read_small(root, file, text, sizeof(text)) == 0 &&
		    (err = fn(caps, names[i], text)))
			snprintf(why, size, "%s/%s: cannot parse '%.40s'", path,
				 names[i], text);
		free(names[i]);
	}
	return err;
}

static int add_format(struct jpb_pt_caps *caps, const char *name, const char *text)
{
	if (caps->nformats == JPB_PT_MAX_FORMATS || strlen(name) >= JPB_PT_NAME_MAX)
		return 0; /* more fields than jpbpf knows of: none it uses */
	return jpb_pt_format_parse(name, text, &caps->formats[caps->nformats++]);
}

static int add_cap(struct jpb_pt_caps *caps, const char *name, const char *text)
{
	uint64_t v;
	if (caps->ncaps == JPB_PT_MAX_CAPS || strlen(name) >= JPB_PT_NAME_MAX)
		return 0;
	if (parse_uint(text, 16, &v) || v > UINT32_MAX)
		return jpb_pt_err_sysfs;
	strcpy(caps->caps[caps->ncaps].name, name);
	caps->caps[caps->ncaps++].value = (uint32_t)v;
	return 0;
}

/* "0-3,5,7-8" -> count and highest + 1. */
static void parse_cpu_list(const char *s, int *count, int *bound)
{
	*count = 0;
	*bound = 0;
	while (*s && !isspace((unsigned char)*s)) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;
		if (end == s)
			return;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (hi >= lo) {
			*count += (int)(hi - lo + 1);
			if (hi + 1 > *bound)
				*bound = (int)hi + 1;
		}
		s = *end == ',' ? end + 1 : end;
	}
}

/* CapEff from a /proc/PID/status text; 0 if absent. */
static uint64_t cap_eff(const char *status)
{
	const char *p = strstr(status, "CapEff:");
	uint64_t v = 0;
	if (p)
		v = strtoull(p + 7, NULL, 16);
	return v;
}

#define CAP_SYS_ADMIN_BIT 21
#define CAP_IPC_LOCK_BIT 14
#define CAP_PERFMON_BIT 38

static void probe_access(const char *root, struct jpb_pt_caps *caps)
{
	char text[4096];
	uint64_t v;
	caps->paranoid = 2; /* the kernel default when the file is absent */
	if (read_small(root, "proc/sys/kernel/perf_event_paranoid", text,
		       sizeof(text)) == 0) {
		long p = strtol(text, NULL, 10);
		caps->paranoid = (int)p;
	}
	if (read_small(root, "proc/sys/kernel/perf_event_mlock_kb", text,
		       sizeof(text)) == 0 && parse_uint(text, 10, &v) == 0)
		caps->mlock_kb = v;
	if (read_small(root, "proc/self/status", text, sizeof(text)) == 0) {
		uint64_t eff = cap_eff(text);
		caps->cap_perfmon = !!(eff & ((1ull << CAP_PERFMON_BIT) |
					      (1ull << CAP_SYS_ADMIN_BIT)));
		caps->cap_ipc_lock = !!(eff & (1ull << CAP_IPC_LOCK_BIT));
	}
	if (read_small(root, "sys/devices/system/cpu/online", text,
		       sizeof(text)) == 0)
		parse_cpu_list(text, &caps->ncpus_online, &caps->nr_cpus);
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		caps->memlock_kb = rl.rlim_cur == RLIM_INFINITY ?
			UINT64_MAX : rl.rlim_cur / 1024;
}

static void probe_timing(const char *root, struct jpb_pt_caps *caps)
{
	char text[64];
	uint64_t v;
	unsigned n, d;
	if (read_small(root, PT_SYSFS "/max_nonturbo_ratio", text,
		       sizeof(text)) == 0 && parse_uint(text, 10, &v) == 0)
		caps->max_nonturbo_ratio = (uint32_t)v;
	if (read_small(root, PT_SYSFS "/tsc_art_ratio", text, sizeof(text)) == 0 &&
	    sscanf(text, "%u:%u", &n, &d) == 2) {
		caps->tsc_art_num = n;
		caps->tsc_art_den = d;
	}
}

/* Why there is no PMU, from what CPUID says. */
static void no_pmu_reason(const struct jpb_pt_cpuid *c, char *why, size_t size)
{
	char cause[96];
	if (c->vendor[0] && strcmp(c->vendor, "GenuineIntel"))
		snprintf(cause, sizeof(cause), "this CPU (%s) does not have it",
			 c->vendor);
	else if (c->pt_bit)
		snprintf(cause, sizeof(cause), "the CPU has it but the kernel "
			 "exposes no intel_pt PMU");
	else if (c->hypervisor)
		snprintf(cause, sizeof(cause), "this VM does not pass it through");
	else
		snprintf(cause, sizeof(cause), "this CPU does not have it");
	snprintf(why, size, "no Intel PT: %s (no /%s); " WHAT_WORKS, cause,
		 PT_SYSFS);
}

int jpb_pt_probe_with(const char *root, jpb_pt_cpuid_fn fn, struct jpb_pt_caps *caps,
		  char *why, size_t size)
{
	char text[64];
	uint64_t type;
	memset(caps, 0, sizeof(*caps));
	if (fn)
		jpb_pt_cpuid_read(fn, &caps->cpuid);
	probe_access(root, caps);
	if (read_small(root, PT_SYSFS "/type", text, sizeof(text)) < 0) {
		no_pmu_reason(&caps->cpuid, why, size);
		return jpb_pt_err_no_pmu;
	}
	if (parse_uint(text, 10, &type) || type == 0 || type > INT32_MAX) {
		snprintf(why, size, "/%s/type: '%.20s' is not a PMU type",
			 PT_SYSFS, text);
		return jpb_pt_err_sysfs;
	}
	caps->pmu_type = (int)type;
	int err = for_each_file(root, PT_SYSFS "/format", add_format, caps, why,
				size);
	if (!err)
		err = for_each_file(root, PT_SYSFS "/caps", add_cap, caps, why,
				    size);
	if (err)
		return err;
	probe_timing(root, caps);
	if (caps->paranoid > 2 && !caps->cap_perfmon) {
		snprintf(why, size,
			 "kernel.perf_event_paranoid is %d and jpbpf lacks "
			 "CAP_PERFMON/CAP_SYS_ADMIN, so Intel PT cannot be "
			 "used: run as root, grant CAP_PERFMON, or set "
			 "kernel.perf_event_paranoid=2; " WHAT_WORKS,
			 caps->paranoid);
		return jpb_pt_err_paranoid;
	}
	return 0;
}

int jpb_pt_probe(const char *sysfs_root, struct jpb_pt_caps *caps, char *why,
	     size_t size)
{
	const char *root = sysfs_root && *sysfs_root ? sysfs_root : "/";
	/* CPUID describes this machine, not a fake tree. */
	jpb_pt_cpuid_fn fn = strcmp(root, "/") ? NULL : jpb_pt_cpuid_native;
	return jpb_pt_probe_with(strcmp(root, "/") ? root : "", fn, caps, why, size);
}

void jpb_pt_cpuid_native(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	__cpuid_count(leaf, subleaf, a, b, c, d);
	regs[0] = a;
	regs[1] = b;
	regs[2] = c;
	regs[3] = d;
#else
	(void)leaf;
	(void)subleaf;
	regs[0] = regs[1] = regs[2] = regs[3] = 0;
#endif
}

void jpb_pt_cpuid_read(jpb_pt_cpuid_fn fn, struct jpb_pt_cpuid *out)
{
	uint32_t r[4];
	memset(out, 0, sizeof(*out));
	fn(0, 0, r);
	out->max_leaf = r[0];
	memcpy(out->vendor, &r[1], 4);
	memcpy(out->vendor + 4, &r[3], 4);
	memcpy(out->vendor + 8, &r[2], 4);
	if (out->max_leaf < 1)
		return;
	fn(1, 0, r);
	/* Family/model as the SDM (CPUID.01H:EAX) combines them; libipt's
	 * errata table is keyed on these. */
	out->family = (r[0] >> 8) & 0xf;
	out->model = (r[0] >> 4) & 0xf;
	if (out->family == 0xf)
		out->family += (r[0] >> 20) & 0xff;
	if (out->family == 0x6 || out->family >= 0xf)
		out->model += ((r[0] >> 16) & 0xf) << 4;
	out->stepping = r[0] & 0xf;
	out->hypervisor = !!(r[2] & (1u << 31));
	/* Leaves 0x14+ are Intel's; other vendors may reuse the numbers. */
	if (strcmp(out->vendor, "GenuineIntel"))
		return;
	if (out->max_leaf >= 7) {
		fn(7, 0, r);
		out->pt_bit = !!(r[1] & (1u << 25));
	}
	if (out->max_leaf >= 0x14) {
		out->has_leaf14 = 1;
		fn(0x14, 0, out->leaf14_0);
		if (out->leaf14_0[0] >= 1)
			fn(0x14, 1, out->leaf14_1);
	}
	if (out->max_leaf >= 0x15) {
		fn(0x15, 0, r);
		out->has_leaf15 = 1;
		out->tsc_ctc_den = r[0];
		out->tsc_ctc_num = r[1];
		out->crystal_hz = r[2];
	}
	if (out->max_leaf >= 0x16) {
		fn(0x16, 0, r);
		out->base_mhz = r[0] & 0xffff;
	}
}
