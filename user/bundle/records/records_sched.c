// SPDX-License-Identifier: MIT
/* Schemas of the "sched" record types; see records.h for how to add one. */
#include "records_sched.h"

static const struct jpb_field switch_fields[] = {
	JPB_FIELD(struct jpb_rec_sched_switch, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, preempt, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, prev_tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, prev_tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, next_tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, next_tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_switch, prev_state, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_sched_switch, traced, JPB_F_U32),
};

static const struct jpb_field fork_fields[] = {
	JPB_FIELD(struct jpb_rec_sched_fork, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, parent_tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, parent_tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, child_tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, child_tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, child_nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_fork, comm, JPB_F_STR),
};

static const struct jpb_field exit_fields[] = {
	JPB_FIELD(struct jpb_rec_sched_exit, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exit, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exit, tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exit, nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exit, exit_code, JPB_F_I32),
	JPB_FIELD(struct jpb_rec_sched_exit, comm, JPB_F_STR),
};

static const struct jpb_field exec_fields[] = {
	JPB_FIELD(struct jpb_rec_sched_exec, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exec, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exec, tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exec, old_tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_sched_exec, comm, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_sched_exec, filename, JPB_F_STR),
};

static const struct jpb_field method_fields[] = {
	JPB_FIELD(struct jpb_rec_usdt_method, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_usdt_method, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_usdt_method, tgid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_usdt_method, flags, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_usdt_method, code_addr, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_usdt_method, code_size, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_usdt_method, class_name, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_usdt_method, method_name, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_usdt_method, signature, JPB_F_STR),
};

static const struct jpb_field clock_fields[] = {
	JPB_FIELD(struct jpb_rec_clock_pair, tsc, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_clock_pair, mono_ns, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_clock_pair, window_ns, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_clock_pair, cpu, JPB_F_U32),
};

#define TYPE(num, nm, st, f) \
	{ num, nm, "sched", sizeof(st), f, JPB_NFIELDS(f) }

static const struct jpb_rectype sched_types[] = {
	TYPE(JPB_REC_SCHED_SWITCH, "sched_switch", struct jpb_rec_sched_switch,
	     switch_fields),
	TYPE(JPB_REC_SCHED_FORK, "sched_fork", struct jpb_rec_sched_fork,
	     fork_fields),
	TYPE(JPB_REC_SCHED_EXIT, "sched_exit", struct jpb_rec_sched_exit,
	     exit_fields),
	TYPE(JPB_REC_SCHED_EXEC, "sched_exec", struct jpb_rec_sched_exec,
	     exec_fields),
	TYPE(JPB_REC_USDT_METHOD_LOAD, "usdt_method_load",
	     struct jpb_rec_usdt_method, method_fields),
	TYPE(JPB_REC_USDT_METHOD_UNLOAD, "usdt_method_unload",
	     struct jpb_rec_usdt_method, method_fields),
	TYPE(JPB_REC_CLOCK_PAIR, "clock_pair", struct jpb_rec_clock_pair,
	     clock_fields),
};

void jpb_rectypes_sched(const struct jpb_rectype **types, size_t *count)
{
	*types = sched_types;
	*count = JPB_NFIELDS(sched_types);
}
