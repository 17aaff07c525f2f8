/* SPDX-License-Identifier: MIT */
/*
 * `report --format raw`: the decoder's per-thread events (decoded/tidN,
 * docs/DECODER.md) as text, one event a line, for debugging the decoder
 * and reconstruction.  Streamed; compiled frames are named through the
 * jvm stream's method records.
 */
#ifndef JPBPF_EXPORT_RAW_H
#define JPBPF_EXPORT_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jpb_bundle;

struct xraw_opts {
	uint32_t tid; /* 0: every thread, and decoded/tid0 (unattributed) */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

int xraw_export(struct jpb_bundle *b, FILE *out, const struct xraw_opts *o,
		char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_RAW_H */
