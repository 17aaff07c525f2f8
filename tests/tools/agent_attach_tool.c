// SPDX-License-Identifier: MIT
/*
 * Test helper: attach the agent to PID through user/attach, optionally
 * wait, then finish the session.  Compiled at test time by agent_lib.sh.
 *
 *   agent_attach_tool PID AGENT BUNDLE [SECONDS [EXTRA_OPTS]]
 *
 * SECONDS < 0: attach only, leave the agent recording (no finish).
 * Exit: 0 ok, 1 attach or finish failed (message on stderr, prefixed by
 * the error name), 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attach/attach.h"

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: agent_attach_tool PID AGENT BUNDLE "
				"[SECONDS [EXTRA_OPTS]]\n");
		return 2;
	}
	char err[512] = "";
	struct jpb_agent_session *s = NULL;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = jpb_agent_attach((pid_t)atoi(argv[1]), argv[2], argv[3],
				  argc > 5 ? argv[5] : NULL, &s, err,
				  sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc) {
		fprintf(stderr, "attach: %s: %s\n", jpb_attach_errstr(rc), err);
		return 1;
	}
	printf("attached in %.0f ms\n", (t1.tv_sec - t0.tv_sec) * 1e3 +
					     (t1.tv_nsec - t0.tv_nsec) / 1e6);
	/* Now, not at exit: a test waits for this line to act on the
	 * recording JVM (kill it, let it exit). */
	fflush(stdout);
	double secs = argc > 4 ? atof(argv[4]) : 0;
	if (secs < 0) {
		jpb_agent_session_free(s);
		return 0;
	}
	if (secs > 0) {
		struct timespec ts = { (time_t)secs,
				       (long)((secs - (time_t)secs) * 1e9) };
		nanosleep(&ts, NULL);
	}
	rc = jpb_agent_finish(s, 5000, err, sizeof(err));
	jpb_agent_session_free(s);
	if (rc) {
		fprintf(stderr, "finish: %s: %s\n", jpb_attach_errstr(rc), err);
		return 1;
	}
	printf("finished\n");
	return 0;
}
