// SPDX-License-Identifier: MIT
/* meta.json: the base keys every writer shares, and atomic saving. */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bundle.h"
#include "bundle_int.h"

#ifndef JPBPF_VERSION
#define JPBPF_VERSION "0.0.0-dev"
#endif

static json_t *cpu_object(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	char vendor[13] = { 0 };
	json_t *cpu = json_object();
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return cpu;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	json_object_set_new(cpu, "vendor", json_string(vendor));
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return cpu;
	/* Family and model as Intel SDM vol. 2 (CPUID.01H:EAX) defines. */
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model += ((a >> 16) & 0xf) << 4;
	json_object_set_new(cpu, "family", json_integer(family));
	json_object_set_new(cpu, "model", json_integer(model));
	json_object_set_new(cpu, "stepping", json_integer(a & 0xf));
	return cpu;
}

void *jpb_meta_new_base(void)
{
	struct utsname u;
	struct timespec ts;
	json_t *m = json_object();
	if (!m)
		return NULL;
	json_object_set_new(m, "format_version", json_integer(JPB_FORMAT_MAJOR));
	json_object_set_new(m, "format_minor", json_integer(JPB_FORMAT_MINOR));
	json_object_set_new(m, "tool_version", json_string(JPBPF_VERSION));
	if (uname(&u) == 0) {
		json_object_set_new(m, "host", json_string(u.nodename));
		json_object_set_new(m, "kernel", json_string(u.release));
		json_object_set_new(m, "arch", json_string(u.machine));
	}
	json_object_set_new(m, "cpu", cpu_object());
	json_object_set_new(m, "cpus_online",
			    json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	json_object_set_new(m, "created_ns",
			    json_integer((json_int_t)ts.tv_sec * 1000000000 +
					 ts.tv_nsec));
	clock_gettime(CLOCK_REALTIME, &ts);
	json_object_set_new(m, "created_unix_s", json_integer(ts.tv_sec));
	return m;
}

static int write_file(int fd, const char *text)
{
	size_t n = strlen(text);
	while (n) {
		ssize_t k = write(fd, text, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		text += k;
		n -= (size_t)k;
	}
	return write(fd, "\n", 1) == 1 ? 0 : -1;
}

int jpb_meta_save(struct jpb_bundle *b, const void *meta)
{
	char tmp[4200], path[4200];
	if (!b || !meta)
		return jpb_err_invalid;
	int n = snprintf(tmp, sizeof(tmp), "%s/meta.json.tmp.%d",
			jpb_bundle_dir(b), (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp) ||
	    jpb_bundle_path(b, "meta.json", path, sizeof(path)))
		return jpb_err_invalid;
	char *text = json_dumps(meta, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		return jpb_err_nomem;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -1 : write_file(fd, text);
	if (rc == 0)
		rc = fsync(fd);
	int e = errno;
	if (fd >= 0)
		close(fd);
	free(text);
	if (rc == 0 && rename(tmp, path) != 0) {
		rc = -1;
		e = errno;
	}
	if (rc != 0) {
		unlink(tmp);
		jpb_bundle_set_err(b, "%s: cannot write: %s", path, strerror(e));
		return jpb_errno_code(e);
	}
	return 0;
}
