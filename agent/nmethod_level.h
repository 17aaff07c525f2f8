/* SPDX-License-Identifier: MIT */
/*
 * The compile level of a compiled method, which JVMTI does not report:
 * from the code address of a CompiledMethodLoad, HotSpot's code heap
 * segment map leads to the nmethod's header, whose fields (named in
 * VMStructs) give the level and the OSR entry bci.  Every step is checked
 * and every read goes through vms_read, so a wrong guess answers -1,
 * never a crash (docs/AGENT.md, "Compile level").
 */
#ifndef JPBPF_AGENT_NMETHOD_LEVEL_H
#define JPBPF_AGENT_NMETHOD_LEVEL_H

#include <stdint.h>

/* Why a lookup gave no level (NML_OK: it did). */
enum nml_why {
	NML_OK,
	NML_NO_LAYOUT,     /* a VMStructs entry this needs is missing */
	NML_NOT_IN_HEAP,   /* the address is in no code heap */
	NML_UNREADABLE,    /* a read of VM memory failed */
	NML_FREE,          /* the segment map says free, or a bad hop */
	NML_NO_BACKPOINTER, /* the header's code begin is not the address */
	NML_NOT_NMETHOD,   /* the blob's kind or name is not nmethod */
	NML_BAD_FIELDS,    /* level or entry bci out of range */
	NML_WHY_COUNT
};

struct nml_result {
	int level;     /* 0 native wrapper, 1-3 C1 tiers, 4 C2; -1 unknown */
	int entry_bci; /* -1 normal entry, else the OSR entry bci */
	int osr;
};

/* Per-session counts (struct agent); updated atomically by callbacks. */
struct nml_stats {
	uint64_t found;
	uint64_t unknown[NML_WHY_COUNT];
	/* CPU of the first CompiledMethodLoad callback, which reads the
	 * layout itself when it comes before nml_prepare (noted) */
	uint64_t first_callback_ns;
};

__attribute__((visibility("hidden"))) const char *nml_whystr(int why);

/* Read the layout now: VMStructs, the code heaps and one scan of
 * libjvm.so's .symtab, ~5-7 ms of CPU.  Lookups do it on first use, but
 * the first is a CompiledMethodLoad on the Service Thread, so the agent
 * calls this at VMInit and Agent_OnAttach (the code cache exists then,
 * not in Agent_OnLoad).  0 if lookups can work, -1 if they all give -1.
 * Thread-safe; done once per process. */
__attribute__((visibility("hidden"))) int nml_init(void);

/* Look up the nmethod whose code begins at ADDR (SIZE bytes).  Returns
 * NML_OK with *R filled, else the reason and R->level = -1. */
__attribute__((visibility("hidden"))) int
nml_lookup(uint64_t addr, uint64_t size, struct nml_result *r);

/* 1 if lookups read committed code heap memory in place (libjvm.so's
 * .symtab shows heaps never shrink), 0 if through vms_read; valid after
 * the first lookup. */
__attribute__((visibility("hidden"))) int nml_reads_in_place(void);

/* For a CompiledMethodLoad: the level (-1 unknown), JPB_NM_F_OSR added
 * to *FLAGS for an OSR compile and its entry bci in *ENTRY_BCI (else -1);
 * counts the outcome in A->nml and notes the first fallback of each
 * reason. */
struct agent;
__attribute__((visibility("hidden"))) int
nml_level_for(struct agent *a, const void *addr, int size, uint32_t *flags,
	      int32_t *entry_bci);

/* nml_init off the event path, its CPU time in a note; WHEN names the
 * moment ("VMInit", "attach"). */
__attribute__((visibility("hidden"))) void
nml_prepare(struct agent *a, const char *when);

#endif /* JPBPF_AGENT_NMETHOD_LEVEL_H */
