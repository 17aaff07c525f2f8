/* SPDX-License-Identifier: MIT */
/*
 * jpbpf decoder: a bundle's PT streams to per-thread bytecode-level events
 * (docs/DECODER.md).  Reads the jvm, sched and pt streams, writes decoded.
 * Never reads the truth stream nor meta.json's simulator keys.
 */
#ifndef JPBPF_DECODE_H
#define JPBPF_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct jpb_bundle;

/* How a CPU's trace is cut into threads at context switches. */
enum jpd_attribution {
	/* at the PT disable/enable each switch is placed in: exact */
	JPD_ATTR_SWITCH = 0,
	/* at the BPF switch time alone, as JPortal and perf without kernel
	 * tracing do: a baseline to measure against, not for use */
	JPD_ATTR_TIME,
};

struct jpd_options {
	unsigned jobs;  /* worker threads; 0: all online CPUs */
	/* Called as chunks of PT finish: DONE of TOTAL chunks; from the
	 * worker threads, but never two calls at a time.  NULL: silent. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	int attribution; /* enum jpd_attribution */
	uint64_t chunk_bytes; /* PT per parallel chunk; 0: JPD_CHUNK_BYTES */
};

/* Streams are decoded in chunks of about this much PT, cut at PSBs. */
#define JPD_CHUNK_BYTES (4u << 20)

struct jpd_summary {
	unsigned streams, threads;
	uint64_t chunks; /* pieces of streams decoded in parallel */
	uint64_t pt_bytes, blocks, events, interp, compiled, transitions;
	uint64_t gaps, errors, unattributed, switches;
	uint64_t gaps_by_cause[8];
	uint64_t aux_truncated;
	uint64_t nmethods, missing_pcmaps, unload_mismatch, files, files_missing;
	uint64_t coarse_pcmaps; /* methods whose maps hold only safepoint pcs */
	/* zerolocals method entries, and those whose locals loop was found
	 * (the others' entry_locals stay 0) */
	uint32_t zl_entries, zl_loops;
	/* jvm records lost to damage: metadata the decoding went without */
	uint64_t jvm_damaged;
	double seconds;        /* all of it */
	double decode_seconds; /* the workers: gather, scan, block decode */
};

/* Decode the bundle; on failure returns a negative jpb_error and puts a
 * one-line message naming the stream and offset into ERR. */
int jpd_decode(struct jpb_bundle *b, const struct jpd_options *opt,
	       struct jpd_summary *sum, char *err, size_t errsize);

#endif /* JPBPF_DECODE_H */
