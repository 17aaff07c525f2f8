// SPDX-License-Identifier: MIT
/*
 * The template interpreter: every codelet of AbstractInterpreter::_code
 * (a StubQueue of InterpreterCodelets), the dispatch tables, and the code
 * bytes.  Must run after VMInit (the queue is NULL in Agent_OnLoad); the
 * layout differs per process, so it is walked every run.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "vmstructs.h"

struct interp_layout {
	uint64_t queue; /* StubQueue* */
	uint64_t buffer, begin, end;
	uint64_t codelet_size, align;
	uint64_t off_size, off_desc, off_bytecode;
};

static int load_layout(struct interp_layout *l, char *why, size_t n)
{
	uint64_t code_p, off_buf, off_qb, off_qe, align_p;
	int32_t qb, qe;
	memset(l, 0, sizeof(*l));
	if (vms_init() != 0) {
		snprintf(why, n, "no gHotSpotVMStructs in libjvm.so");
		return -1;
	}
	if (vms_static_addr("AbstractInterpreter", "_code", &code_p) ||
	    vms_read_u64(code_p, &l->queue) || !l->queue) {
		snprintf(why, n, "AbstractInterpreter::_code unavailable");
		return -1;
	}
	if (vms_field_offset("StubQueue", "_stub_buffer", &off_buf) ||
	    vms_field_offset("StubQueue", "_queue_begin", &off_qb) ||
	    vms_field_offset("StubQueue", "_queue_end", &off_qe) ||
	    vms_field_offset("InterpreterCodelet", "_size", &l->off_size) ||
	    vms_field_offset("InterpreterCodelet", "_description",
			     &l->off_desc) ||
	    vms_field_offset("InterpreterCodelet", "_bytecode",
			     &l->off_bytecode) ||
	    vms_type_size("InterpreterCodelet", &l->codelet_size)) {
		snprintf(why, n, "StubQueue/InterpreterCodelet not in VMStructs");
		return -1;
	}
	if (vms_flag_addr("CodeEntryAlignment", &align_p) ||
	    vms_read_u64(align_p, &l->align) || !l->align ||
	    (l->align & (l->align - 1))) {
		snprintf(why, n, "CodeEntryAlignment flag unreadable");
		return -1;
	}
	if (vms_read_u64(l->queue + off_buf, &l->buffer) ||
	    vms_read_i32(l->queue + off_qb, &qb) ||
	    vms_read_i32(l->queue + off_qe, &qe) || qb < 0 || qe < qb) {
		snprintf(why, n, "StubQueue unreadable");
		return -1;
	}
	l->begin = l->buffer + (uint64_t)qb;
	l->end = l->buffer + (uint64_t)qe;
	return 0;
}

static void put_codelet(struct agent *a, uint64_t begin, uint64_t end,
			int32_t bytecode, uint32_t index, uint64_t desc_p)
{
	char desc[160] = "";
	if (desc_p && vms_read(desc_p, desc, sizeof(desc) - 1) != 0) {
		/* A string near the end of a mapping: read byte by byte. */
		size_t i = 0;
		while (i < sizeof(desc) - 1 &&
		       vms_read(desc_p + i, &desc[i], 1) == 0 && desc[i])
			i++;
		desc[i] = 0;
	}
	desc[sizeof(desc) - 1] = 0;
	struct jpb_rec_jvm_codelet r = { begin, end, bytecode, index,
					 jpb_str_c(desc) };
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CODELET, agent_now(), &r);
}

/* LEN bytes at ADDR from CODE, the copy of [buffer, end), else from the
 * VM: the codelet headers lie in the copy, and reading them there saves
 * three system calls per codelet. */
static int read_at(const struct interp_layout *l, const uint8_t *code,
		   uint64_t addr, void *out, size_t len)
{
	if (code && addr >= l->buffer && addr <= l->end &&
	    len <= l->end - addr) {
		memcpy(out, code + (addr - l->buffer), len);
		return 0;
	}
	return vms_read(addr, out, len);
}

static int walk_codelets(struct agent *a, const struct interp_layout *l,
			 const uint8_t *code)
{
	uint32_t index = 0;
	uint64_t stub = l->begin;
	while (stub < l->end) {
		int32_t size, bc;
		uint64_t desc_p;
		if (read_at(l, code, stub + l->off_size, &size, 4) ||
		    size <= 0 || stub + (uint64_t)size > l->end ||
		    read_at(l, code, stub + l->off_desc, &desc_p, 8) ||
		    read_at(l, code, stub + l->off_bytecode, &bc, 4)) {
			aq_note(&a->q, JPB_NOTE_ERROR,
				"interpreter: bad codelet %u at 0x%llx", index,
				(unsigned long long)stub);
			return -1;
		}
		uint64_t begin = (stub + l->codelet_size + l->align - 1) &
				 ~(l->align - 1);
		put_codelet(a, begin, stub + (uint64_t)size, bc, index, desc_p);
		stub += (uint64_t)size;
		index++;
	}
	return (int)index;
}

static void put_dispatch(struct agent *a)
{
	static const char *const tables[] = { "active", "normal", "safept" };
	static const enum vms_sym syms[] = { VMS_SYM_ACTIVE_TABLE,
					     VMS_SYM_NORMAL_TABLE,
					     VMS_SYM_SAFEPT_TABLE };
	for (size_t t = 0; t < 3; t++) {
		uint64_t addr, size;
		if (vms_symbol(syms[t], &addr, &size) || size != 10 * 256 * 8) {
			aq_note(&a->q, JPB_NOTE_WARN,
				"interpreter: no %s dispatch table in .symtab "
				"of %s", tables[t], vms_libjvm_path());
			continue;
		}
		uint8_t *buf = malloc(256 * 8);
		for (uint32_t tos = 0; buf && tos < 10; tos++) {
			if (vms_read(addr + tos * 256 * 8, buf, 256 * 8))
				break;
			struct jpb_rec_jvm_dispatch r = {
				jpb_str_c(tables[t]), tos, { buf, 256 * 8 }
			};
			aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_DISPATCH,
				   agent_now(), &r);
		}
		free(buf);
	}
}

/* Runs on the VMInit thread before main() (or in Agent_OnAttach): its
 * CPU time is in the note, as a part of the agent's start-up cost. */
void interp_record(struct agent *a)
{
	uint64_t cpu0 = agent_thread_cpu_ns();
	struct interp_layout l;
	char why[160];
	if (load_layout(&l, why, sizeof(why)) != 0) {
		aq_note(&a->q, JPB_NOTE_ERROR, "interpreter: %s", why);
		return;
	}
	uint64_t len = l.end - l.buffer;
	uint8_t *code = malloc(len ? len : 1);
	int have = code && vms_read(l.buffer, code, len) == 0;
	if (have) {
		struct jpb_rec_jvm_code_blob r = {
			.kind = JPB_BLOB_INTERPRETER,
			.start = l.buffer,
			.size = len,
			.name = jpb_str_c("Interpreter"),
			.code = { code, (uint32_t)len },
		};
		aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CODE_BLOB, agent_now(), &r);
	} else {
		aq_note(&a->q, JPB_NOTE_ERROR, "interpreter: code unreadable");
	}
	int n = walk_codelets(a, &l, have ? code : NULL);
	free(code);
	put_dispatch(a);
	if (n >= 0)
		aq_note(&a->q, JPB_NOTE_INFO,
			"interpreter: %d codelets in [0x%llx, 0x%llx), "
			"CodeEntryAlignment %llu; %.3f ms of CPU",
			n, (unsigned long long)l.buffer,
			(unsigned long long)l.end,
			(unsigned long long)l.align,
			(double)(agent_thread_cpu_ns() - cpu0) / 1e6);
}
