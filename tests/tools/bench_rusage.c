// SPDX-License-Identifier: MIT
/*
 * bench_rusage OUT CMD [ARGS...]: run CMD and write its wall time, CPU
 * time and peak RSS to OUT as one line
 *   wall_s=W user_s=U sys_s=S maxrss_kb=M
 * for the bench harnesses (bench/fig-decode, bench/fig-scaling).  The
 * figures come from wait4(), so they cover CMD and nothing else (no shell,
 * no /usr/bin/time, which Debian does not install by default).  Exits with
 * CMD's status, or 128 + the signal that ended it; 2 on a usage error,
 * 1 if CMD cannot be started.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int report(const char *out, double wall, const struct rusage *ru)
{
	FILE *f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "bench_rusage: %s: %s\n", out, strerror(errno));
		return -1;
	}
	/* ru_maxrss is in KiB on Linux. */
	fprintf(f, "wall_s=%.3f user_s=%.3f sys_s=%.3f maxrss_kb=%ld\n", wall,
		secs(ru->ru_utime), secs(ru->ru_stime), ru->ru_maxrss);
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_rusage OUT CMD [ARGS...]\n");
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_rusage: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "bench_rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "bench_rusage: wait4: %s\n", strerror(errno));
			return 1;
		}
	}
	if (report(argv[1], now() - t0, &ru))
		return 1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
