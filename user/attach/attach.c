// SPDX-License-Identifier: MIT
/*
 * The HotSpot attach protocol, from outside the JVM (docs/AGENT.md):
 * trigger file .attach_pid<nspid> + SIGQUIT, then the UNIX socket
 * /tmp/.java_pid<nspid> (reached through /proc/PID/root, so containers
 * work), then "1\0load\0<lib>\0true\0<options>\0".  The connection is made
 * with the target's euid/egid, which HotSpot compares with its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "attach_int.h"

const char *jpb_attach_errstr(int err)
{
	switch (err) {
	case jpb_attach_ok: return "success";
	case jpb_attach_err_no_process: return "no such process";
	case jpb_attach_err_not_jvm: return "not a HotSpot JVM";
	case jpb_attach_err_permission: return "permission denied";
	case jpb_attach_err_timeout: return "JVM did not answer";
	case jpb_attach_err_protocol: return "unexpected attach reply";
	case jpb_attach_err_load_failed: return "JVM refused the agent";
	case jpb_attach_err_io: return "I/O error";
	case jpb_attach_err_nomem: return "out of memory";
	case jpb_attach_err_not_implemented: return "not implemented";
	}
	return "unknown attach error";
}

int attach_fail(char *errmsg, size_t size, int err, const char *fmt, ...)
{
	if (errmsg && size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(errmsg, size, fmt, ap);
		va_end(ap);
	}
	return err;
}

void attach_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The process's facts from /proc/PID/status and /proc/PID/stat. */
int attach_proc_info(pid_t pid, struct attach_proc *p, char *errmsg,
		     size_t size)
{
	char path[64], line[512];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return attach_fail(errmsg, size, jpb_attach_err_no_process,
				   "pid %d: no such process", (int)pid);
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		if (sscanf(line, "Uid: %u %u", &a, &b) == 2)
			p->euid = b;
		else if (sscanf(line, "Gid: %u %u", &a, &b) == 2)
			p->egid = b;
		else if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');
			p->nspid = last ? (pid_t)atoi(last + 1) : pid;
		}
	}
	fclose(f);
	if (!p->nspid)
		p->nspid = pid;
	p->start_time = attach_start_time(pid);
	if (!p->start_time)
		return attach_fail(errmsg, size, jpb_attach_err_no_process,
				   "pid %d: exited", (int)pid);
	struct stat a, b;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	p->other_mntns = stat("/proc/self/ns/mnt", &a) == 0 &&
			 stat(path, &b) == 0 && a.st_ino != b.st_ino;
	return 0;
}

/* Field 22 of /proc/PID/stat: tells a reused pid from the original. */
unsigned long long attach_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long long st = 0;
	/* after ')': state is field 3, starttime field 22 */
	for (int field = 2; p && *p; p++) {
		if (*p != ' ')
			continue;
		if (++field == 22) {
			st = strtoull(p + 1, NULL, 10);
			break;
		}
	}
	return st;
}

int attach_is_jvm(pid_t pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

/* Switch to the target's effective ids (only root can) and back. */
struct creds {
	uid_t euid;
	gid_t egid;
	int changed;
};

static int become(const struct attach_proc *p, struct creds *c)
{
	c->euid = geteuid();
	c->egid = getegid();
	c->changed = 0;
	if (c->euid == p->euid && c->egid == p->egid)
		return 0;
	if (c->euid != 0)
		return c->euid == p->euid ? 0 : -1;
	if (setegid(p->egid) != 0)
		return -1;
	if (seteuid(p->euid) != 0) {
		if (setegid(c->egid) != 0)
			abort(); /* cannot restore our own group: unsafe */
		return -1;
	}
	c->changed = 1;
	return 0;
}

static void unbecome(const struct creds *c)
{
	if (!c->changed)
		return;
	if (seteuid(c->euid) != 0 || setegid(c->egid) != 0)
		abort(); /* running on with the target's ids would be worse */
}

static int socket_path(const struct attach_proc *p, char *buf, size_t size)
{
	int n = snprintf(buf, size, "/proc/%d/root/tmp/.java_pid%d", (int)p->pid,
			 (int)p->nspid);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

static int socket_ready(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* HotSpot handles SIGQUIT in its "Signal Dispatcher" thread; before that
 * thread exists (early start-up) or without it (-Xrs) SIGQUIT's default
 * action would kill the JVM.  1 if present. */
static int has_signal_dispatcher(pid_t pid)
{
	char path[64], comm[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[96];
		snprintf(p, sizeof(p), "/proc/%d/task/%.20s/comm", (int)pid,
			 de->d_name);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "Signal Dispatch", 15))
			found = 1;
		fclose(f);
	}
	closedir(d);
	return found;
}

static int wait_signal_ready(const struct attach_proc *p, char *errmsg,
			     size_t size)
{
	for (int i = 0; i < 100; i++) {
		if (has_signal_dispatcher(p->pid))
			return 0;
		if (attach_start_time(p->pid) != p->start_time)
			return attach_fail(errmsg, size,
					   jpb_attach_err_no_process,
					   "pid %d exited during attach",
					   (int)p->pid);
		attach_sleep_ms(20);
	}
	return attach_fail(errmsg, size, jpb_attach_err_not_jvm,
			   "pid %d has no Signal Dispatcher thread after 2 s "
			   "(still starting, or run with -Xrs): not signalled, "
			   "SIGQUIT would kill it", (int)p->pid);
}

/* Create the trigger file .attach_pid<nspid> in the JVM's cwd, else its
 * /tmp (HotSpot looks in both).  *DIRFD keeps the directory, so the file
 * is removed even if the process (and its /proc entry) is gone. */
static int create_trigger(const struct attach_proc *p, const char *name,
			  int *dirfd, char *errmsg, size_t size)
{
	static const char *const dirs[] = { "cwd", "root/tmp" };
	int err = 0;
	for (size_t i = 0; i < 2; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)p->pid, dirs[i]);
		int d = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		int fd = d < 0 ? -1 : openat(d, name, O_CREAT | O_WRONLY | O_CLOEXEC,
					     0660);
		if (fd >= 0) {
			/* HotSpot accepts the trigger only if its owner is
			 * root or the JVM's user.  Only root can give it
			 * away; otherwise it already is ours, and connect
			 * reports a user mismatch clearly. */
			int ok = geteuid() != 0 ||
				 fchown(fd, p->euid, p->egid) == 0;
			close(fd);
			*dirfd = d;
			return ok ? 0 : attach_fail(errmsg, size,
						    jpb_attach_err_permission,
						    "chown %s: %s", name,
						    strerror(errno));
		}
		err = errno;
		if (d >= 0)
			close(d);
	}
	return attach_fail(errmsg, size, err == ENOENT ? jpb_attach_err_no_process
				       : jpb_attach_err_permission,
			   "pid %d: cannot create %s in its cwd or /tmp: %s",
			   (int)p->pid, name, strerror(err));
}

/* Make the JVM open its attach socket: trigger file + SIGQUIT, then wait
 * up to ~6 s (HotSpot checks the trigger when the signal arrives). */
static int start_listener(const struct attach_proc *p, const char *sock,
			  char *errmsg, size_t size)
{
	if (socket_ready(sock))
		return 0;
	int rc = wait_signal_ready(p, errmsg, size);
	if (rc)
		return rc;
	char name[64];
	int dirfd = -1;
	snprintf(name, sizeof(name), ".attach_pid%d", (int)p->nspid);
	rc = create_trigger(p, name, &dirfd, errmsg, size);
	if (rc)
		return rc;
	if (kill(p->pid, SIGQUIT) != 0)
		rc = attach_fail(errmsg, size, errno == ESRCH
				 ? jpb_attach_err_no_process
				 : jpb_attach_err_permission,
				 "pid %d: SIGQUIT: %s", (int)p->pid,
				 strerror(errno));
	for (int i = 0; !rc && i < 300 && !socket_ready(sock); i++) {
		attach_sleep_ms(20);
		if (attach_start_time(p->pid) != p->start_time)
			rc = attach_fail(errmsg, size, jpb_attach_err_no_process,
					 "pid %d exited during attach",
					 (int)p->pid);
	}
	if (!rc && !socket_ready(sock))
		rc = attach_fail(errmsg, size, jpb_attach_err_timeout,
				 "pid %d: no attach socket %s after 6 s (JVM run "
				 "with -XX:+DisableAttachMechanism?)",
				 (int)p->pid, sock);
	unlinkat(dirfd, name, 0);
	close(dirfd);
	return rc;
}

static int send_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t k = write(fd, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

static int connect_as(const struct attach_proc *p, const char *sock,
		      char *errmsg, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof(sa.sun_path))
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "socket path too long: %s", sock);
	strcpy(sa.sun_path, sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return attach_fail(errmsg, size, jpb_attach_err_io, "socket: %s",
				   strerror(errno));
	struct creds c;
	if (become(p, &c) != 0) {
		close(fd);
		return attach_fail(errmsg, size, jpb_attach_err_permission,
				   "pid %d runs as uid %u: attach needs that "
				   "user or root", (int)p->pid,
				   (unsigned)p->euid);
	}
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int e = errno;
	unbecome(&c);
	if (rc != 0) {
		close(fd);
		return attach_fail(errmsg, size, e == EACCES
				   ? jpb_attach_err_permission
				   : jpb_attach_err_io,
				   "connect %s: %s", sock, strerror(e));
	}
	struct timeval tv = { 30, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Interpret the reply text.  Line 1 is the command status; for `load`
 * the rest is the agent's return code, or a message: JDK 25 answers a
 * library it cannot find with status 0 and text, so the text decides. */
int attach_parse_reply(const char *reply, char *errmsg, size_t size)
{
	char *end;
	long status = strtol(reply, &end, 10);
	if (end == reply)
		return attach_fail(errmsg, size, jpb_attach_err_protocol,
				   "attach reply is not a status: \"%.80s\"",
				   reply);
	const char *rest = end;
	while (*rest == '\n' || *rest == '\r' || *rest == ' ')
		rest++;
	char text[256];
	snprintf(text, sizeof(text), "%s", rest);
	text[strcspn(text, "\n")] = 0;
	if (status != 0)
		return attach_fail(errmsg, size, jpb_attach_err_load_failed,
				   "JVM refused the agent (status %ld): %s",
				   status, text[0] ? text : "no reason given");
	/* Older JDKs print the agent's return code alone; newer ones may
	 * print "return code: N". */
	const char *num = text;
	if (!strncmp(num, "return code:", 12))
		num += 12;
	long code = strtol(num, &end, 10);
	if (!text[0] || (end != num && *end == 0 && code == 0))
		return 0;
	if (end != num && *end == 0)
		return attach_fail(errmsg, size, jpb_attach_err_load_failed,
				   "agent failed to start (return code %ld); "
				   "the JVM's stderr says why", code);
	return attach_fail(errmsg, size, jpb_attach_err_load_failed,
			   "JVM refused the agent: %s", text);
}

/* One load command on the listener's socket SOCK, and its reply. */
static int send_load(const struct attach_proc *p, const char *sock,
		     const char *lib, const char *opts, char *errmsg,
		     size_t size)
{
	int fd = connect_as(p, sock, errmsg, size);
	if (fd < 0)
		return fd;
	char req[2200];
	size_t n = 0;
	const char *parts[] = { "1", "load", lib, "true", opts };
	for (size_t i = 0; i < 5; i++) {
		size_t l = strlen(parts[i]) + 1;
		memcpy(req + n, parts[i], l);
		n += l;
	}
	if (send_all(fd, req, n) != 0) {
		close(fd);
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "pid %d: sending the load command: %s",
				   (int)p->pid, strerror(errno));
	}
	char reply[4096];
	size_t got = 0;
	for (;;) {
		ssize_t k = read(fd, reply + got, sizeof(reply) - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got == sizeof(reply) - 1)
			break;
	}
	close(fd);
	reply[got] = 0;
	if (!got)
		return attach_fail(errmsg, size, attach_start_time(p->pid) ==
				   p->start_time ? jpb_attach_err_protocol
						 : jpb_attach_err_no_process,
				   "pid %d: no reply to the load command",
				   (int)p->pid);
	return attach_parse_reply(reply, errmsg, size);
}

int attach_load(const struct attach_proc *p, const char *lib,
		const char *opts, char *errmsg, size_t size)
{
	char sock[128];
	if (socket_path(p, sock, sizeof(sock)) != 0)
		return attach_fail(errmsg, size, jpb_attach_err_io, "path");
	if (strlen(lib) >= 1024 || strlen(opts) >= 1024)
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "agent path or options longer than the "
				   "protocol's 1024 bytes");
	int rc = start_listener(p, sock, errmsg, size);
	if (rc)
		return rc;
	/* JDK 25 refuses a load before its live phase, and its listener
	 * can answer before then (an attach early in start-up on a loaded
	 * machine): ask again every 50 ms, for up to 10 s.  JDK 17 loads
	 * the agent, which waits for the live phase itself. */
	for (int i = 0;; i++) {
		rc = send_load(p, sock, lib, opts, errmsg, size);
		if (rc != jpb_attach_err_load_failed || i == 200 ||
		    !strstr(errmsg, "only permitted in the live phase"))
			return rc;
		attach_sleep_ms(50);
	}
}
