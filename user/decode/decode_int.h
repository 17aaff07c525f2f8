/* SPDX-License-Identifier: MIT */
/* Internals shared by the decoder's parts; see decode.h and DECODER.md. */
#ifndef JPBPF_DECODE_INT_H
#define JPBPF_DECODE_INT_H

#include <errno.h>
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>

#include "bundle.h"
#include "codec.h"
#include "records_decoded.h"

/* A failed write's errno as a bundle error: a full disk says so. */
static inline int jpd_errno_code(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG ? jpb_err_nospc : jpb_err_io;
}

/* ---- clock (threads.c) ---- */
struct jpd_clock {
	uint64_t *tsc, *ns; /* calibration pairs sorted by ns */
	size_t n;
	/* TSC ticks per ns as the CPU describes its TSC (meta.json), 0 if
	 * not known: the slope through a single pair (the other lost) */
	double tsc_per_ns;
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
	uint8_t zerolocals; /* a zerolocals method entry (its description) */
	/* zerolocals: the jcc of its locals-zeroing loop, 0 if not found
	 * (entryloop.c; DECODER.md "Entry locals") */
	uint64_t loop_jcc;
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
	/* per pc: its compiled event's encoded tail, then the kind and zero
	 * time delta of a next event at the same time (image.c) */
	uint8_t *tails;
	uint32_t *tail_off; /* [npcs + 1] into tails */
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
	uint32_t *dhash; /* hash of dispatch addresses: index + 1 */
	uint32_t dmask;
	struct jpd_nmethod *nm; /* in load order */
	size_t nnm;
	struct jpd_nmref { uint64_t begin; size_t i; } *nm_by_begin; /* sorted */
	uint64_t nm_maxlen;    /* the longest nmethod's bytes */
	struct jpd_sect *sects; /* indexed by isid */
	size_t nsects;
	int *static_isids; /* blobs and files, mapped from the start */
	size_t nstatic;
	uint64_t missing_pcmaps, unload_mismatch;
	uint64_t coarse_pcmaps; /* JPB_NM_F_COARSE: only safepoint pcs */
	uint32_t zl_entries, zl_loops; /* zerolocals entries, loops found */
	uint64_t codelen; /* bytes in codefile */
	char **files;     /* paths of file sections (maps stream) */
	size_t nfiles, files_missing;
	/* damaged jvm records (a cut tail counts one), the first's message */
	uint64_t jvm_damaged;
	char jvm_damage[640];
};

int jpd_image_load(struct jpd_image *im, struct jpb_bundle *b,
		   const struct jpd_clock *clk, char *err, size_t errsize);
void jpd_image_fini(struct jpd_image *im);
/* A private section cache for one worker, with the same section ids as
 * im->iscache: libipt locks a section on every use, so workers sharing
 * one cache would serialise on it. */
struct pt_image_section_cache *jpd_image_iscache(const struct jpd_image *im);
/* Drop what C's sections learned (libipt's block caches).  A cached block
 * may run further than the same block decoded afresh, and libipt's time
 * is read once per block: with MTC, events' times would depend on the
 * chunks a worker decoded before, and so on -j. */
int jpd_image_iscache_reset(const struct jpd_image *im,
			    struct pt_image_section_cache *c);
/* Index im->dispatch (sorted, deduplicated) for jpd_find_dispatch. */
int jpd_image_hash_dispatch(struct jpd_image *im);
const struct jpd_dispatch *jpd_find_dispatch(const struct jpd_image *im,
					     uint64_t ip);
const struct jpd_codelet *jpd_find_codelet(const struct jpd_image *im,
					   uint64_t ip);
/* The locals-zeroing loop of a zerolocals method entry's CODE (LEN bytes
 * at ADDR): *JCC = the address of its backward jcc, or 0 when the first
 * backward conditional jump inside the code is not a short loop with a
 * push (entryloop.c).  Returns 0, or jpb_err_internal if Capstone fails. */
int jpd_entry_loop(const uint8_t *code, size_t len, uint64_t addr, uint64_t *jcc);
/* Index im->nm by address (nm_by_begin, nm_maxlen) for jpd_find_nmethod. */
int jpd_image_index_nmethods(struct jpd_image *im);
/* The nmethod at IP in a decoder's image that holds the first NADDED (in
 * load order): the latest of them holding IP (libipt maps a new section
 * over older ones), or NULL. */
const struct jpd_nmethod *jpd_find_nmethod(const struct jpd_image *im, uint64_t ip,
					   size_t nadded);
/* First pc map entry at or after pc, or npcs. */
uint32_t jpd_pc_lower(const struct jpd_nmethod *nm, uint64_t pc);

/* ---- scheduling (threads.c) ---- */
struct jpd_switch {
	uint64_t tsc;
	uint32_t prev_tid, next_tid;
	uint64_t apply_tsc; /* the enable time of the gap it is placed in */
	uint32_t apply_k;   /* which of the gaps ending at apply_tsc (0..) */
	int preempt;        /* prev was runnable: taken by an interrupt */
	/* An arrival put in the overflow its task left in, the task having
	 * run on another CPU meanwhile: the trace after it is no earlier than
	 * tsc, whatever libipt's stale time says (jpd_sched_overflow). */
	int late;
	int hole;           /* stamped in an AUX hole (jpd_sched_hole) */
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
 * edge; JPD_GAP_OVERFLOW for an overflow).  A preempted task leaves at
 * such a gap unless none lies within WINDOW (TSC ticks: how far a BPF
 * timestamp may be off) of the nearest gap of any kind. */
#define JPD_GAP_OVERFLOW 2
/* The first of the N gaps (sorted by their enable times EN) that ends at
 * or after T: N if none. */
size_t jpd_gaps_ending_at(const uint64_t *en, size_t n, uint64_t t);
/* Gap G's rank among the gaps ending at EN[G]: coarse timing makes
 * several end at one TSC, and a switch names its gap by (time, rank). */
static inline uint32_t jpd_gap_rank(const uint64_t *en, size_t g)
{
	return (uint32_t)(g - jpd_gaps_ending_at(en, g, en[g]));
}
/* The first of the N switches SW (sorted by tsc) at or after T: N if none. */
size_t jpd_switch_at(const struct jpd_switch *sw, size_t n, uint64_t t);
void jpd_sched_place(struct jpd_switch *sw, size_t n, const uint64_t *dis,
		     const uint64_t *en, const uint8_t *async, size_t ngaps,
		     uint64_t window);
/* Whether TID was switched in on a CPU other than CPU between FROM and TO. */
int jpd_sched_ran_elsewhere(const struct jpd_sched *sc, uint32_t cpu, uint32_t tid,
			    uint64_t from, uint64_t to);
/* A task that left this CPU in an overflow and came back before the trace
 * resumed at the latest (the next gap's disable) comes back in the
 * overflow too: the trace from the resume to that disable is one task's,
 * and that task was on the CPU then.  An overflow is named by the last
 * time before it, so the nearest gap to the return is often a later one,
 * and the trace between was on no thread.  Had the task run on another
 * CPU meanwhile, the return is marked late: its trace after the overflow,
 * timed before what it ran there, must be merged after it. */
void jpd_sched_overflow(const struct jpd_sched *sc, uint32_t cpu, const uint64_t *dis,
			const uint64_t *en, const uint8_t *async, size_t ngaps);
/* A run after an AUX hole starts with gap G, named by the hole's start
 * (the previous run's last time); its trace resumes by its first disable,
 * dis[G + 1].  The switches stamped in between all happened in the hole:
 * they go to G and apply there together (jpd_attr_apply), however many;
 * the nearest gap by time put the late ones in the run's first gaps, one
 * more arrival applied at each (a thread that ran in the hole took the
 * trace after it). */
void jpd_sched_hole(struct jpd_switch *sw, size_t n, const uint64_t *dis,
		    const uint64_t *en, size_t ngaps, size_t g);

/* ---- streams and chunks (stream.c, ptdec.c) ---- */
struct jpd_counts {
	uint64_t blocks, events, gaps, errors, unattributed, switches, interp,
		compiled, transitions;
	uint64_t gaps_by_cause[8];
};

struct jpd_piece {
	uint32_t tid, cpu;
	uint64_t first_tsc, ordinal; /* ordinal: chunk << 32 | piece in chunk */
	uint32_t spill;    /* the worker spill file holding it */
	uint64_t off, len; /* in that file */
	uint64_t events, gaps, interp, compiled, transitions;
	/* a piece ends after a gap event: its bounds for the gap record */
	int has_gap;
	uint32_t gap_cause;
	int32_t gap_error;
	uint64_t gap_first, gap_last, gap_offset;
};

/* A stretch of AUX data with no hole: decoded with one decoder state. */
struct jpd_run {
	uint64_t begin, end; /* in the gathered bytes */
	int after_hole;      /* data before it is missing */
	/* the previous run's last trace time, where the hole starts (the
	 * scan's; 0 when not scanned) */
	uint64_t hole_tsc;
};

/* Attribution state at a point of a CPU's trace: the last tracing gap
 * passed (by name) and the switches applied by then. */
struct jpd_attr_state {
	size_t swpos;
	uint32_t tid;
	uint64_t gap_tsc;
	uint32_t gap_k;
	int gaps_seen;
};

/* A piece of a run between two PSBs, decoded on its own: the decoder
 * syncs at the PSB before BEGIN (WARM) and decodes silently up to the
 * first item past BEGIN, so the state that crosses a PSB (the last block,
 * an open gap, an armed skip) is rebuilt exactly; it stops at the first
 * item past END, which the next chunk decodes. */
struct jpd_chunk {
	struct jpd_stream *st;
	uint32_t index; /* in the stream: merge order */
	uint32_t run;
	uint64_t warm, begin, end; /* offsets in the gathered bytes */
	uint64_t next_warm;        /* the next chunk's WARM, or END */
	int first_in_run, last_in_run;
	struct jpd_attr_state init; /* at WARM, from the gap scan */
	/* results */
	struct jpd_piece *pieces;
	size_t npieces, cap;
	struct jpd_counts n;
	int rc;
	char err[256];
};

struct jpd_stream {
	const char *name;
	uint32_t cpu; /* pt/cpuN: N; pt/tidN: 100000 + stream index */
	uint32_t tid; /* per-thread ring: its thread, else 0 */
	/* the gathered PT, mapped */
	const uint8_t *buf;
	uint64_t size;
	struct jpd_run *runs;
	size_t nruns;
	/* this CPU's switches and the tracing gaps they are placed in */
	struct jpd_switch *sw;
	size_t nsw;
	uint64_t *dis, *en, *goff; /* goff: where the scan saw the gap end */
	uint8_t *async;
	uint64_t *dis_ip, *en_ip; /* where trace stopped (async; else 0), resumed */
	size_t ngaps, capgaps;
	void *gapmap; /* the columns above: a scratch file mapped read-only */
	size_t gapmap_len;
	struct jpd_gapbuf *gapbuf; /* while scanning: gaps not yet written */
	struct jpd_chunk *chunks;
	size_t nchunks, capchunks;
	/* results */
	uint64_t pt_bytes, errors;
	uint64_t aux_truncated; /* pt_aux_event records flagged truncated */
	struct jpd_counts n;    /* the chunks' counts, summed */
	size_t npieces;
	uint32_t scan_fallbacks; /* runs the packet scan left to the query scan */
	int rc;
	char err[512];
};

/* One worker's scratch: its own section cache and spill file. */
struct jpd_worker {
	struct pt_image_section_cache *iscache;
	FILE *spill;
	char spillpath[4200];
	uint64_t spill_pos;
	uint32_t id;
	struct jpb_buf out;
};

struct jpd_ctx {
	struct jpb_bundle *b;
	struct jpd_image img;
	struct jpd_sched sched;
	struct pt_config base_cfg;
	int attribution; /* enum jpd_attribution */
	uint64_t chunk_bytes;
	uint64_t window; /* TSC ticks a BPF timestamp may be off */
	int scan;        /* enum jpd_scan */
	char tmpdir[3072];
};

/* The passes over a stream's mapped PT drop the pages behind them in
 * steps of this much, and a chunk drops its pages once decoded: the PT a
 * process holds mapped is a few windows and chunks, not the trace. */
#define JPD_WINDOW_BYTES (256u << 10)
/* Unmap the pages of ST's gathered PT in [FROM, TO) (stream.c). */
void jpd_stream_drop(const struct jpd_stream *st, uint64_t from, uint64_t to);

/* A pass at POS drops the pages of ST's PT more than a window behind it,
 * from *DROPPED on (stream.c). */
void jpd_stream_drop_behind(const struct jpd_stream *st, uint64_t *dropped,
			    uint64_t pos);

/* Unmap the pages of ST's tracing gap table (stream.c): they stay in the
 * page cache, and come back when read. */
void jpd_stream_drop_gaps(const struct jpd_stream *st);

/* How a stream's tracing gaps are found: from its packets, falling back
 * to libipt's query decoder per run where unsure (the default), or with
 * the query decoder alone (the reference, for tests/tools/decode_gapcmp). */
enum jpd_scan { JPD_SCAN_AUTO = 0, JPD_SCAN_QUERY };

/* The enable time of a run's end gap, "never passed", while its run is
 * the stream's last; the scan of a next run makes it the run's last time. */
#define JPD_RUN_END (UINT64_MAX - 1)

/* Append a tracing gap to ST's table (stream.c): disabled at D, enabled
 * at E, found at offset OFF, stopped at DIS_IP, resumed at EN_IP. */
int jpd_add_gap(struct jpd_stream *st, uint64_t d, uint64_t e, int async,
		uint64_t off, uint64_t dis_ip, uint64_t en_ip);

/* Run RN's tracing gaps from its packets (gapscan.c), appended to ST's
 * table; JPD_SCAN_UNSURE where it cannot follow the query decoder
 * exactly (the caller drops what it appended and scans with that). */
#define JPD_SCAN_UNSURE 1
int jpd_scan_packets(struct jpd_ctx *ctx, struct jpd_stream *st,
		     const struct jpd_run *rn);

/* The tracing gap table of ST's gathered, mapped runs (stream.c). */
int jpd_stream_scan(struct jpd_ctx *ctx, struct jpd_stream *st);

/* Gather, scan and split one stream into chunks (stream.c). */
int jpd_stream_prepare(struct jpd_ctx *ctx, struct jpd_stream *st);
void jpd_stream_fini(struct jpd_stream *st);
/* The attribution state at each chunk's start, once switches are placed. */
void jpd_stream_chunk_states(const struct jpd_ctx *ctx, struct jpd_stream *st);
/* Move switches placed where the IPs say no thread resumed (continuity.c). */
void jpd_continuity(const struct jpd_ctx *ctx, struct jpd_stream *sts, size_t n);
/* The attribution state after passing the gaps with goff < OFF. */
void jpd_attr_walk(const struct jpd_ctx *ctx, const struct jpd_stream *st,
		   struct jpd_attr_state *a, size_t *gpos, uint64_t off);
/* The first tracing gap of ST ending at or after T.  A gap's name is its
 * enable time and its rank among the gaps ending then: the decoder's
 * (ptdec.c) and the chunk states' (stream.c) naming must agree. */
size_t jpd_gap_lower(const struct jpd_stream *st, uint64_t t);
/* Name the gap an attribution state passes, enabled at TSC. */
void jpd_attr_gap(struct jpd_attr_state *a, uint64_t tsc);
/* Apply the switches due at the last gap passed (ptdec.c); returns
 * whether any was applied. */
int jpd_attr_apply(const struct jpd_stream *st, struct jpd_attr_state *a,
		   int by_time, uint64_t now, uint64_t *napplied);

/* libipt's configuration from the bundle's meta.json "pt" (decode.c). */
void jpd_config_from_meta(struct pt_config *cfg, struct jpb_bundle *b);

/* libipt's configuration for ST's gathered bytes [BEGIN, END): the
 * bundle's CPU, errata and timing (ptdec.c); every decoder of a stream
 * (scan, split, chunks) starts from it. */
struct pt_config jpd_stream_config(const struct jpd_ctx *ctx,
				   const struct jpd_stream *st, uint64_t begin,
				   uint64_t end);
/* Decode one chunk (ptdec.c). */
int jpd_chunk_decode(struct jpd_ctx *ctx, struct jpd_worker *w,
		     struct jpd_chunk *c);

#endif /* JPBPF_DECODE_INT_H */
