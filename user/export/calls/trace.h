/* SPDX-License-Identifier: MIT */
/* `report --format calls`: every call and return of each thread, with the
 * call site, time and depth, as indented text or JSON Lines (the Casper
 * view; docs/EXPORTS.md, "calls").  Streams: nothing is kept. */
#ifndef JPBPF_EXPORT_CALLS_TRACE_H
#define JPBPF_EXPORT_CALLS_TRACE_H

#include <stddef.h>
#include <stdio.h>

struct calls_src;
struct calls_opts;

int trace_export(const struct calls_src *s, const struct calls_opts *o,
		 FILE *f, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_TRACE_H */
