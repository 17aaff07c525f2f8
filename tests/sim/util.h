/* SPDX-License-Identifier: MIT */
/* Allocation and fatal-error helpers of the simulator (a test tool: out of
 * memory or an internal inconsistency ends the run with a message). */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <stddef.h>

__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
__attribute__((noreturn)) void die_nomem(void);
void *xrealloc(void *p, size_t n);
void *xcalloc(size_t n, size_t size);

#define GROW(arr, n, cap)                                                  \
	do {                                                               \
		if ((n) == (cap)) {                                        \
			(cap) = (cap) ? 2 * (cap) : 16;                    \
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));   \
		}                                                          \
	} while (0)

#endif
