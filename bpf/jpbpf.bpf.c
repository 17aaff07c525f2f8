// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * jpbpf kernel side: scheduling, thread lifecycle and HotSpot code-cache
 * USDT events of the traced JVM, timed with bpf_ktime_get_ns().
 *
 * Only tasks whose tgid is in `traced_tgids` (or, when `filter_cgroup` is
 * set, whose cgroup-v2 id is in `traced_cgroups`) produce events; nothing
 * about other tasks leaves the kernel.  Context switches, nearly all the
 * events, are gathered in a per-CPU batch and copied to the ring buffer
 * 32 at a time (or when 1 ms old): one ring buffer operation, whose lock
 * the CPUs share, per batch instead of per switch.  A failed ring buffer
 * reservation or copy is counted, in events, in the per-CPU `lost` array,
 * which the loader reports.
 *
 * No helper or kfunc of this kernel reads the TSC, so times are
 * CLOCK_MONOTONIC only; user space writes TSC calibration pairs
 * (docs/CLOCK.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "jpbpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile bool filter_cgroup = false;
/* The target, fixed at load time: one compare on the hot path.  With 0,
 * the traced_tgids map is consulted instead. */
const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u8);
} traced_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* the loader may resize */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Each CPU's batch of switches not yet in the ring buffer.  The loader
 * reads what is left here after detaching (jpb_bpf_stop()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jpbpf_ev_switches);
} pending SEC(".maps");

/* A batch goes out when full or this old, which bounds how far the
 * stream's order across CPUs may stray from time order. */
const volatile __u64 flush_ns = 1000000;

static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* Called with the tracepoints' BTF-typed task pointers, which BPF reads
 * directly (no helper call): this runs on every context switch. */
static __always_inline bool traced(struct task_struct *t)
{
	__u32 tgid = t->tgid;
	if (tgid == 0) /* idle */
		return false;
	if (target_tgid) {
		if (tgid == target_tgid)
			return true;
	} else if (bpf_map_lookup_elem(&traced_tgids, &tgid)) {
		return true;
	}
	if (filter_cgroup) {
		__u64 id = task_cgroup_id(t);
		return bpf_map_lookup_elem(&traced_cgroups, &id) != NULL;
	}
	return false;
}

static __always_inline void count_lost(__u32 events)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);
	if (n)
		*n += events; /* per-CPU slot: no other writer */
}

static __always_inline void *reserve(__u64 size, __u32 kind)
{
	struct jpbpf_ev_hdr *h = bpf_ringbuf_reserve(&events, size, 0);
	if (!h) {
		count_lost(1);
		return NULL;
	}
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->time_ns = bpf_ktime_get_ns();
	return h;
}

/* Waking the reader for every event would add a context switch per
 * traced context switch; the reader drains on a timer instead, and is
 * woken only when the ring is a quarter full (wakeup_bytes, set by the
 * loader from the ring's size). */
const volatile __u64 wakeup_bytes = 4 << 20;

static __always_inline __u64 wakeup_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	return avail >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void submit(void *e)
{
	bpf_ringbuf_submit(e, wakeup_flag());
}

static __always_inline __u32 ns_tid(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up = {};
	bpf_core_read(&up, sizeof(up), &p->numbers[level & 31]);
	return up.nr;
}

static __always_inline void flush(struct jpbpf_ev_switches *b)
{
	__u32 n = b->n;
	__u64 size = JPBPF_SWITCHES_SIZE(n);
	/* clang computes the size with an OR the verifier cannot bound:
	 * bound it after the arithmetic. */
	barrier_var(size);
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&events, b, size, wakeup_flag()) != 0)
		count_lost(n);
	b->n = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u32 which = (traced(prev) ? JPBPF_SW_PREV_TRACED : 0) |
		      (traced(next) ? JPBPF_SW_NEXT_TRACED : 0);
	__u32 zero = 0;
	struct jpbpf_ev_switches *b = bpf_map_lookup_elem(&pending, &zero);
	if (!b)
		return 0;
	if (!which) {
		/* A CPU that no longer runs traced threads must not keep
		 * its last switches to itself for long; but reading the
		 * clock at every switch of every other task would cost more
		 * than the batching saves, so only every 64th looks. */
		if (b->n && (++b->untraced & 63) == 0 &&
		    bpf_ktime_get_ns() - b->hdr.time_ns >= flush_ns)
			flush(b);
		return 0;
	}
	__u64 now = bpf_ktime_get_ns();
	__u32 i = b->n;
	if (i >= JPBPF_BATCH) {
		flush(b);
		i = 0;
	}
	if (i == 0) {
		b->hdr.kind = JPBPF_EV_SWITCHES;
		b->hdr.cpu = bpf_get_smp_processor_id();
		b->hdr.time_ns = now;
	}
	struct jpbpf_sw *e = &b->sw[i];
	e->time_ns = now;
	e->prev_tid = prev->pid;
	e->prev_tgid = prev->tgid;
	e->next_tid = next->pid;
	e->next_tgid = next->tgid;
	e->prev_state = prev_state;
	e->flags = which | (preempt ? JPBPF_SW_PREEMPT : 0);
	b->n = i + 1;
	if (i + 1 == JPBPF_BATCH || now - b->hdr.time_ns >= flush_ns)
		flush(b);
	return 0;
}

static __always_inline struct jpbpf_ev_task *task_event(struct task_struct *t,
							__u32 kind)
{
	struct jpbpf_ev_task *e = reserve(sizeof(*e), kind);
	if (!e)
		return NULL;
	e->tid = BPF_CORE_READ(t, pid);
	e->tgid = BPF_CORE_READ(t, tgid);
	e->nstid = ns_tid(t);
	e->parent_tid = 0;
	e->parent_tgid = 0;
	e->exit_code = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), t->comm);
	e->path[0] = 0;
	return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	/* A new thread shares the traced tgid and so is traced from its
	 * first switch on; a child process is reported but not followed. */
	if (!traced(parent))
		return 0;
	struct jpbpf_ev_task *e = task_event(child, JPBPF_EV_FORK);
	if (!e)
		return 0;
	e->parent_tid = parent->pid;
	e->parent_tgid = parent->tgid;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	if (!traced(p))
		return 0;
	struct jpbpf_ev_task *e = task_event(p, JPBPF_EV_EXIT);
	if (!e)
		return 0;
	e->exit_code = p->exit_code;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	if (!traced(p))
		return 0;
	struct jpbpf_ev_task *e = task_event(p, JPBPF_EV_EXEC);
	if (!e)
		return 0;
	e->parent_tid = old_pid;
	bpf_probe_read_kernel_str(e->path, sizeof(e->path),
				  BPF_CORE_READ(bprm, filename));
	submit(e);
	return 0;
}

static __always_inline void read_name(char *dst, __u32 cap, const char *src,
				      int len)
{
	__u32 n = len < 0 ? 0 : (__u32)len;
	if (n > cap - 1)
		n = cap - 1;
	/* Hide the bound from clang so that the mask below survives and the
	 * verifier sees n < cap (cap is a power of two). */
	barrier_var(n);
	n &= cap - 1;
	if (bpf_probe_read_user(dst, n, src) != 0)
		n = 0;
	barrier_var(n);
	dst[n & (cap - 1)] = 0;
}

static __always_inline int method_event(__u32 kind, const char *cls,
					int cls_len, const char *name,
					int name_len, const char *sig,
					int sig_len, __u64 code, int size)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct jpbpf_ev_method *e = reserve(sizeof(*e), kind);
	if (!e)
		return 0;
	e->tid = (__u32)id;
	e->tgid = id >> 32;
	e->code_addr = code;
	e->code_size = size < 0 ? 0 : size;
	e->class_len = cls_len < 0 ? 0 : cls_len;
	e->method_len = name_len < 0 ? 0 : name_len;
	e->sig_len = sig_len < 0 ? 0 : sig_len;
	read_name(e->class_name, JPBPF_CLASS_LEN, cls, cls_len);
	read_name(e->method_name, JPBPF_METHOD_LEN, name, name_len);
	read_name(e->signature, JPBPF_SIG_LEN, sig, sig_len);
	submit(e);
	return 0;
}

/* hotspot:compiled__method__load(class, len, name, len, sig, len, code, size) */
SEC("usdt")
int BPF_USDT(on_method_load, const char *cls, int cls_len, const char *name,
	     int name_len, const char *sig, int sig_len, __u64 code, int size)
{
	return method_event(JPBPF_EV_METHOD_LOAD, cls, cls_len, name,
			    name_len, sig, sig_len, code, size);
}

/* hotspot:compiled__method__unload(class, len, name, len, sig, len) */
SEC("usdt")
int BPF_USDT(on_method_unload, const char *cls, int cls_len, const char *name,
	     int name_len, const char *sig, int sig_len)
{
	return method_event(JPBPF_EV_METHOD_UNLOAD, cls, cls_len, name,
			    name_len, sig, sig_len, 0, 0);
}
