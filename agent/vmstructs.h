/* SPDX-License-Identifier: MIT */
/*
 * HotSpot's serviceability tables (gHotSpotVMStructs, gHotSpotVMTypes and
 * the flag table), read by name at run time: no offset of any JDK build is
 * compiled in.  Memory of live VM objects is read with process_vm_readv
 * on ourselves, so a stale pointer gives an error, never a crash.
 */
#ifndef JPBPF_AGENT_VMSTRUCTS_H
#define JPBPF_AGENT_VMSTRUCTS_H

#include <stddef.h>
#include <stdint.h>

#include <jni.h>

#define VMS_LOCAL __attribute__((visibility("hidden")))

/* Finds libjvm.so and its tables once; 0 or -1 (then every lookup
 * fails).  Thread-safe. */
VMS_LOCAL int vms_init(void);
VMS_LOCAL const char *vms_libjvm_path(void);
VMS_LOCAL uint64_t vms_libjvm_base(void);

/* Offset of a non-static field, or the address of a static one. */
VMS_LOCAL int vms_field_offset(const char *type, const char *field,
			       uint64_t *off);
VMS_LOCAL int vms_static_addr(const char *type, const char *field,
			      uint64_t *addr);
VMS_LOCAL int vms_type_size(const char *type, uint64_t *size);
/* Offset of a non-static field and the size of its type, which differs
 * between JDKs (nmethod::_comp_level: int on 17, a 1-byte CompLevel on
 * 25). */
VMS_LOCAL int vms_field_info(const char *type, const char *field,
			     uint64_t *off, uint64_t *size);
/* A gHotSpotVMIntConstants entry, e.g. "InvocationEntryBci". */
VMS_LOCAL int vms_int_constant(const char *name, int32_t *v);
/* Address of a -XX flag's value. */
VMS_LOCAL int vms_flag_addr(const char *name, uint64_t *addr);
/* 1 if flag NAME still has its built-in default (not set on the command
 * line, by ergonomics or otherwise), 0 if not, -1 if unknown. */
VMS_LOCAL int vms_flag_is_default(const char *name);

/* Copy LEN bytes at ADDR of this process; 0 or -1 if unmapped. */
VMS_LOCAL int vms_read(uint64_t addr, void *buf, size_t len);
VMS_LOCAL int vms_read_u64(uint64_t addr, uint64_t *v);
VMS_LOCAL int vms_read_i32(uint64_t addr, int32_t *v);

/* A Java thread's Linux tid (in the target's pid namespace) from
 * java.lang.Thread.eetop -> JavaThread::_osthread -> OSThread::_thread_id;
 * 0 if any step is unavailable. */
VMS_LOCAL uint32_t vms_thread_tid(JNIEnv *jni, jobject thread);

/* The .symtab symbols of libjvm.so the agent uses (not in VMStructs nor
 * in .dynsym). */
enum vms_sym {
	VMS_SYM_ACTIVE_TABLE, /* TemplateInterpreter::_active_table */
	VMS_SYM_NORMAL_TABLE, /* TemplateInterpreter::_normal_table */
	VMS_SYM_SAFEPT_TABLE, /* TemplateInterpreter::_safept_table */
	VMS_SYM_SHRINK_BY,    /* CodeHeap::shrink_by(size_t) */
	VMS_SYM_COUNT
};

/* Value of symbol SYM of libjvm.so (load address applied), with its
 * size: 0; 1 if the .symtab has no such symbol; -1 if there is no
 * .symtab (stripped) or it cannot be read.  The first call scans the
 * .symtab once for all of them (~1-2.5 ms of CPU); later calls answer
 * from that.  Thread-safe. */
VMS_LOCAL int vms_symbol(enum vms_sym sym, uint64_t *addr, uint64_t *size);

#endif /* JPBPF_AGENT_VMSTRUCTS_H */
