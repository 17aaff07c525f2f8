// SPDX-License-Identifier: MIT
/* BPF ring buffer events to "sched" records. */
#include "record/sched_events.h"

#include <stdio.h>
#include <string.h>

#include "records.h"
#include "records_sched.h"

/* The BPF side's shared structs; bpf/ is not on the include path. */
#include "../../bpf/jpbpf.h"

/* A C string from a fixed buffer that the kernel NUL-terminates, but
 * that is not trusted to be. */
static struct jpb_str fixed_str(const char *p, size_t cap)
{
	struct jpb_str s = { p, (uint32_t)strnlen(p, cap) };
	return s;
}

static int put(struct jpb_sched_sink *s, uint16_t type, uint64_t t,
	       const void *rec)
{
	int err = jpb_writer_put_rec(s->w, jpb_rectype_find(type), t, rec,
				     &s->scratch);
	if (err && !s->err)
		s->err = err;
	if (!err)
		s->n.events++;
	return err;
}

/* Switches are nearly all the events, up to a million a second: their
 * payload is laid out here directly, in the schema's field order
 * (records_sched.c; the unit test decodes it through the schema). */
#define SWITCH_PAYLOAD 36

static int on_switch(struct jpb_sched_sink *s, uint32_t cpu,
		     const struct jpbpf_sw *e)
{
	uint8_t p[SWITCH_PAYLOAD];
	jpb_st32(p, cpu);
	jpb_st32(p + 4, (e->flags & JPBPF_SW_PREEMPT) ? 1 : 0);
	jpb_st32(p + 8, e->prev_tid);
	jpb_st32(p + 12, e->prev_tgid);
	jpb_st32(p + 16, e->next_tid);
	jpb_st32(p + 20, e->next_tgid);
	jpb_st64(p + 24, e->prev_state);
	jpb_st32(p + 32, e->flags & (JPBPF_SW_PREV_TRACED | JPBPF_SW_NEXT_TRACED));
	s->n.switches++;
	int err = jpb_writer_put(s->w, JPB_REC_SCHED_SWITCH, e->time_ns, p,
				 sizeof(p));
	if (err && !s->err)
		s->err = err;
	if (!err)
		s->n.events++;
	return err;
}

/* One record per switch of a CPU's batch (bpf/jpbpf.h). */
static int on_switches(struct jpb_sched_sink *s,
		       const struct jpbpf_ev_switches *b, size_t size)
{
	if (b->n == 0 || b->n > JPBPF_BATCH ||
	    size < JPBPF_SWITCHES_SIZE(b->n)) {
		s->n.malformed++;
		return 0;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		int err = on_switch(s, b->hdr.cpu, &b->sw[i]);
		if (err)
			return err;
	}
	return 0;
}

static int on_task(struct jpb_sched_sink *s, const struct jpbpf_ev_task *e)
{
	struct jpb_str comm = fixed_str(e->comm, sizeof(e->comm));
	char name[JPBPF_COMM_LEN + 1];
	snprintf(name, sizeof(name), "%.*s", (int)comm.len, comm.ptr);
	switch (e->hdr.kind) {
	case JPBPF_EV_FORK: {
		struct jpb_rec_sched_fork r = {
			.cpu = e->hdr.cpu, .parent_tid = e->parent_tid,
			.parent_tgid = e->parent_tgid, .child_tid = e->tid,
			.child_tgid = e->tgid, .child_nstid = e->nstid,
			.comm = comm,
		};
		s->n.forks++;
		if (s->on_thread && e->tgid == e->parent_tgid)
			s->on_thread(s->ctx, JPB_THREAD_START, e->tid, e->nstid,
				     e->tgid, name);
		return put(s, JPB_REC_SCHED_FORK, e->hdr.time_ns, &r);
	}
	case JPBPF_EV_EXIT: {
		struct jpb_rec_sched_exit r = {
			.cpu = e->hdr.cpu, .tid = e->tid, .tgid = e->tgid,
			.nstid = e->nstid, .exit_code = e->exit_code,
			.comm = comm,
		};
		s->n.exits++;
		if (s->on_thread)
			s->on_thread(s->ctx, JPB_THREAD_END, e->tid, e->nstid,
				     e->tgid, name);
		return put(s, JPB_REC_SCHED_EXIT, e->hdr.time_ns, &r);
	}
	default: {
		struct jpb_rec_sched_exec r = {
			.cpu = e->hdr.cpu, .tid = e->tid, .tgid = e->tgid,
			.old_tid = e->parent_tid, .comm = comm,
			.filename = fixed_str(e->path, sizeof(e->path)),
		};
		s->n.execs++;
		return put(s, JPB_REC_SCHED_EXEC, e->hdr.time_ns, &r);
	}
	}
}

static struct jpb_str name_str(const char *buf, size_t cap, uint32_t full,
			       uint32_t *flags, uint32_t cut_flag)
{
	struct jpb_str s = fixed_str(buf, cap);
	if (s.len < full)
		*flags |= cut_flag;
	return s;
}

static int on_method(struct jpb_sched_sink *s, const struct jpbpf_ev_method *e)
{
	struct jpb_rec_usdt_method r = {
		.cpu = e->hdr.cpu, .tid = e->tid, .tgid = e->tgid,
		.code_addr = e->code_addr, .code_size = e->code_size,
	};
	r.class_name = name_str(e->class_name, sizeof(e->class_name),
				e->class_len, &r.flags, JPB_USDT_CLASS_CUT);
	r.method_name = name_str(e->method_name, sizeof(e->method_name),
				 e->method_len, &r.flags, JPB_USDT_METHOD_CUT);
	r.signature = name_str(e->signature, sizeof(e->signature), e->sig_len,
			       &r.flags, JPB_USDT_SIG_CUT);
	int load = e->hdr.kind == JPBPF_EV_METHOD_LOAD;
	if (load)
		s->n.loads++;
	else
		s->n.unloads++;
	return put(s, load ? JPB_REC_USDT_METHOD_LOAD : JPB_REC_USDT_METHOD_UNLOAD,
		   e->hdr.time_ns, &r);
}

int jpb_sched_sink_event(struct jpb_sched_sink *s, const void *data,
			 size_t size)
{
	struct jpbpf_ev_hdr h;
	if (size < sizeof(h)) {
		s->n.malformed++;
		return 0;
	}
	memcpy(&h, data, sizeof(h));
	switch (h.kind) {
	case JPBPF_EV_SWITCHES:
		if (size >= JPBPF_SWITCHES_SIZE(1))
			return on_switches(s, data, size);
		break;
	case JPBPF_EV_FORK:
	case JPBPF_EV_EXIT:
	case JPBPF_EV_EXEC:
		if (size >= sizeof(struct jpbpf_ev_task))
			return on_task(s, data);
		break;
	case JPBPF_EV_METHOD_LOAD:
	case JPBPF_EV_METHOD_UNLOAD:
		if (size >= sizeof(struct jpbpf_ev_method))
			return on_method(s, data);
		break;
	}
	s->n.malformed++;
	return 0;
}

void jpb_sched_sink_fini(struct jpb_sched_sink *s)
{
	jpb_buf_fini(&s->scratch);
}
