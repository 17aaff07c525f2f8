/* SPDX-License-Identifier: MIT */
/* Internals shared by attach.c (the protocol) and session.c. */
#ifndef JPBPF_ATTACH_INT_H
#define JPBPF_ATTACH_INT_H

#include <stddef.h>
#include <sys/types.h>

struct attach_proc {
	pid_t pid;   /* host */
	pid_t nspid; /* in its own pid namespace */
	uid_t euid;
	gid_t egid;
	unsigned long long start_time; /* /proc/PID/stat field 22 */
	int other_mntns;
};

int attach_proc_info(pid_t pid, struct attach_proc *p, char *errmsg,
		     size_t size);
unsigned long long attach_start_time(pid_t pid);
/* 1 if libjvm.so is mapped, 0 if not, -1 if the maps are unreadable. */
int attach_is_jvm(pid_t pid);
/* Run `load LIB true OPTS` in the JVM; LIB and OPTS as the JVM sees them. */
int attach_load(const struct attach_proc *p, const char *lib,
		const char *opts, char *errmsg, size_t size);
/* Exposed for the unit test. */
int attach_parse_reply(const char *reply, char *errmsg, size_t size);
int attach_fail(char *errmsg, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void attach_sleep_ms(int ms);

#endif /* JPBPF_ATTACH_INT_H */
