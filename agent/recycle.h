/* SPDX-License-Identifier: MIT */
/*
 * Allocations kept for reuse by size class (agent/queue.c): the writer
 * gives a written record's memory back, the next record of about its
 * size takes it, and neither side calls malloc or free.  Class I holds
 * blocks of at least 2^(RECYCLE_MIN_LOG2+I) bytes.  The lists are arrays
 * beside the blocks, not links inside them: a block comes back ~200 ms
 * after it was written, out of the cache, and taking it must not touch it
 * (a link read there cost as much as the malloc it replaced; perf).
 * Not thread-safe: the caller holds its own lock.
 */
#ifndef JPBPF_AGENT_RECYCLE_H
#define JPBPF_AGENT_RECYCLE_H

#include <stddef.h>
#include <stdint.h>

#define RECYCLE_MIN_LOG2 8 /* 256: jpb_buf's first capacity */
#define RECYCLE_CLASSES 9  /* up to 64 KiB */
#define RECYCLE_SLOTS 256  /* blocks kept per class */

struct recycle {
	void *blk[RECYCLE_CLASSES][RECYCLE_SLOTS];
	uint32_t n[RECYCLE_CLASSES];
	uint64_t bytes; /* kept, in all classes, by their class sizes */
	uint64_t max;   /* no more than this is kept */
};

/* A kept block of at least N bytes (its usable size in *CAP), or NULL. */
void *recycle_take(struct recycle *r, size_t n, size_t *cap);
/* Keep block P of CAP bytes: 1, or 0 if it is too small, too large, or
 * its class or the whole is full (the caller frees it then). */
int recycle_give(struct recycle *r, void *p, size_t cap);
/* Free every kept block. */
void recycle_free(struct recycle *r);

#endif /* JPBPF_AGENT_RECYCLE_H */
