/* SPDX-License-Identifier: MIT */
/*
 * `report --format perfetto`: a Chrome Trace Event JSON timeline, one
 * track per thread, a B/E slice per method activation at the flow's TSC
 * times in µs, for ui.perfetto.dev, chrome://tracing and speedscope
 * (docs/EXPORTS.md, "perfetto").  At a stack break (lost trace, unknown
 * events) every open slice ends at the last known time and an instant
 * "gap" marks it; the frames the walker keeps reopen at the next event,
 * so lost trace shows as a gap in the timeline.  Streams.
 */
#ifndef JPBPF_EXPORT_CALLS_PERFETTO_H
#define JPBPF_EXPORT_CALLS_PERFETTO_H

#include <stddef.h>
#include <stdio.h>

struct calls_src;
struct calls_opts;

int perfetto_export(const struct calls_src *s, const struct calls_opts *o,
		    FILE *f, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_CALLS_PERFETTO_H */
