// SPDX-License-Identifier: MIT
/*
 * The flow phase's heap on transparent huge pages, where the system
 * lets a process ask for them (docs/RECONSTRUCTION.md, "Flow phase
 * cost", sixth round).
 *
 * The flow phase touches ~80 MB of fresh heap on a 400 k-event thread:
 * 20 k page faults of 4 KiB, a fifth of its CPU time in the kernel's
 * fault path.  glibc asks for huge pages only when an environment
 * tunable says so, and a heap extension does not inherit a range's
 * MADV_HUGEPAGE.  So the heap is extended once, by blocks freed at once
 * and kept (the trim threshold above them), that range is advised, and
 * the allocations after it take it first.  Untouched, it costs no
 * memory; touched, up to 2 MB more per huge page than its 4 KiB pages
 * would.  Nothing changes where THP is off or under a sanitizer's
 * allocator.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cli.h"

/* glibc's mallopt takes at most 32 MiB as the mmap threshold on 64-bit:
 * blocks above it would be fresh mappings, outside the advised range. */
#define BLOCK (32ul << 20)
#define HUGE_PAGE (2ul << 20)

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
/* Heap blocks of BLOCK - 4096 bytes (a chunk's header fits the
 * rest), allocated together and freed together: their range, rounded
 * in to huge pages, into *LO and *HI. */
static void extend_heap(size_t n, uintptr_t *lo, uintptr_t *hi)
{
	void *blocks[8] = { 0 };
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (size_t i = 0; i < n && i < 8; i++) {
		uintptr_t p = (uintptr_t)(blocks[i] = malloc(BLOCK - 4096));
		if (p && p < *lo)
			*lo = p;
		if (p && p + BLOCK - 4096 > *hi)
			*hi = p + BLOCK - 4096;
	}
	for (size_t i = 0; i < n && i < 8; i++)
		free(blocks[i]);
	*lo = (*lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	*hi &= ~(HUGE_PAGE - 1);
}

void cli_heap_huge(size_t reserve)
{
	if (!mallopt(M_MMAP_THRESHOLD, (int)BLOCK) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(2 * reserve)))
		return;
	uintptr_t lo, hi;
	extend_heap((reserve + BLOCK - 1) / BLOCK, &lo, &hi);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}
#else
void cli_heap_huge(size_t reserve)
{
	(void)reserve;
}
#endif
