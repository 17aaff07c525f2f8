/* SPDX-License-Identifier: MIT */
/*
 * What a rebuilt class file needs and JVMTI does not give, read from
 * HotSpot's own metadata (docs/AGENT.md, "Rebuilt classes: exception
 * tables, max_stack, BootstrapMethods"): a method's exception table and
 * max_stack from its ConstMethod, a class's bootstrap specifiers from its
 * ConstantPool's operands.  Offsets, type sizes and flag bits come from
 * VMStructs; every read goes through vms_read, so a wrong pointer gives an
 * error, never a crash.  The caller checks what depends on the constant
 * pool (indices, tags); this file checks sizes and ranges.
 */
#ifndef JPBPF_AGENT_CLASS_VMMETA_H
#define JPBPF_AGENT_CLASS_VMMETA_H

#include <stddef.h>
#include <stdint.h>

#define CVM_LOCAL __attribute__((visibility("hidden")))

/* Why a method (or a class's bootstrap specifiers) was written without
 * what the metadata would add; CVM_OK: it was not. */
enum cvm_why {
	CVM_OK,
	CVM_NO_LAYOUT,  /* a VMStructs entry this needs is missing */
	CVM_UNREADABLE, /* a read of VM memory failed */
	CVM_MISMATCH,   /* the metadata disagrees with JVMTI */
	CVM_RANGE,      /* a size or table out of range */
	CVM_ENTRY,      /* an entry outside the code or the constant pool */
	CVM_PARSE,      /* the class file with them did not parse */
	CVM_NOMEM,
	CVM_NO_POOL,    /* no method led to the class's constant pool */
	CVM_WHY_COUNT
};

CVM_LOCAL const char *cvm_whystr(int why);

struct cvm_exc {
	uint16_t start_pc, end_pc, handler_pc, catch_type;
};

struct cvm_method {
	uint64_t pool;                   /* ConstMethod::_constants */
	uint16_t name_index, sig_index;  /* to check against JVMTI's names */
	uint16_t max_stack;
	uint16_t nexc;
	struct cvm_exc *exc;             /* malloc'd, NULL if none */
};

/* The ConstMethod of the method whose jmethodID is M, checked against
 * what JVMTI said of it (its code length and max_locals).  CVM_OK and
 * *OUT filled (free with cvm_method_fini), else the reason.  (No <jni.h>
 * here: the unit test builds without the JDK's headers.) */
CVM_LOCAL int cvm_method_read(const void *m, uint32_t code_len,
			      uint32_t max_locals, struct cvm_method *out);
CVM_LOCAL void cvm_method_fini(struct cvm_method *m);

/* The operands array (Array<u2>) of constant pool POOL, which must have
 * COUNT entries: CVM_OK and *OPS (malloc'd, NULL if the pool has none),
 * *LEN u2 elements; else the reason. */
CVM_LOCAL int cvm_operands_read(uint64_t pool, uint32_t count, uint16_t **ops,
				uint32_t *len);

/* Counts for the agent's notes; updated atomically. */
struct cvm_stats {
	uint64_t methods;                /* written with the VM's tables */
	uint64_t fallback[CVM_WHY_COUNT]; /* methods written without */
	uint64_t bootstrap;              /* classes with BootstrapMethods */
	uint64_t bootstrap_fail[CVM_WHY_COUNT]; /* classes that needed one */
};

CVM_LOCAL void cvm_count(uint64_t *counter);
/* "N methods with exception tables and max_stack from HotSpot's
 * metadata, N without (reasons), N classes with BootstrapMethods, N not
 * (reasons)". */
CVM_LOCAL void cvm_stats_str(const struct cvm_stats *s, char *buf,
			     size_t size);

#endif /* JPBPF_AGENT_CLASS_VMMETA_H */
