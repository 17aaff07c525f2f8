/* SPDX-License-Identifier: MIT */
/*
 * The jpbpf BPF program (bpf/jpbpf.bpf.c) loaded through its skeleton:
 * scheduling and lifecycle tracepoints, HotSpot USDT probes, and the ring
 * buffer the events arrive through.
 */
#ifndef JPBPF_BPF_LOADER_H
#define JPBPF_BPF_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum jpb_bpf_error {
	jpb_bpf_ok = 0,
	jpb_bpf_err_perm = -1,    /* no privilege to load BPF */
	jpb_bpf_err_btf = -2,     /* no usable kernel BTF */
	jpb_bpf_err_load = -3,    /* verifier or kernel refused the program */
	jpb_bpf_err_attach = -4,
	jpb_bpf_err_map = -5,
	jpb_bpf_err_no_probe = -6, /* the binary has no such USDT probe */
	jpb_bpf_err_nomem = -7,
};

const char *jpb_bpf_errstr(int err);

struct jpb_bpf_opts {
	const char *btf_path;    /* kernel BTF; NULL: /sys/kernel/btf/vmlinux */
	uint32_t ringbuf_bytes;  /* power of two >= page size; 0: 16 MiB */
	int filter_cgroup;       /* also trace tasks of jpb_bpf_trace_cgroup() */
	uint32_t target_tgid;    /* the traced process, compared inline; 0: only
				  * the tgids of jpb_bpf_trace_tgid() */
};

/* Called for each ring buffer event (struct jpbpf_ev_*, bpf/jpbpf.h;
 * switches come in per-CPU batches, struct jpbpf_ev_switches);
 * a negative return stops jpb_bpf_poll(), which returns it. */
typedef int (*jpb_bpf_event_fn)(void *ctx, const void *data, size_t size);

struct jpb_bpf;

/* Open, load and attach the tracepoints.  Nothing is traced until a tgid
 * or cgroup is added. */
int jpb_bpf_open(struct jpb_bpf **out, const struct jpb_bpf_opts *opts,
		 jpb_bpf_event_fn fn, void *ctx, char *errmsg, size_t size);

int jpb_bpf_trace_tgid(struct jpb_bpf *b, uint32_t tgid);
int jpb_bpf_trace_cgroup(struct jpb_bpf *b, uint64_t cgroup_id);

/* Attach hotspot:compiled__method__load and __unload in BINARY (a host
 * path, e.g. /proc/PID/root/.../libjvm.so) for process PID. */
int jpb_bpf_attach_usdt(struct jpb_bpf *b, pid_t pid, const char *binary,
			char *errmsg, size_t size);

/* Wait up to TIMEOUT_MS for events and deliver them; returns the number
 * delivered or a negative errno (-EINTR on a signal). */
int jpb_bpf_poll(struct jpb_bpf *b, int timeout_ms);

/* The ring buffer's epoll descriptor, for a caller that waits on it
 * together with other descriptors (then calls jpb_bpf_poll(b, 0)). */
int jpb_bpf_fd(const struct jpb_bpf *b);

/* Deliver whatever the ring buffer holds, without waiting. */
int jpb_bpf_drain(struct jpb_bpf *b);

/* End of recording: detach the scheduling tracepoints, deliver what the
 * ring buffer holds, then each CPU's batch of switches still pending in
 * the kernel.  Returns the number of events delivered or an error. */
int jpb_bpf_stop(struct jpb_bpf *b);

/* Reservation failures so far: LOST[cpu] for cpu < *NCPU (in: capacity,
 * out: possible CPUs). */
int jpb_bpf_lost(struct jpb_bpf *b, uint64_t *lost, size_t *ncpu);

void jpb_bpf_free(struct jpb_bpf *b);

#endif /* JPBPF_BPF_LOADER_H */
