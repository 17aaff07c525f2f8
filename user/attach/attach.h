/* SPDX-License-Identifier: MIT */
/*
 * Loading the jpbpf agent into a running HotSpot JVM (the attach
 * protocol), including JVMs in other pid and mount namespaces, and
 * collecting what it wrote.  docs/AGENT.md describes the protocol use.
 */
#ifndef JPBPF_ATTACH_H
#define JPBPF_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

enum jpb_attach_error {
	jpb_attach_ok = 0,
	jpb_attach_err_no_process = -1,  /* pid does not exist / exited */
	jpb_attach_err_not_jvm = -2,     /* no libjvm.so mapped */
	jpb_attach_err_permission = -3,
	jpb_attach_err_timeout = -4,     /* JVM did not open its socket */
	jpb_attach_err_protocol = -5,    /* unexpected reply */
	jpb_attach_err_load_failed = -6, /* JVM refused the agent */
	jpb_attach_err_io = -7,
	jpb_attach_err_nomem = -8,
	jpb_attach_err_not_implemented = -9,
};

const char *jpb_attach_errstr(int err);

struct jpb_agent_session;

/* Load the agent library AGENT_PATH into PID, telling it to write its
 * streams for the bundle at BUNDLE_DIR (a host path); EXTRA_OPTS (may be
 * NULL) are appended to the agent's option string.  If the agent is
 * already loaded it is reused.  On failure ERRMSG says why in one line. */
int jpb_agent_attach(pid_t pid, const char *agent_path, const char *bundle_dir,
		     const char *extra_opts, struct jpb_agent_session **out,
		     char *errmsg, size_t size);

/* Ask the agent to flush and stop, wait up to TIMEOUT_MS, and make sure
 * its streams are inside the bundle.  Safe if the JVM has exited (what
 * was flushed is kept, and the loss is reported in ERRMSG). */
int jpb_agent_finish(struct jpb_agent_session *s, int timeout_ms,
		     char *errmsg, size_t size);

void jpb_agent_session_free(struct jpb_agent_session *s);

/* Where the agent library is: next to the jpbpf binary (build tree), then
 * $PREFIX/lib/jpbpf.  Returns 0 and fills BUF, or -1. */
int jpb_agent_find_library(char *buf, size_t size);

#endif /* JPBPF_ATTACH_H */
