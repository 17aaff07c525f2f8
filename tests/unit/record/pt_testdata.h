/* SPDX-License-Identifier: MIT */
/* Locating tests/data/pt-sysfs for the PT unit tests, wherever the build
 * directory is: upwards from the working directory, then from the binary. */
#ifndef JPBPF_PT_TESTDATA_H
#define JPBPF_PT_TESTDATA_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int pt_td_try(char *dir, char *out, size_t size)
{
	struct stat st;
	for (;;) {
		snprintf(out, size, "%s/tests/data/pt-sysfs", dir);
		if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -1;
		*slash = 0;
	}
}

/* Fills OUT with the absolute path of tests/data/pt-sysfs; -1 if absent.
 * Looks up from the working directory, from $BUILD and $JPBPF (which
 * tests/run exports) and from the test binary itself. */
static inline int pt_testdata(char *out, size_t size)
{
	char dir[PATH_MAX];
	const char *env[] = { getenv("BUILD"), getenv("JPBPF") };
	if (getcwd(dir, sizeof(dir)) && pt_td_try(dir, out, size) == 0)
		return 0;
	for (size_t i = 0; i < 2; i++)
		if (env[i] && env[i][0] == '/' && strlen(env[i]) < sizeof(dir)) {
			strcpy(dir, env[i]);
			if (pt_td_try(dir, out, size) == 0)
				return 0;
		}
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return -1;
	dir[n] = 0;
	return pt_td_try(dir, out, size);
}

#endif
