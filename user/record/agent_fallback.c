// SPDX-License-Identifier: MIT
/*
 * Weak stand-ins for the attach API (user/attach/attach.h) for builds in
 * which user/attach/attach.c is absent: the recorder then records without
 * the agent and says so.  attach.c's strong definitions sort before this
 * file in libjpbpf.a, so the linker takes them whenever they exist.
 * TODO(integration): delete this file once attach.c is committed.
 */
#include <stdio.h>

#include "attach/attach.h"

__attribute__((weak)) int jpb_agent_attach(pid_t pid, const char *agent_path,
					   const char *bundle_dir,
					   const char *extra_opts,
					   struct jpb_agent_session **out,
					   char *errmsg, size_t size)
{
	(void)pid, (void)agent_path, (void)bundle_dir, (void)extra_opts;
	*out = NULL;
	snprintf(errmsg, size, "this jpbpf was built without agent attach support");
	return jpb_attach_err_not_implemented;
}

__attribute__((weak)) int jpb_agent_finish(struct jpb_agent_session *s,
					   int timeout_ms, char *errmsg,
					   size_t size)
{
	(void)s, (void)timeout_ms;
	snprintf(errmsg, size, "no agent session");
	return jpb_attach_err_not_implemented;
}

__attribute__((weak)) void jpb_agent_session_free(struct jpb_agent_session *s)
{
	(void)s;
}

__attribute__((weak)) int jpb_agent_find_library(char *buf, size_t size)
{
	/* Succeeds so that jpb_agent_attach() above gives the reason. */
	snprintf(buf, size, "%s", "");
	return 0;
}
