// SPDX-License-Identifier: MIT
/*
 * An agent session: where the agent writes, and getting its streams into
 * the bundle.  When the JVM cannot write the bundle directory itself
 * (another mount namespace, or another user) the agent writes into a
 * staging directory in the target's /tmp, reached from here through
 * /proc/PID/root, and jpb_agent_finish() copies the streams back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "attach_int.h"

#ifndef JPBPF_PREFIX
#define JPBPF_PREFIX "/usr/local"
#endif

struct jpb_agent_session {
	struct attach_proc proc;
	char bundle[PATH_MAX];     /* host path */
	char out_host[PATH_MAX + 32]; /* the agent's directory, from here */
	char out_target[PATH_MAX]; /* the same, as the JVM sees it */
	int staged;
};

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

int jpb_agent_find_library(char *buf, size_t size)
{
	const char *env = getenv("JPBPF_AGENT");
	if (env && *env && exists(env)) {
		snprintf(buf, size, "%s", env);
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			const char *rel[] = { "/libjpbpf-agent.so",
					      "/../lib/jpbpf/libjpbpf-agent.so" };
			for (size_t i = 0; i < 2; i++) {
				char p[PATH_MAX + 64];
				snprintf(p, sizeof(p), "%s%s", exe, rel[i]);
				if (exists(p) && realpath(p, exe)) {
					snprintf(buf, size, "%s", exe);
					return 0;
				}
			}
		}
	}
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/lib/jpbpf/libjpbpf-agent.so", JPBPF_PREFIX);
	if (!exists(p))
		return -1;
	snprintf(buf, size, "%s", p);
	return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t k = write(out, buf + off, (size_t)(n - off));
			if (k <= 0) {
				rc = -1;
				break;
			}
			off += k;
		}
		if (rc)
			break;
	}
	if (n < 0)
		rc = -1;
	close(in);
	if (close(out) != 0)
		rc = -1;
	return rc;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* Make the library visible in the target's mount namespace as TARGET
 * (its path there; HOST is the same file from here).  The name depends on
 * the target and on the file's identity: a second attach to the same JVM
 * names the same path, which the dynamic linker matches to the library it
 * already loaded under that name (by name, before opening the file), and
 * another build gets another name.  The copy is renamed into place, so a
 * JVM never maps a half-written file, and is removed once the JVM has
 * answered the load (unstage_library). */
static int stage_library(struct jpb_agent_session *s, const char *lib,
			 char *target, size_t tsize, char *host, size_t hsize,
			 char *errmsg, size_t size)
{
	struct stat st;
	if (stat(lib, &st) != 0)
		return attach_fail(errmsg, size, jpb_attach_err_io, "%s: %s",
				   lib, strerror(errno));
	snprintf(target, tsize, "/tmp/jpbpf-agent-%d-%llx-%llx.so",
		 (int)s->proc.pid, (unsigned long long)st.st_ino,
		 (unsigned long long)st.st_mtime);
	snprintf(host, hsize, "/proc/%d/root%s", (int)s->proc.pid, target);
	char tmp[PATH_MAX + 96];
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", host, (int)getpid());
	if (copy_file(lib, tmp, 0755) != 0 || rename(tmp, host) != 0) {
		int e = errno;
		unlink(tmp);
		host[0] = 0;
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "cannot copy the agent into pid %d's /tmp "
				   "as %s: %s", (int)s->proc.pid, target,
				   strerror(e));
	}
	return 0;
}

/* After the JVM answered the load command it has either mapped the
 * library (the mapping keeps the file's data) or unloaded it again, and
 * if no answer came the attach has failed: the copy in the target's /tmp
 * serves no one any more.  A failure to remove it is not the attach's. */
static void unstage_library(const char *host)
{
	if (host[0])
		unlink(host);
}

static int make_out_dir(struct jpb_agent_session *s, char *errmsg,
			size_t size)
{
	if (!s->staged) {
		snprintf(s->out_host, sizeof(s->out_host), "%s", s->bundle);
		snprintf(s->out_target, sizeof(s->out_target), "%s", s->bundle);
		return 0;
	}
	snprintf(s->out_target, sizeof(s->out_target), "/tmp/jpbpf-%d-%08x",
		 (int)s->proc.nspid, hash_str(s->bundle));
	snprintf(s->out_host, sizeof(s->out_host), "/proc/%d/root%s",
		 (int)s->proc.pid, s->out_target);
	if (mkdir(s->out_host, 0700) != 0 && errno != EEXIST)
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "cannot create %s: %s", s->out_host,
				   strerror(errno));
	if (chown(s->out_host, s->proc.euid, s->proc.egid) != 0 &&
	    geteuid() == 0)
		return attach_fail(errmsg, size, jpb_attach_err_permission,
				   "chown %s: %s", s->out_host, strerror(errno));
	return 0;
}

/* Send the load command for LIB, staged into the target's /tmp first
 * when the JVM cannot see our path. */
static int load_agent(struct jpb_agent_session *s, const char *lib,
		      const char *extra_opts, char *errmsg, size_t size)
{
	char target[PATH_MAX], staged[PATH_MAX + 64] = "";
	snprintf(target, sizeof(target), "%s", lib);
	int rc = 0;
	if (s->proc.other_mntns)
		rc = stage_library(s, lib, target, sizeof(target), staged,
				   sizeof(staged), errmsg, size);
	char opts[PATH_MAX + 2048];
	snprintf(opts, sizeof(opts), "out=%s%s%s", s->out_target,
		 extra_opts && *extra_opts ? "," : "",
		 extra_opts ? extra_opts : "");
	if (!rc && strlen(opts) >= sizeof(opts) - 1)
		rc = attach_fail(errmsg, size, jpb_attach_err_io,
				 "agent options too long");
	if (!rc)
		rc = attach_load(&s->proc, target, opts, errmsg, size);
	unstage_library(staged);
	return rc;
}

int jpb_agent_attach(pid_t pid, const char *agent_path, const char *bundle_dir,
		     const char *extra_opts, struct jpb_agent_session **out,
		     char *errmsg, size_t size)
{
	*out = NULL;
	if (!agent_path || !bundle_dir)
		return attach_fail(errmsg, size, jpb_attach_err_io,
				   "no agent library or bundle given");
	struct jpb_agent_session *s = calloc(1, sizeof(*s));
	if (!s)
		return attach_fail(errmsg, size, jpb_attach_err_nomem, "no memory");
	int rc = attach_proc_info(pid, &s->proc, errmsg, size);
	if (!rc) {
		int jvm = attach_is_jvm(pid);
		if (jvm == 0)
			rc = attach_fail(errmsg, size, jpb_attach_err_not_jvm,
					 "pid %d is not a JVM (no libjvm.so mapped)",
					 (int)pid);
		else if (jvm < 0)
			rc = attach_fail(errmsg, size, jpb_attach_err_permission,
					 "pid %d: cannot read /proc/%d/maps",
					 (int)pid, (int)pid);
	}
	if (!rc && (mkdir(bundle_dir, 0755) != 0 && errno != EEXIST))
		rc = attach_fail(errmsg, size, jpb_attach_err_io, "%s: %s",
				 bundle_dir, strerror(errno));
	if (!rc && !realpath(bundle_dir, s->bundle))
		rc = attach_fail(errmsg, size, jpb_attach_err_io, "%s: %s",
				 bundle_dir, strerror(errno));
	char lib[PATH_MAX];
	if (!rc && !realpath(agent_path, lib))
		rc = attach_fail(errmsg, size, jpb_attach_err_io,
				 "agent library %s: %s", agent_path,
				 strerror(errno));
	s->staged = s->proc.other_mntns || s->proc.euid != geteuid();
	if (!rc)
		rc = make_out_dir(s, errmsg, size);
	if (!rc)
		rc = load_agent(s, lib, extra_opts, errmsg, size);
	if (rc) {
		/* Only if empty: a live session may write there. */
		if (s->staged && s->out_host[0])
			rmdir(s->out_host);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static void copy_back(struct jpb_agent_session *s, char *errmsg, size_t size,
		      int *rc)
{
	static const char *const files[] = { "jvm.jpb", "truth.jpb" };
	for (size_t i = 0; i < 2; i++) {
		char from[PATH_MAX + 64], to[PATH_MAX + 64];
		snprintf(from, sizeof(from), "%s/%s", s->out_host, files[i]);
		snprintf(to, sizeof(to), "%s/%s", s->bundle, files[i]);
		if (!exists(from))
			continue;
		if (copy_file(from, to, 0644) != 0 && !*rc)
			*rc = attach_fail(errmsg, size, jpb_attach_err_io,
					  "copying %s into the bundle: %s", from,
					  strerror(errno));
		unlink(from);
	}
	char from[PATH_MAX + 64], to[PATH_MAX + 64];
	snprintf(from, sizeof(from), "%s/meta.json", s->out_host);
	snprintf(to, sizeof(to), "%s/meta.json", s->bundle);
	if (exists(from) && !exists(to))
		copy_file(from, to, 0644);
	unlink(from);
}

int jpb_agent_finish(struct jpb_agent_session *s, int timeout_ms,
		     char *errmsg, size_t size)
{
	if (!s)
		return attach_fail(errmsg, size, jpb_attach_err_io, "no session");
	char stop[PATH_MAX + 64], done[PATH_MAX + 64];
	snprintf(stop, sizeof(stop), "%s/agent.stop", s->out_host);
	snprintf(done, sizeof(done), "%s/agent.done", s->out_host);
	int alive = attach_start_time(s->proc.pid) == s->proc.start_time;
	if (alive) {
		int fd = open(stop, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	for (int t = 0; alive && !exists(done) && t < timeout_ms; t += 20) {
		attach_sleep_ms(20);
		alive = attach_start_time(s->proc.pid) == s->proc.start_time;
	}
	int rc = 0;
	char status[256] = "";
	FILE *f = fopen(done, "r");
	if (f) {
		if (!fgets(status, sizeof(status), f))
			status[0] = 0;
		fclose(f);
		status[strcspn(status, "\n")] = 0;
		if (strcmp(status, "ok") != 0)
			rc = attach_fail(errmsg, size, jpb_attach_err_io,
					 "agent in pid %d: %s", (int)s->proc.pid,
					 status);
	} else if (!alive) {
		rc = attach_fail(errmsg, size, jpb_attach_err_no_process,
				 "pid %d exited before the agent confirmed its "
				 "streams; what it flushed is kept",
				 (int)s->proc.pid);
	} else {
		rc = attach_fail(errmsg, size, jpb_attach_err_timeout,
				 "agent in pid %d did not stop within %d ms; "
				 "its streams may be incomplete",
				 (int)s->proc.pid, timeout_ms);
	}
	if (s->staged)
		copy_back(s, errmsg, size, &rc);
	unlink(stop);
	unlink(done);
	if (s->staged)
		rmdir(s->out_host);
	return rc;
}

void jpb_agent_session_free(struct jpb_agent_session *s)
{
	free(s);
}
