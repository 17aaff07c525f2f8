// SPDX-License-Identifier: MIT
/* user/attach without a JVM: reply parsing, /proc facts, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "attach/attach.h"
#include "attach/attach_int.h"

static void reply_ok(void **state)
{
	(void)state;
	char msg[256] = "";
	/* JDK 17: status, then the agent's return code. */
	assert_int_equal(attach_parse_reply("0\n0\n", msg, sizeof(msg)), 0);
	/* Status alone (some JDKs print nothing more on success). */
	assert_int_equal(attach_parse_reply("0\n", msg, sizeof(msg)), 0);
	assert_int_equal(attach_parse_reply("0\nreturn code: 0\n", msg,
					    sizeof(msg)), 0);
}

static void reply_agent_failed(void **state)
{
	(void)state;
	char msg[256] = "";
	assert_int_equal(attach_parse_reply("0\n-1\n", msg, sizeof(msg)),
			 jpb_attach_err_load_failed);
	assert_non_null(strstr(msg, "return code -1"));
	assert_int_equal(attach_parse_reply("0\nreturn code: -1\n", msg,
					    sizeof(msg)),
			 jpb_attach_err_load_failed);
}

static void reply_text_decides(void **state)
{
	(void)state;
	char msg[256] = "";
	/* JDK 25 answers a library it cannot load with status 0 and text:
	 * the status line alone would call that a success. */
	assert_int_equal(attach_parse_reply("0\nCould not find agent library "
					    "/tmp/x.so in absolute path, "
					    "with error: /tmp/x.so: cannot open\n",
					    msg, sizeof(msg)),
			 jpb_attach_err_load_failed);
	assert_non_null(strstr(msg, "Could not find agent library"));
	/* The exact reply of Temurin 25.0.3 for a missing library. */
	assert_int_equal(attach_parse_reply("0\n/tmp/nonexistent-lib.so was not "
					    "loaded.\n/tmp/nonexistent-lib.so: "
					    "cannot open shared object file: No "
					    "such file or directory\n",
					    msg, sizeof(msg)),
			 jpb_attach_err_load_failed);
	assert_non_null(strstr(msg, "was not loaded"));
	assert_int_equal(attach_parse_reply("100\nsomething", msg, sizeof(msg)),
			 jpb_attach_err_load_failed);
	assert_non_null(strstr(msg, "status 100"));
	assert_int_equal(attach_parse_reply("garbage", msg, sizeof(msg)),
			 jpb_attach_err_protocol);
	assert_int_equal(attach_parse_reply("", msg, sizeof(msg)),
			 jpb_attach_err_protocol);
}

static void proc_facts_of_self(void **state)
{
	(void)state;
	struct attach_proc p;
	char msg[256] = "";
	assert_int_equal(attach_proc_info(getpid(), &p, msg, sizeof(msg)), 0);
	assert_int_equal(p.euid, geteuid());
	assert_int_equal(p.egid, getegid());
	assert_true(p.nspid > 0);
	assert_false(p.other_mntns);
	assert_true(p.start_time > 0);
	assert_int_equal(attach_start_time(getpid()), p.start_time);
	/* This test binary is no JVM. */
	assert_int_equal(attach_is_jvm(getpid()), 0);
}

static void missing_process(void **state)
{
	(void)state;
	struct jpb_agent_session *s = (void *)1;
	char msg[256] = "";
	/* pid_max is at most 4194304 */
	int rc = jpb_agent_attach(4194305, "/nonexistent.so", "/tmp", NULL, &s,
				  msg, sizeof(msg));
	assert_int_equal(rc, jpb_attach_err_no_process);
	assert_null(s);
	assert_non_null(strstr(msg, "4194305"));
	/* Our own process is no JVM. */
	rc = jpb_agent_attach(getpid(), "/nonexistent.so", "/tmp", NULL, &s,
			      msg, sizeof(msg));
	assert_int_equal(rc, jpb_attach_err_not_jvm);
	assert_null(s);
}

static void errstr_names_all(void **state)
{
	(void)state;
	for (int e = jpb_attach_err_not_implemented; e <= 0; e++) {
		const char *s = jpb_attach_errstr(e);
		assert_non_null(s);
		assert_string_not_equal(s, "unknown attach error");
	}
	assert_string_equal(jpb_attach_errstr(-100), "unknown attach error");
}

static void find_library_env(void **state)
{
	(void)state;
	char buf[4096];
	char path[] = "/tmp/jpbpf-test-agent-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	setenv("JPBPF_AGENT", path, 1);
	assert_int_equal(jpb_agent_find_library(buf, sizeof(buf)), 0);
	assert_string_equal(buf, path);
	unsetenv("JPBPF_AGENT");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reply_ok),
		cmocka_unit_test(reply_agent_failed),
		cmocka_unit_test(reply_text_decides),
		cmocka_unit_test(proc_facts_of_self),
		cmocka_unit_test(missing_process),
		cmocka_unit_test(errstr_names_all),
		cmocka_unit_test(find_library_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
