// SPDX-License-Identifier: MIT
/*
 * The compile level of a CompiledMethodLoad for jit.c's record: the
 * lookup (nmethod_level.c) stays free of agent state, so a test agent
 * can drive it with wrong addresses; counting and noting are here.
 */

#include "agent.h"
#include "nmethod_level.h"

void nml_prepare(struct agent *a, const char *when)
{
	uint64_t cpu0 = agent_thread_cpu_ns();
	int rc = nml_init();
	aq_note(&a->q, JPB_NOTE_INFO,
		"compile-level layout read at %s: %.3f ms of CPU%s", when,
		(double)(agent_thread_cpu_ns() - cpu0) / 1e6,
		rc ? "; unavailable, levels will be -1" : "");
}

int nml_level_for(struct agent *a, const void *addr, int size,
		  uint32_t *flags, int32_t *entry_bci)
{
	struct nml_result r;
	int why = nml_lookup((uint64_t)(uintptr_t)addr,
			     size > 0 ? (uint64_t)size : 0, &r);
	*entry_bci = -1;
	if (why == NML_OK) {
		__atomic_add_fetch(&a->nml.found, 1, __ATOMIC_RELAXED);
		if (r.osr) {
			*flags |= JPB_NM_F_OSR;
			*entry_bci = r.entry_bci;
		}
		return r.level;
	}
	/* One note per reason and session; the records' -1 count them all. */
	if (__atomic_fetch_add(&a->nml.unknown[why], 1, __ATOMIC_RELAXED) == 0)
		aq_note(&a->q, JPB_NOTE_WARN,
			"compile level unknown for nmethod %p (%d bytes): %s "
			"(level -1; later cases of this reason not noted)",
			addr, size, nml_whystr(why));
	return -1;
}
