/* SPDX-License-Identifier: MIT */
/*
 * Turning the BPF program's ring buffer events (bpf/jpbpf.h) into "sched"
 * records (user/bundle/records/records_sched.h), with counts, and telling the
 * recorder about threads that start and end.
 */
#ifndef JPBPF_SCHED_EVENTS_H
#define JPBPF_SCHED_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "codec.h"

struct jpb_sched_counts {
	uint64_t events;   /* records written from BPF events */
	uint64_t switches, forks, exits, execs, loads, unloads;
	uint64_t malformed; /* events of unknown kind or size (a bug) */
};

/* A thread of the target began (START) or ended (END). */
typedef void (*jpb_sched_thread_fn)(void *ctx, uint32_t event, uint32_t tid,
				    uint32_t nstid, uint32_t tgid,
				    const char *comm);

struct jpb_sched_sink {
	struct jpb_writer *w;
	struct jpb_buf scratch;
	struct jpb_sched_counts n;
	jpb_sched_thread_fn on_thread; /* may be NULL */
	void *ctx;
	int err; /* first write error */
};

/* Write one event as a record.  Returns 0, or the writer's error. */
int jpb_sched_sink_event(struct jpb_sched_sink *s, const void *data,
			 size_t size);

void jpb_sched_sink_fini(struct jpb_sched_sink *s);

#endif /* JPBPF_SCHED_EVENTS_H */
