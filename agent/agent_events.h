/* SPDX-License-Identifier: MIT */
/*
 * What the agent asks of HotSpot in its normal mode: the JVMTI events it
 * enables and the capabilities it takes when loaded at start-up without
 * truth.  Shared with the bench's null agent (tests/tools/null_agent.c),
 * whose ablation of the agent's overhead is only valid while it asks for
 * exactly the same.  What depends on the session (truth mode, a late
 * attach) stays in agent.c.
 */
#ifndef JPBPF_AGENT_EVENTS_H
#define JPBPF_AGENT_EVENTS_H

#include <string.h>

#include <jvmti.h>

static const jvmtiEvent agent_base_events[] = {
	JVMTI_EVENT_VM_START,
	JVMTI_EVENT_VM_INIT,
	JVMTI_EVENT_VM_DEATH,
	JVMTI_EVENT_THREAD_START,
	JVMTI_EVENT_THREAD_END,
	JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
	JVMTI_EVENT_CLASS_PREPARE,
	JVMTI_EVENT_COMPILED_METHOD_LOAD,
	JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
};

#define AGENT_N_BASE_EVENTS \
	(sizeof(agent_base_events) / sizeof(agent_base_events[0]))

/* WANT: the normal mode's capabilities out of the potential ones, POT. */
static inline void agent_base_caps(const jvmtiCapabilities *pot,
				   jvmtiCapabilities *want)
{
	memset(want, 0, sizeof(*want));
	want->can_generate_compiled_method_load_events = 1;
	want->can_generate_all_class_hook_events =
		pot->can_generate_all_class_hook_events;
	/* Not can_generate_early_class_hook_events: with it HotSpot turns
	 * CDS off (metaspaceShared.cpp).  The classes loaded before the
	 * hook posts (primordial phase) are caught up at VMInit instead
	 * (class_attach.c). */
	want->can_get_bytecodes = 1;
	/* class_rebuild.c rebuilds hidden classes from these; HotSpot has
	 * them always, and they change nothing in how it runs. */
	want->can_get_constant_pool = pot->can_get_constant_pool;
	want->can_get_source_file_name = pot->can_get_source_file_name;
	want->can_get_line_numbers = pot->can_get_line_numbers;
}

#endif
