/* SPDX-License-Identifier: MIT */
/*
 * Record types of the "jvm" domain, written by the agent (docs/FORMAT.md,
 * "Stream: jvm").  Methods are named by their jmethodID (a u64 that is
 * unique for the life of the JVM); a JPB_REC_JVM_METHOD record gives its
 * class, name and signature before any other record uses it.
 */
#ifndef JPBPF_RECORDS_JVM_H
#define JPBPF_RECORDS_JVM_H

#include "records.h"

enum {
	JPB_REC_JVM_INFO = 0x0101,
	JPB_REC_JVM_CODELET = 0x0102,
	JPB_REC_JVM_DISPATCH = 0x0103,
	JPB_REC_JVM_CODE_BLOB = 0x0104,
	JPB_REC_JVM_CLASS = 0x0105,
	JPB_REC_JVM_METHOD = 0x0106,
	JPB_REC_JVM_NMETHOD_LOAD = 0x0107,
	JPB_REC_JVM_NMETHOD_UNLOAD = 0x0108,
	JPB_REC_JVM_PAUSE = 0x0109,
	JPB_REC_JVM_CLASS_MISSING = 0x010a,
	JPB_REC_JVM_METHOD_CODE = 0x010b,
	JPB_REC_JVM_NMETHOD_OSR = 0x010c,
};

/* The JVM and the agent session; first record of the stream. */
struct jpb_rec_jvm_info {
	uint32_t pid;   /* host pid, 0 if unknown */
	uint32_t nspid; /* getpid() in the target */
	uint32_t late_attach; /* 1 if loaded by attach, 0 at start-up */
	uint32_t flags;       /* JPB_JVM_F_* */
	struct jpb_str jdk_version; /* java.version, e.g. "17.0.15" */
	struct jpb_str vm_name;     /* java.vm.name */
	struct jpb_str vm_version;  /* java.vm.version */
	struct jpb_str options;     /* the agent option string */
	struct jpb_str libjvm;      /* path of libjvm.so as the target sees it */
	uint64_t libjvm_base;       /* its load address */
};

enum {
	JPB_JVM_F_TRUTH = 1u << 0,          /* ground-truth mode on */
	JPB_JVM_F_DEBUG_NONSAFEPOINTS = 1u << 1, /* full pc maps for all */
	JPB_JVM_F_COARSE_PCMAPS = 1u << 2, /* DebugNonSafepoints set off: every
					    * compiled method's map is coarse */
};

/* One interpreter codelet (template or other generated interpreter code). */
struct jpb_rec_jvm_codelet {
	uint64_t begin; /* first instruction */
	uint64_t end;   /* exclusive */
	int32_t bytecode; /* the bytecode it implements, -1 if none */
	uint32_t index;   /* position in the interpreter's stub queue */
	struct jpb_str description;
};

/* One dispatch table, one TOS state: 256 little-endian u64 entries. */
struct jpb_rec_jvm_dispatch {
	struct jpb_str table; /* "active", "normal", "safept" */
	uint32_t tos;         /* TosState 0..9 (btos .. vtos) */
	struct jpb_bytes entries;
};

enum jpb_jvm_blob_kind {
	JPB_BLOB_INTERPRETER = 1, /* the whole interpreter */
	JPB_BLOB_DYNAMIC = 2,     /* DynamicCodeGenerated */
};

/* Generated code with its bytes. */
struct jpb_rec_jvm_code_blob {
	uint32_t kind; /* enum jpb_jvm_blob_kind */
	uint32_t flags; /* reserved, 0 */
	uint64_t start;
	uint64_t size;
	struct jpb_str name;
	struct jpb_bytes code;
};

enum {
	JPB_CLASS_F_RETRANSFORM = 1u << 0, /* obtained by retransform on attach */
	JPB_CLASS_F_HIDDEN = 1u << 1,      /* no name given by the hook */
	JPB_CLASS_F_RESOURCE = 1u << 2,    /* read back from the loader's
					    * resource on attach, checked */
	JPB_CLASS_F_REBUILT = 1u << 3,     /* rebuilt from JVMTI on attach:
					    * no exception tables */
};

/* A class file as the JVM received it (ClassFileLoadHook). */
struct jpb_rec_jvm_class {
	uint32_t flags;
	uint32_t reserved;
	uint64_t loader;      /* opaque loader identity, 0 = bootstrap */
	struct jpb_str name;  /* internal form "java/lang/String", "" if unknown */
	struct jpb_bytes bytes;
};

/* A method's identity, once per jmethodID. */
struct jpb_rec_jvm_method {
	uint64_t method_id;
	uint32_t access_flags;
	uint32_t reserved;
	struct jpb_str class_sig; /* "Ljava/lang/String;" */
	struct jpb_str name;
	struct jpb_str signature;
};

enum {
	JPB_NM_F_COARSE = 1u << 0, /* compiled without DebugNonSafepoints:
				    * the pc map holds only safepoint pcs */
	JPB_NM_F_REPLAY = 1u << 1, /* from GenerateEvents on attach */
	JPB_NM_F_OSR = 1u << 2,    /* an on-stack-replacement compile */
};

/* A compiled method (CompiledMethodLoad).  `pcmap` is a packed list of
 * entries: u64 pc, u32 nframes, then nframes x (u64 method_id, i32 bci),
 * innermost frame first, all little-endian. */
struct jpb_rec_jvm_nmethod_load {
	uint64_t method_id;
	uint64_t code_addr;
	uint64_t code_size;
	uint32_t flags;
	int32_t level; /* 0 native wrapper, 1-3 C1 tiers, 4 C2, -1 unknown */
	struct jpb_bytes code;
	struct jpb_bytes pcmap;
};

/* The entry of an OSR compile (a jvm_nmethod_load with JPB_NM_F_OSR),
 * right after that load record.  A record of its own rather than a field
 * appended to jvm_nmethod_load: jpb_rec_decode rejects a payload that
 * ends before the schema's last field, so every bundle written before
 * would stop reading.  Load records from before this type have no entry
 * bci; readers that skip it lose nothing else. */
struct jpb_rec_jvm_nmethod_osr {
	uint64_t method_id; /* as in the load record */
	uint64_t code_addr; /* as in the load record */
	int32_t entry_bci;  /* where the interpreted frame enters the code:
			     * the target of the loop's back edge */
	uint32_t reserved;
};

struct jpb_rec_jvm_nmethod_unload {
	uint64_t method_id;
	uint64_t code_addr;
};

/* A stop-the-world pause the agent caused (retransform on attach). */
struct jpb_rec_jvm_pause {
	struct jpb_str what; /* "retransform" */
	uint32_t items;      /* classes in this batch */
	uint32_t reserved;
	uint64_t duration_ns;
};

/* A class that runs but whose class file the agent could not obtain
 * (hidden classes and lambda proxies are never passed to the hook). */
struct jpb_rec_jvm_class_missing {
	uint64_t loader;         /* as in jpb_rec_jvm_class */
	struct jpb_str class_sig; /* "LFoo$$Lambda.0x0000000801001234;" */
	struct jpb_str reason;
};

/* The bytecodes of one method of a missing class (GetBytecodes), so the
 * decoder still has its instructions; no exception table. */
struct jpb_rec_jvm_method_code {
	uint64_t method_id; /* described by a jvm_method record */
	struct jpb_bytes bytecode;
};

#endif /* JPBPF_RECORDS_JVM_H */
