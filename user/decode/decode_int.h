/* SPDX-License-Identifier: MIT */
/* Internals shared by the decoder's parts; see decode.h and DECODER.md. */
#ifndef JPBPF_DECODE_INT_H
#define JPBPF_DECODE_INT_H

#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>

#include "bundle.h"
#include "codec.h"
#include "records_decoded.h"

/* ---- clock (threads.c) ---- */
struct jpd_clock {
	uint64_t *tsc, *ns; /* calibration pairs sorted by ns */
	size_t n;
};
uint64_t jpd_ns_to_tsc(const struct jpd_clock *c, uint64_t ns);
uint64_t jpd_tsc_to_ns(const struct jpd_clock *c, uint64_t tsc);

/* ---- image and classification (image.c) ---- */
enum jpd_sect_kind { SK_NONE = 0, SK_INTERP, SK_STUB, SK_NMETHOD, SK_FILE };

struct jpd_codelet {
	uint64_t begin, end;
	int32_t bytecode;
	uint32_t index;
	uint8_t what; /* transition kind when entered at begin */
};

struct jpd_dispatch {
	uint64_t addr;
	uint8_t opcode, tos;
};

struct jpd_pcentry {
	uint64_t pc;
	uint32_t frame0, nframes; /* into the nmethod's frames */
};

struct jpd_nmethod {
	uint64_t method_id, begin, end;
	uint64_t load_tsc, unload_tsc;
	uint64_t switch_tsc; /* decoders map it from this time (reuse) */
	struct jpd_pcentry *pcs;
	struct jpb_decoded_frame *frames;
	uint32_t npcs, nframes;
	int isid;
	int reuse; /* overlaps earlier code: added at switch_tsc, not before */
};

struct jpd_sect {
	uint8_t kind;
	uint32_t index; /* blob index, nmethod index */
	uint64_t begin, end;
	uint64_t file_off; /* in its file */
	const char *file;  /* NULL: the code file */
};

struct jpd_image {
	struct pt_image_section_cache *iscache;
	char codefile[4096];
	struct jpd_codelet *codelets;
	size_t ncodelets;
	struct jpd_dispatch *dispatch;
	size_t ndispatch;
	struct jpd_nmethod *nm; /* in load order */
	size_t nnm;
	struct jpd_sect *sects; /* indexed by isid */
	size_t nsects;
	int *static_isids; /* blobs and files, mapped from the start */
	size_t nstatic;
	uint64_t missing_pcmaps, unload_mismatch;
	uint64_t codelen; /* bytes in codefile */
	char **files;     /* paths of file sections (maps stream) */
	size_t nfiles, files_missing;
};

int jpd_image_load(struct jpd_image *im, struct jpb_bundle *b,
		   const struct jpd_clock *clk, char *err, size_t errsize);
void jpd_image_fini(struct jpd_image *im);
/* A private section cache for one worker, with the same section ids as
 * im->iscache: libipt locks a section on every use, so workers sharing
 * one cache would serialise on it. */
struct pt_image_section_cache *jpd_image_iscache(const struct jpd_image *im);
const struct jpd_dispatch *jpd_find_dispatch(const struct jpd_image *im,
					     uint64_t ip);
const struct jpd_codelet *jpd_find_codelet(const struct jpd_image *im,
					   uint64_t ip);
/* First pc map entry at or after pc, or npcs. */
uint32_t jpd_pc_lower(const struct jpd_nmethod *nm, uint64_t pc);

/* ---- scheduling (threads.c) ---- */
struct jpd_switch {
	uint64_t tsc;
	uint32_t prev_tid, next_tid;
	uint64_t apply_tsc; /* the enable time of the gap it is placed in */
	uint32_t apply_k;   /* which of the gaps ending at apply_tsc (0..) */
	int preempt;        /* prev was runnable: taken by an interrupt */
};

struct jpd_sched {
	struct jpd_clock clock;
	struct jpd_switch **sw; /* per cpu, sorted by tsc */
	size_t *nsw;
	uint32_t ncpus;
	uint32_t *tids; /* every thread of the traced process */
	char **names;
	size_t ntids;
};

int jpd_sched_load(struct jpd_sched *s, struct jpb_bundle *b, char *err,
		   size_t errsize);
void jpd_sched_fini(struct jpd_sched *s);
/* Place each switch of a CPU into the tracing gap nearest to it: gap i
 * runs from dis[i] to en[i] (sorted by en); async[i] says whether an
 * interrupt could have started it (asynchronous disable, overflow, run
 * edge).  A preempted task leaves at such a gap unless none lies within
 * WINDOW (TSC ticks: how far a BPF timestamp may be off) of the nearest
 * gap of any kind. */
void jpd_sched_place(struct jpd_switch *sw, size_t n, const uint64_t *dis,
		     const uint64_t *en, const uint8_t *async, size_t ngaps,
		     uint64_t window);

/* ---- one stream (ptdec.c) ---- */
struct jpd_piece {
	uint32_t tid, cpu;
	uint64_t first_tsc, ordinal;
	uint64_t off, len; /* in the stream's spill file */
	uint64_t events, gaps, interp, compiled, transitions;
	/* a piece ends after a gap event: its bounds for the gap record */
	int has_gap;
	uint32_t gap_cause;
	int32_t gap_error;
	uint64_t gap_first, gap_last, gap_offset;
};

struct jpd_stream {
	const char *name;
	uint32_t cpu; /* pt/cpuN: N; pt/tidN: 100000 + stream index */
	uint32_t tid; /* per-thread ring: its thread, else 0 */
	/* results */
	struct jpd_piece *pieces;
	size_t npieces, cap;
	FILE *spill;
	char spillpath[4096];
	uint64_t pt_bytes, blocks, events, gaps, errors, unattributed,
		switches, interp, compiled, transitions;
	uint64_t gaps_by_cause[8];
	uint64_t aux_truncated; /* pt_aux_event records flagged truncated */
	int rc;
	char err[512];
};

struct jpd_ctx {
	struct jpb_bundle *b;
	struct jpd_image img;
	struct jpd_sched sched;
	struct pt_config base_cfg;
	int attribution; /* enum jpd_attribution */
	char tmpdir[3072];
};

int jpd_stream_decode(struct jpd_ctx *ctx, struct jpd_stream *st);

#endif /* JPBPF_DECODE_INT_H */
