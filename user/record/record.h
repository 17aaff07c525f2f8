/* SPDX-License-Identifier: MIT */
/*
 * `jpbpf record`: load the BPF program, follow one JVM, attach the agent,
 * and drain everything into a bundle until the duration ends, a signal
 * arrives or the target exits.  The bundle is finished (flushed, synced,
 * meta.json final) on every path that created it.
 */
#ifndef JPBPF_RECORD_H
#define JPBPF_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jpb_pt_caps;
struct jpb_pt_config;

enum jpb_record_error {
	jpb_record_ok = 0,
	jpb_record_err_env = -1,    /* unsupported environment/permission: exit 2 */
	jpb_record_err_target = -2, /* no such process: exit 1 */
	jpb_record_err_io = -3,     /* bundle I/O failed: exit 1 */
	jpb_record_err_internal = -4,
};

struct jpb_record_opts {
	pid_t pid;
	const char *output;       /* bundle directory */
	uint64_t duration_ms;     /* 0: until a signal or the target exits */
	int cgroup;               /* also trace every task of the target's cgroup */
	const char *btf_path;     /* NULL: the running kernel's */
	const char *agent_path;   /* NULL: look it up; "" : no agent */
	uint32_t ringbuf_kb;      /* 0: 16384 */
	int status_line;          /* print "events, lost, bytes" once a second */
	/* Intel PT, from pt_probe() and the PT options; both NULL for
	 * --no-pt.  The recorder opens PT after the agent has attached, so
	 * every traced instruction has its metadata. */
	const struct jpb_pt_caps *pt_caps;
	const struct jpb_pt_config *pt_cfg;
};

struct jpb_record_result {
	uint64_t events;  /* sched records from BPF */
	uint64_t lost;    /* ring buffer reservation failures */
	uint64_t bytes;   /* bytes written to "sched" */
	int target_exited;
	int usdt;         /* USDT probes attached */
	int agent;        /* agent attached */
	uint64_t pt_bytes; /* AUX bytes saved; 0 with --no-pt */
};

/* Record as OPTS says.  On error ERRMSG holds one line without the
 * "jpbpf: " prefix. */
int jpb_record_run(const struct jpb_record_opts *opts,
		   struct jpb_record_result *res, char *errmsg, size_t size);

#endif /* JPBPF_RECORD_H */
