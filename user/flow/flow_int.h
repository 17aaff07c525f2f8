/* SPDX-License-Identifier: MIT */
/* Internals shared by the reconstruction (reconstruct/), recovery
 * (recover*.c) and the bundle driver (flow_io.c). */
#ifndef JPBPF_FLOW_INT_H
#define JPBPF_FLOW_INT_H

#include <time.h>

#include "flow/flow.h"

/* u64 -> u32 open-addressing map (keys != 0); a key and its value side
 * by side, as a lookup that finds the key reads both (two arrays missed
 * the cache twice). */
struct u64map {
	struct u64slot {
		uint64_t key;
		uint32_t val;
	} *v;
	size_t cap, n;
};
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);
/* Room for N entries in all, without a rehash on the way. */
int u64map_reserve(struct u64map *m, size_t n);
int u64map_get(const struct u64map *m, uint64_t key, uint32_t *val);
void u64map_fini(struct u64map *m);

#define RCACHE_SIZE 4096u
#define RCACHE_TOO_MANY UINT32_MAX

/* A resynchronisation's answer: the candidates (in the pool) or none. */
struct rcache {
	uint64_t h;
	uint8_t used, lost, n;
	uint8_t ops[64];
	int32_t want; /* LOST_AT_ENTRY: what the entry says (flow_entry_want) */
	uint32_t off, cnt;
};

/* A decoded event as reconstruction keeps it is a struct jpb_decoded_slim
 * (records_decoded.h): 32 bytes, its frames at f->fr[fr] (struct
 * jpb_decoded_event carries room for 64 frames); the reader parses into
 * f->ev in place. */

/* Where a thread's flow events go, in order, window by window. */
struct flow_sink {
	int (*put)(void *arg, const struct jpb_flow_event *v, size_t n);
	void *arg;
};

/* Reconstruct one thread event by event (reconstruct/thread.c): the
 * events kept are the pending steps' and the lookahead's, the flow kept
 * is one window (flow_opts.window), so memory does not grow with the
 * thread.  GAPLESS: the thread's events are known to hold no gap (its
 * decoded/summary record): nothing will be recovered, and the default
 * window is a smaller one, which gives the same flow (flow_window.sh).
 * flow_push copies E. */
int flow_begin(struct flow *f, const struct flow_sink *sink, int gapless);
int flow_push(struct flow *f, const struct jpb_decoded_event *e);
/* flow_push in two halves, for a reader that parses an event's frames in
 * place (jpb_decoded_event_next): the room for the next event's frames
 * (NULL: out of memory), then the event, its frames in that room. */
static inline struct jpb_decoded_frame *flow_push_slot(struct flow *f);
/* N events parsed at once at f->ev + f->nev, their frames in place */
static inline int flow_pushed(struct flow *f, size_t n);
int flow_finish(struct flow *f, struct flow_summary *sum);

/* A gap in a thread's output: before flow event `at`, lost time t0..t1. */
struct gapmark {
	size_t at;
	uint64_t t0, t1;
};

/* Write out[plen..nout) to the sink with the fills of its new gaps
 * among its events, leaving out as it is (recover.c). */
int flow_recover_write(struct flow *f);
/* The same fills put in place: out[plen..nout) becomes what
 * flow_recover_write writes (recover.c; for the tests). */
int flow_recover(struct flow *f);

/* The time model of recovery (recover_time.c): TSC ticks per event. */
struct fcost {
	double interp, compiled;
};
/* Fit the model to the thread's output (out[0..nout)) as recovery's own
 * pass over the window goes: start, flow_cost_window at each index whose
 * TSC differs from s->tsc (the current timing window's), with the
 * window's count of compiled events (status decoded), then end.  Start's
 * failure leaves the model unfitted (both rates 0).  flow_cost_fit
 * (recover.c) runs that pass alone, with no gap to fill: the model
 * recovery would use, for the tests. */
void flow_cost_fit(struct flow *f, struct fcost *c);
struct cwin { /* a timing window of mostly compiled events */
	double ticks;
	size_t len, nc;
};
struct fcost_fit {
	size_t i;      /* the current timing window starts at out[i] */
	uint64_t tsc;  /* ... with this TSC */
	size_t g;      /* the first gap not before it */
	double *v;     /* the values of the windows ended */
	struct cwin *cw;
	size_t n, nw;
};
int flow_cost_fit_start(const struct flow *f, struct fcost_fit *s);
void flow_cost_window(const struct flow *f, struct fcost_fit *s, size_t j, size_t nc);
void flow_cost_fit_end(struct fcost_fit *s, struct fcost *c);
double flow_cost_of(const struct fcost *c, const struct jpb_flow_event *v,
		    size_t n);
/* Ticks lost in gap GI, or -1 when unknown. */
double flow_gap_budget(const struct flow *f, const struct fcost *c, size_t gi);

/* The shortest feasible ICFG path from PRE to POST (recover_path.c):
 * *OUT (malloc'd, status recovered, ncand 0) gets its *NOUT events.
 * Returns 1 when a path exists, 0 when none, or a negative error. */
int flow_path(struct flow *f, const struct jpb_flow_event *pre,
	      const struct jpb_flow_event *post, struct jpb_flow_event **out,
	      size_t *nout);

/* A method, in 64 bytes: every loaded method has one once the resync
 * index is built (jython: 45 k), so what the flow reads rarely is not
 * kept here but found through hm (names: flow_meth_name), and what a
 * method entry asks of the calling method (hm.cls, cfg, sites,
 * cfg_tried: flow_is_invoke_at, flow_callees) lies in one cache line.
 * A method of a class the program lacks (jvm_method_code) has hm.cls
 * NULL, and owns hm.m (its strings and code in the same block: see
 * flow_add_method_code) and cfg. */
struct fmeth {
	struct jhier_method hm;
	const struct jcfg *cfg; /* NULL: no code or no CFG; see flow_meth_cfg */
	/* per instruction of its CFG, the callees flow_callees found there
	 * (allocated at its first invoke asked about) */
	struct fsite *sites;
	uint64_t method_id; /* jmethodID if known, else 0 */
	uint8_t cfg_tried; /* cfg was asked for (CFGs are built on first use) */
	uint8_t used; /* named by an output event */
};

/* The names of meths[M] (method_id, class, name, descriptor). */
struct flow_method_info flow_meth_name(const struct flow *f, uint32_t m);

/* What flow_entry_fits asks of a method: 1 + the locals a zerolocals
 * entry zeroes for it (max_locals minus the parameters' slots), 0 not
 * yet asked, -1 unknown; its synchronized flag, -1 unknown. */
struct ekey {
	int32_t zeroed1, sync;
};

/* An invoke's candidate callees with a CFG: N meths indices at
 * callees[START1 - 1]; START1 0: not asked yet.  Likewise the linkage
 * frames it may run first (LSTART1, LN; flow_linkage_targets). */
struct fsite {
	uint32_t start1, n;
	uint32_t lstart1, ln;
};

/* One of a call site's candidate callees (f->callees): its meths index
 * and, beside it, what step_entry's filters ask of it (flow_entry_key's
 * ZEROED1 and SYNC; whether it has code and its first opcode), as the
 * methods' own records lie apart, a cache line or more each. */
struct fcallee {
	uint32_t m;
	int32_t zeroed1;
	int8_t sync;
	uint8_t code; /* has bytecode (else flow_cand_fits tests no opcodes) */
	uint8_t op0;  /* its first opcode, when it has code */
	/* flow_callee_runs' last answer here, 1 + yes, for stage_oph OPH
	 * (0: none): a site is entered with the same next opcodes over and
	 * over, and this line is read anyway */
	uint8_t runs1;
	uint32_t oph[2]; /* not a uint64_t: 20 bytes an entry, not 24 */
};

/* One frame of a state's call stack; immutable once built (but for the
 * top frame of the one state alive, moved by flow_frame_move), shared. */
struct frame {
	struct frame *up;
	uint32_t meth;
	uint32_t pos;  /* instruction index in meth's CFG */
	/* bits, so that a frame is 24 bytes, not 32: the arena's stores and
	 * the reads of states' frames miss the cache a quarter less */
	uint8_t done : 1; /* pos has run (else it runs next) */
	uint8_t comp : 1; /* part of a compiled activation */
	uint8_t act : 1;  /* outermost frame of its compiled activation */
	uint8_t zero : 5; /* 0: a new frame's byte is stored whole, not
			   * read and merged */
	uint8_t doubt; /* placed by a resynchronisation (or on such a frame) */
	uint8_t joined; /* a join lies below (or this is one): flow_is_join */
	/* a hash of what equal stacks share (stack_eq: meth, pos, done,
	 * comp, act of this frame and of every frame below), so that a
	 * state's hash costs one frame, not a walk; 0: not made yet
	 * (flow_frame_h) */
	uint32_t h;
};

/* A join (reconstruct/joins.c): where the states of one step that enter
 * the same callee from different callers became one state, the callee's
 * frame sits on a join frame (meth FLOW_JOIN, pos its index in f->joins,
 * no up) that stands for all the callers; a return through it splits the
 * state again, each new state's edge naming the caller it returned to
 * (RECONSTRUCTION.md, "Callers that share a callee"). */
#define FLOW_JOIN UINT32_MAX
static inline int flow_is_join(const struct frame *fr)
{
	return fr->meth == FLOW_JOIN;
}

/* One caller of a join: its frame (the top of the state that made the
 * call), that state's evidence, and its join. */
struct jalt {
	struct frame *up;
	uint64_t score;
	uint32_t join;
	/* mark_preds: the marks of paths that returned through it (valid
	 * while gen is f->jgen) */
	uint32_t gen;
	uint8_t used;
};

struct fjoin {
	uint32_t first, n; /* its callers: f->jalts[first .. first + n) */
	uint64_t best;     /* the most evidence among them */
	uint32_t pick;     /* the caller a resolution chose, UINT32_MAX none */
	uint32_t gen;      /* mark_ends: open valid while gen is f->jgen */
	uint8_t open;      /* marks of end states still inside the callee */
};

/* An edge's link (struct edge): 0 none; a jalts index + 1, the edge
 * returns (or unwinds) through that caller of its join; with
 * LINK_ENTRY, the edge is that caller's call into the join's callee. */
#define LINK_ENTRY 0x80000000u

/* FR's fields mixed with UP_H, its caller's stack hash. */
static inline uint32_t flow_frame_mix(const struct frame *fr, uint32_t up_h)
{
	uint64_t x = ((uint64_t)fr->meth << 32 | fr->pos) * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)up_h << 3 |
		      (uint64_t)(fr->done | fr->comp << 1 | fr->act << 2)) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)((x ^ x >> 29) >> 32);
}

/* The stack hash of FR (0 for NULL), made when first asked (and again
 * after a move): most frames, those of single-state runs, never are. */
static inline uint32_t flow_frame_h(struct frame *fr)
{
	if (fr && !fr->h)
		fr->h = flow_frame_mix(fr, flow_frame_h(fr->up));
	return fr ? fr->h : 0;
}

/* The top frame T of the one state alive moved to instruction POS, in
 * place (no other frame lies on it). */
static inline void flow_frame_move(struct frame *t, uint32_t pos)
{
	t->pos = pos;
	t->h = 0;
}

enum lost_kind {
	LOST_NONE = 0,
	LOST_ANY,      /* nothing known */
	LOST_AFTER_RET, /* a return to an unknown caller just ran */
	LOST_AT_ENTRY, /* an unknown method is being entered */
	LOST_AT_HANDLER, /* an exception handler of an unknown frame */
};

struct node {
	uint64_t score;    /* evidence for the path to it (choice rule) */
	struct frame *top; /* NULL when lost */
	struct frame *below; /* lost: the known caller frames, if any */
	uint8_t lost;
	uint8_t mark;
	uint8_t doubt; /* descends from a truncated or guessed state set */
	uint32_t edge; /* first predecessor edge + 1, 0 none */
};

struct edge {
	uint32_t from;
	uint32_t next; /* + 1 */
	uint32_t link; /* LINK_ENTRY | jalts index + 1, or that + 0: see above */
};

/* A state held back until all of a step's states are known
 * (flow_stage_begin / flow_stage_end). */
struct staged {
	struct frame *top, *below;
	uint32_t from;
	uint32_t seq;  /* order of staging */
	uint32_t ev;   /* the evidence for its top method (choice rule) */
	uint32_t rank; /* its place among FROM's successors, by evidence */
	uint32_t link; /* its edge's (struct edge) */
	uint8_t lost;
	uint8_t alone; /* equals no other state of its step (flow_stage_entries) */
};

struct step {
	uint32_t first, n;
	uint32_t ev;   /* index of the decoded event */
	uint8_t emit;  /* produces a flow event */
	uint8_t op;    /* JVMS opcode for interpreted steps */
	uint8_t trunc; /* max_states dropped some of its states */
	/* STEP_LOST | STEP_KNOWN: which its states are (flow_drop_lost's
	 * test, which counted them at every step) */
	uint8_t kinds;
};
enum { STEP_LOST = 1, STEP_KNOWN = 2 };

/* Where a compiled frame (method_id, bci) is: a direct-mapped cache,
 * compiled code runs the same few frames over and over.  A method's
 * entries are side by side, by bci from a slot its id hashes to (not
 * spread by a hash of the pair): the bcis a run visits are near each
 * other, and share cache lines (jython: 0.34 M fewer misses, and
 * fewer fills, than with the pair's hash). */
#define CPOS_SIZE 4096u
struct cpos {
	uint64_t id;
	int32_t bci;
	int32_t pos;   /* instruction index, -1 when bci is not one */
	int32_t meth;  /* meths index, -1 unknown; -2: entry unused */
	uint8_t op;    /* the instruction's opcode (emitted), 0 when pos < 0 */
};

/* flow_can_call's answers by (caller method, instruction, callee): a
 * compiled call is checked at every entry, against the same few sites.
 * Keys are stored + 1, so that the calloc'd table is empty. */
#define CALL_MEMO 1024u
struct call_memo {
	uint32_t meth1, pos, callee;
	uint32_t yes;
};

#define RUNS_MEMO 4096u
struct runs_memo {
	uint64_t oph;
	uint32_t meth1; /* meths index + 1; 0: empty */
	uint32_t yes;
};

/* What step_entry's filters leave of the candidates of one call site
 * (flow_entry_cands), by the invoke (METH1 - 1, POS), the filters' WANT,
 * NOPS and (when NOPS) OPH: the N meths indices at f->epool[OFF] that
 * pass, in staging order, and how many did not (NUNFIT, NOPMISS). */
#define ENTRY_MEMO 16384u
struct entry_memo {
	uint64_t oph;
	uint32_t meth1, pos; /* meth1 0: empty */
	int32_t want;
	uint32_t nops, off, n, nunfit, nopmiss;
};

#define CHUNK_FRAMES 4096u
struct chunk {
	struct chunk *next;
	size_t used;
	struct frame f[CHUNK_FRAMES];
};

struct flow {
	struct jprog *p;
	struct flow_opts o;
	struct fmeth *meths;
	size_t nmeths, capm;
	/* a class-file method's meths index + 1 (0 none) at midx[at + its
	 * index in the class], AT by class (class_slots) */
	struct u64map by_cls;
	uint32_t *midx;
	size_t nmidx, capmidx;
	struct u64map by_id; /* jmethodID -> meths index + 1, 0 unresolvable */
	struct fcallee *callees; /* the fsite lists of every method */
	/* per meths index, flow_entry_key's answers: apart from meths, as
	 * an entry asks of every callee it stages, and 8 bytes a method
	 * stay in cache where a 120-byte fmeth each does not */
	struct ekey *ekey;
	size_t capekey;
	/* per meths index, its CFG's jcfg_hots (NULL: not asked yet, or no
	 * CFG): likewise apart, for flow_meth_hot */
	const struct jcfg_hot **mhot;
	size_t capmhot;
	/* the distinct hot arrays given out, by a hash of what they hold
	 * (an index into hshare): methods of the same code share one */
	struct u64map hot_by;
	struct flow_hshare {
		const struct jcfg_hot *hot;
		uint32_t n;
	} *hshare;
	size_t nhshare, caphshare;
	size_t ncallees, capcallees;
	uint32_t *synth; /* meths indices of the methods of missing classes */
	size_t nsynth;
	/* method-handle linkage frames: [0] call sites, [1] handle calls,
	 * [2] VarHandle access modes' guards */
	int link_built;
	uint32_t *link[3];
	size_t nlink[3];
	/* per linkage frame, a hash of its descriptor in basic types
	 * (callees.c, basic_sig_hash; 0: unknown, fits any call) */
	uint64_t *lsig[3];
	char **codelets;
	uint8_t *clkind; /* per codelet, its CODELET_* bits */
	size_t ncodelets;
	/* resync index (raw bytecode), by (opcode, next opcode), 0xff as
	 * next = ends the lookahead, by opcode the instructions no pair
	 * lists, by (opcode, next opcode) those at bci 0 (RESYNC_KEYS lists,
	 * resync.c): code offsets (mscan[m].start + bci), the last lists
	 * their methods m, in program order */
	int rindex_built;
	uint32_t *pairstart; /* RESYNC_KEYS + 1 entries */
	uint32_t *pairidx;
	/* the third opcodes (resync.c, entry_third) of the lists' entries,
	 * made as scans by three opcodes or more reach them, lists side by
	 * side: a list's where third_at (its key + 1) says, after a 4-byte
	 * count of those made */
	uint8_t *thirds;
	size_t nthirds, capthirds;
	uint8_t plain[256]; /* per opcode, resync.c's plain_kinds */
	struct u64map third_at;
	/* a one-opcode scan's scratch: a bit per byte of code */
	uint64_t *opbits;
	/* the code of each method the index lists, side by side (not
	 * through meths[] and the class file's method: two cache misses per
	 * entry scanned), and where it starts among all methods' code
	 * (mscan[nmeths].start: their total); its entry key is in ekey */
	struct flow_mscan {
		const uint8_t *code;
		uint32_t len, start;
	} *mscan;
	uint32_t nmscan; /* methods the index lists */
	/* per 64 bytes of code, the method holding its first byte (in
	 * mscan's block) */
	uint32_t *mpage;
	/* per method of the index, whether its code has a switch, jsr or ret
	 * (where flow_raw_explains leaves the answer to explains; in
	 * mscan's block) */
	uint8_t *mhard;
	/* per thread: the decoded events from the oldest pending step's on,
	 * the next to run at ev[next] */
	struct jpb_decoded_slim *ev;
	size_t nev, capev, next;
	struct jpb_decoded_frame *fr;
	size_t nfr, capfr;
	int nev_final; /* no more events: the lookahead may end */
	/* resync results by (lost kind, opcodes looked at) */
	struct rcache *rc;
	size_t nrc;
	uint64_t *rpool;
	size_t nrpool, caprpool;
	struct node *nodes;
	size_t nnodes, capn;
	struct edge *edges;
	size_t nedges, cape;
	struct step *steps;
	size_t nsteps, caps;
	/* pending steps that emit (flow_flush_some makes room for their
	 * events at once) */
	size_t nemit;
	/* resolution's returns through joins not yet matched by their
	 * entries, innermost last (resolve.c, path_edge) */
	uint32_t *jreq;
	size_t njreq, capjreq;
	/* flow_join_staged's scratch: chain heads, links, members */
	uint32_t *jscratch;
	size_t capjscratch;
	/* flow_stage_entries' stamps by method (resolve.c): mgen when seen
	 * in the current caller's callees; the last caller staged, and
	 * whether callers came out of order (no state is then alone) */
	uint32_t *mstamp;
	size_t capmstamp;
	uint32_t mgen, alone_last;
	int alone_off;
	/* the current step's states by a hash of their stacks, once it
	 * has HIDX_MIN (flow_add_node_below): valid while hepoch is nepoch,
	 * which every change of a step's states but an addition bumps
	 * (resolve.c's states_rewritten, its only writer);
	 * hn states indexed, hidx[] holds node indices + 1 (and hash bits),
	 * followed by the slots in use (resolve.c's hidx_slots) */
	uint64_t *hidx;
	size_t caphidx, hn;
	uint64_t nepoch, hepoch;
	uint64_t *cset; /* scratch of count_cands, csize entries in use */
	size_t capcset, csize;
	struct cpos *cpos; /* CPOS_SIZE entries */
	struct call_memo cmemo[CALL_MEMO];
	/* the last compiled event compiled_fast ran (an index into ev) and
	 * the top it left; NULL when the frames may have changed (a new
	 * thread, ev compacted, the arena compacted) */
	struct frame *ctop;
	uint32_t cprev;
	uint8_t couter0; /* its outermost frame was at instruction 0 */
	struct chunk *arena;
	size_t arena_frames;
	/* the output window: out[0..plen) is context already written; while
	 * osplit, the context is at out[octx..octx+plen) and the window's
	 * events from plen on at out[0..octx) (flow_out_at) */
	struct jpb_flow_event *out;
	size_t nout, capo, plen;
	int osplit;
	size_t octx;
	struct flow_sink sink;
	struct timespec t0;
	/* flow_thread's result */
	struct jpb_flow_event *all;
	size_t nall, capall;
	int win_trunc; /* a pending step was truncated */
	int gapless;   /* flow_begin's GAPLESS */
	/* a step's states before the cap (flow_stage_end) */
	struct staged *stage;
	size_t nstage, capstage;
	uint32_t *stage_ord;
	size_t capord;
	int staging; /* STAGE_* (resolve.c) */
	/* an interpreted step's states added while they fit the cap
	 * (flow_stage_begin_added): the additions so far, the step's first
	 * edge, and the additions whose top was not their state's (a twin
	 * of it), by edge */
	size_t nadded, added_edge0;
	struct added_twin {
		size_t edge;
		struct frame *top;
	} *twins;
	size_t ntwins, captwins;
	struct gapmark *gaps;
	size_t ngaps, capg;
	/* per method, events placed there for sure so far (decoded, certain) */
	uint32_t *proven;
	size_t nproven;
	int no_recover;
	/* what the last method entry with a step says of its method
	 * (flow_entry_want): the entry of any LOST_AT_ENTRY state, as only
	 * step_entry makes them and the next step consumes them */
	int entry_want;
	/* while step_entry stages callees: the WANT they must fit, else -1
	 * (flow_cand_fits), and how many did not */
	int stage_want;
	size_t nunfit;
	/* while step_entry stages callees: the opcodes the next events run
	 * (flow_lookahead_ops), which a callee's code from its first
	 * instruction must be able to run (flow_raw_explains), none when
	 * stage_nops is 0; and how many callees that fit the locals were not
	 * staged for them */
	uint8_t stage_ops[64];
	size_t stage_nops;
	uint64_t stage_oph; /* a hash of stage_ops */
	size_t nopmiss;
	/* flow_callee_runs' answers by (callee, stage_oph): the same calls
	 * are entered with the same next opcodes over and over */
	struct runs_memo *runs;
	/* flow_entry_cands' answers, and the pool of their callees (started
	 * over when large, the table emptied with it), made while there were
	 * ememo_synth methods of hidden classes (nsynth) */
	struct entry_memo *ememo;
	uint32_t *epool;
	size_t nepool, capepool, ememo_synth;
	/* joins (reconstruct/joins.c), alive while their window is: emptied
	 * when the states restart from one */
	struct fjoin *joins;
	size_t njoins, capjoins;
	struct jalt *jalts;
	size_t njalts, capjalts;
	uint32_t jgen;
	/* the link of the states a transition adds now (struct edge), set
	 * while it returns through a join */
	uint32_t cur_link;
	struct flow_summary sum;
};

/* The meths index of HM, a method of the class file HM->cls, numbered
 * when first asked for; 0, or jpb_err_nomem, or jpb_err_invalid when
 * HM->m is not that class's method at its index. */
int flow_meth_index(struct flow *f, const struct jhier_method *hm,
		    uint32_t *out);
/* flow_meth_index for each method with code of the class file CLS (of
 * LOADER), in its order, with its class's slots found once (resync.c's
 * index numbers every loaded method: jython 45 k); 0, or jpb_err_nomem. */
int flow_meth_index_class(struct flow *f, const struct jcf *cls, uint64_t loader);
/* Room for flow_meth_index to find the methods of NCLASSES classes with
 * NMETHODS methods in all without growing on the way. */
int flow_meth_lookup_reserve(struct flow *f, size_t nclasses, size_t nmethods);
/* The callees step_entry stages for the invoke at T (flow_is_invoke_at)
 * under its filters (f->stage_want, f->stage_nops, f->stage_ops): those
 * of flow_callees, then the linkage frames, then methods of hidden
 * classes, that pass (flow_cand_fits); *OUT their meths indices, valid
 * until the next call.  Their count, or a negative error; *NUNFIT and
 * *NOPMISS those that did not pass. */
int flow_entry_cands(struct flow *f, const struct frame *t, const uint32_t **out,
		     uint32_t *nunfit, uint32_t *nopmiss);
/* The meths index of jmethodID ID; -1 when the program lacks it. */
int64_t flow_meth_of_id(struct flow *f, uint64_t id);
const char *flow_codelet(const struct flow *f, uint64_t index);
/* What codelet INDEX's description says, found once when it is set:
 * a transition asks at every event. */
enum {
	CODELET_NO_BYTECODE = 1, /* a native or intrinsic method entry */
	CODELET_EXCEPTION = 2,
	CODELET_DEOPT = 4,
	/* a zerolocals method entry (with or without synchronized): its
	 * loop zeroes the method's non-parameter locals, which the decoder
	 * counts (entry_locals) */
	CODELET_ZEROLOCALS = 8,
	CODELET_SYNC = 16, /* zerolocals_synchronized */
};
static inline unsigned flow_codelet_kind(const struct flow *f, uint64_t index)
{
	return index < f->ncodelets ? f->clkind[index] : 0;
}
/* What a method entry of kind CODELET with entry_locals LOCALS says of
 * the method entered: -1 nothing (not a zerolocals entry, or the count
 * unknown), else the locals its loop zeroed << 1 | 1 for the
 * synchronized entry (RECONSTRUCTION.md, "The locals of a method
 * entry"). */
static inline int flow_entry_want(unsigned codelet, uint32_t locals)
{
	/* the kind is known even where the count is not (0: a loop cut by an
	 * interrupt or a gap, or not found in this JVM's interpreter) */
	if (!(codelet & CODELET_ZEROLOCALS))
		return -1;
	return (int)(locals < 0x3fffffffu ? locals : 0) << 1 | !!(codelet & CODELET_SYNC);
}
/* May meths[M] be the method an entry that says WANT entered?  Its
 * locals (max_locals minus the parameters' slots, `this` included) and
 * its synchronized flag must match, each unless unknown (the entry's
 * count not known; no Code attribute, a hidden-class method known by its
 * bytecode only, a max_locals below the parameters'); yes when WANT is
 * -1 (not a zerolocals entry).  WANT: entry_locals << 1 | synchronized.
 * Defined below flow_fits. */
static inline int flow_entry_fits(struct flow *f, uint32_t m, int want);
/* flow_entry_fits' rule for a method whose ZEROED1 (1 + the locals its
 * entry zeroes) and SYNC (its synchronized flag) are known, each -1 when
 * unknown. */
static inline int flow_fits(int want, int32_t zeroed1, int sync)
{
	if (want < 0)
		return 1;
	if (sync >= 0 && sync != (want & 1))
		return 0;
	int counted = want >> 1; /* entry_locals: 0 unknown, else 1 + n */
	return !counted || zeroed1 < 0 || zeroed1 == counted;
}
/* Can the code of candidate C, whose first opcode is the next event's,
 * run the next opcodes (f->stage_ops)?  flow_raw_explains, kept in C and
 * by method. */
int flow_callee_runs(struct flow *f, struct fcallee *c);
/* Does candidate C pass step_entry's filters?  Counted in f->nunfit or
 * f->nopmiss when not.  The next events run the callee's first
 * instructions: a callee whose code cannot run them dies within the
 * lookahead, after its entry had cost a frame, a state per step, a place
 * under the cap and its CFG.  Inline: asked of every candidate of every
 * state at an entry (jython 466 k), and most do not pass. */
static inline int flow_cand_fits(struct flow *f, struct fcallee *c)
{
	if (f->stage_want >= 0 && !flow_fits(f->stage_want, c->zeroed1, c->sync)) {
		f->nunfit++;
		return 0;
	}
	/* no code: nothing to test */
	if (f->stage_nops && c->code &&
	    (c->op0 != f->stage_ops[0] || !flow_callee_runs(f, c))) {
		f->nopmiss++;
		return 0;
	}
	return 1;
}
/* What flow_fits needs of meths[M]. */
struct ekey flow_entry_key(struct flow *f, uint32_t m);
/* Inline: asked of every callee an entry stages; a method not asked
 * before goes to flow_entry_key. */
static inline int flow_entry_fits(struct flow *f, uint32_t m, int want)
{
	if (want < 0)
		return 1;
	struct ekey k = m < f->capekey && f->ekey[m].zeroed1 ? f->ekey[m] :
							      flow_entry_key(f, m);
	return flow_fits(want, k.zeroed1, k.sync);
}
/* The CFG of meths[M], built on first use (jprog caches it); NULL when
 * the method has no code or its code is bad.  Inline: asked at every
 * step; the build is out of line. */
const struct jcfg *flow_meth_cfg_build(struct flow *f, uint32_t m);
static inline const struct jcfg *flow_meth_cfg(struct flow *f, uint32_t m)
{
	const struct fmeth *fm = &f->meths[m];
	return fm->cfg_tried ? fm->cfg : flow_meth_cfg_build(f, m);
}

/* The jcfg_hots of meths[M]'s CFG (built on first use), NULL when it has
 * none, or those of an earlier method's CFG that hold the same.  Inline,
 * from f->mhot: interp_from asks at every state, and the 120-byte fmeth
 * and the CFG's header it read on the way missed the cache. */
const struct jcfg_hot *flow_meth_hot_slow(struct flow *f, uint32_t m);
static inline const struct jcfg_hot *flow_meth_hot(struct flow *f, uint32_t m)
{
	return m < f->capmhot && f->mhot[m] ? f->mhot[m] : flow_meth_hot_slow(f, m);
}

/* Method and instruction of compiled frame (ID, BCI): its cache entry
 * (meth -1 when the program lacks the method, pos -1 when BCI is not an
 * instruction), valid until the next lookup.  Inline: asked for every
 * frame of every compiled event; a cache miss fills C out of line. */
const struct cpos *flow_cpos_fill(struct flow *f, uint64_t id, int32_t bci,
				  struct cpos *c);
static inline const struct cpos *flow_cpos(struct flow *f, uint64_t id, int32_t bci)
{
	struct cpos *c = &f->cpos[(((id * 0x9e3779b97f4a7c15ull) >> 52) + (uint32_t)bci) &
				  (CPOS_SIZE - 1)];
	if (c->meth != -2 && c->id == id && c->bci == bci)
		return c;
	return flow_cpos_fill(f, id, bci, c);
}

static inline const struct jcfg_insn *flow_insn(struct flow *f, uint32_t meth,
					       uint32_t pos)
{
	return jcfg_insn(flow_meth_cfg(f, meth), pos);
}

static inline const struct jpb_decoded_frame *flow_ev_frames(const struct flow *f,
							   const struct jpb_decoded_slim *e)
{
	return f->fr + e->fr;
}

/* One flow event stored field by field: built on the stack and copied,
 * its 16-byte load over the narrower stores that had just built it
 * stalled on store forwarding (~7% of a run). */
static inline void flow_out_set(struct jpb_flow_event *o, uint32_t method,
				int32_t bci, uint8_t op, uint8_t status,
				uint16_t ncand, uint64_t tsc)
{
	o->method = method;
	o->bci = bci;
	o->opcode = op;
	o->status = status;
	o->ncand = ncand;
	o->reserved = 0;
	o->tsc = tsc;
}

/* ---- the output window (reconstruct/thread.c) ---- */

/* Where the window's event NOUT goes.  A window cut without recovery
 * leaves its context where it is, and the next window's events go to
 * the room before it (the window's two halves take turns) instead of
 * the context being copied to the front: the copy was ~6% of a SimLoop
 * run's flow phase.  Recovery, and an event the room cannot take, first
 * join the two (flow_out_join). */
static inline size_t flow_out_at(const struct flow *f)
{
	return f->osplit ? f->nout - f->plen : f->nout;
}
/* Room for N more events at flow_out_at (joining the window when the
 * room before the context is too small); 0 or out of memory. */
int flow_out_room_slow(struct flow *f, size_t n);
static inline int flow_out_room(struct flow *f, size_t n)
{
	if (f->osplit ? f->nout - f->plen + n <= f->octx : f->nout + n <= f->capo)
		return 0;
	return flow_out_room_slow(f, n);
}

/* ---- the input buffer (reconstruct/thread.c) ---- */

/* Events resync's lookahead may read after the one run: it reads at
 * most 64 opcodes, at least one per event. */
#define LOOKAHEAD_EV 64u
/* Events run before the buffer drops those behind: small, so that it
 * stays in cache. */
#define EV_COMPACT (1u << 12)
/* Events pushed before those ready run (their order and the windows do
 * not depend on it), so that runs of compiled events are long; but few,
 * as an event is read again when it runs, LOOKAHEAD_EV + RUN_BATCH
 * events after the reader wrote it: at 256 it had left the L1 cache
 * more often (jython: 0.6 M more misses than at 32). */
#define RUN_BATCH 32u

static inline size_t flow_ev_compact(const struct flow *f)
{
	return f->o.window && f->o.window < EV_COMPACT ? f->o.window : EV_COMPACT;
}

int flow_run_ready(struct flow *f);
struct jpb_decoded_frame *flow_push_slot_slow(struct flow *f);

/* Inline, as the reader's loop calls them per event; the buffer's
 * compaction and growth are out of line. */
static inline struct jpb_decoded_frame *flow_push_slot(struct flow *f)
{
	if (f->next < flow_ev_compact(f) && f->nev < f->capev &&
	    f->nfr + JPB_DECODED_MAX_FRAMES - 1 < f->capfr)
		return f->fr + f->nfr;
	return flow_push_slot_slow(f);
}

/* Running the ready events once per batch instead of as soon as there
 * are enough runs the same events in the same order. */
static inline int flow_pushed(struct flow *f, size_t n)
{
	if (!n)
		return 0;
	const struct jpb_decoded_slim *e = &f->ev[f->nev + n - 1];
	f->nfr = e->fr + e->nframes;
	f->nev += n;
	return f->nev - f->next > LOOKAHEAD_EV + RUN_BATCH ? flow_run_ready(f) : 0;
}

/* ---- the automaton (reconstruct/) ---- */

#define MAX_UNWIND 64
#define MAX_PENDING_STEPS (1u << 16)
/* Frames (24 bytes) allocated before the one state's stack is copied to a
 * fresh arena: 1.5 MB.  At 1 << 20 (of 24-byte frames) the arena stayed 24 MB at the peak and
 * its pages were a share of the page faults; a copy costs the stack's
 * depth, once per 65536 frames. */
#define ARENA_COMPACT (1u << 16)

static inline struct step *flow_cur_step(struct flow *f)
{
	return &f->steps[f->nsteps - 1];
}

/* resolve.c: frames, steps, states and the resolution of pending steps */
/* A frame's room in a new chunk of the arena (NULL: out of memory). */
struct frame *flow_frame_slot_slow(struct flow *f);

/* Inline: a jython decode makes ~3 M frames, and the call with its seven
 * arguments cost a third of each; a new chunk is out of line. */
static inline struct frame *flow_frame_make(struct flow *f, struct frame *up,
					    uint32_t meth, uint32_t pos, int done,
					    int comp, int act)
{
	struct frame *fr = f->arena && f->arena->used < CHUNK_FRAMES ?
				   &f->arena->f[f->arena->used++] :
				   flow_frame_slot_slow(f);
	if (!fr)
		return NULL;
	f->arena_frames++;
	*fr = (struct frame){ up, meth, pos, (uint8_t)done, (uint8_t)comp, (uint8_t)act, 0, 0,
			      up ? up->joined : 0, 0 };
	return fr;
}

static inline struct frame *flow_frame_new(struct flow *f, struct frame *up,
					   uint32_t meth, uint32_t pos, int done)
{
	return flow_frame_make(f, up, meth, pos, done, 0, 0);
}

/* A frame of a compiled activation (ACT: its outermost), its
 * instruction run. */
static inline struct frame *flow_frame_new_comp(struct flow *f, struct frame *up,
						uint32_t meth, uint32_t pos, int act)
{
	return flow_frame_make(f, up, meth, pos, 1, 1, act);
}
void flow_arena_free(struct chunk *c);
int flow_step_begin(struct flow *f, uint32_t ev, int emit, uint8_t op);
/* f->staging: states added now, held back (staged), or added now while
 * they fit the cap (flow_stage_begin_added). */
enum { STAGE_NONE, STAGE_HELD, STAGE_ADDED };
/* Add state (TOP, LOST, BELOW) reached from node FROM to the current
 * step now; flow_add_node_below's two halves. */
int flow_add_now(struct flow *f, struct frame *top, int lost, uint32_t from,
		 struct frame *below);
/* ...or while it is staged (f->staging). */
int flow_add_staging(struct flow *f, struct frame *top, int lost, uint32_t from,
		     struct frame *below);
/* Inline, the staging test before any call: the transitions add ~800 k
 * states on jython, and a call that only chose between two others cost
 * ~40 instructions each. */
static inline int flow_add_node_below(struct flow *f, struct frame *top, int lost,
				      uint32_t from, struct frame *below)
{
	if (!f->staging || (f->staging == STAGE_ADDED && f->nadded++ < f->o.max_states))
		return flow_add_now(f, top, lost, from, below);
	return flow_add_staging(f, top, lost, from, below);
}
static inline int flow_add_node(struct flow *f, struct frame *top, int lost, uint32_t from)
{
	return flow_add_node_below(f, top, lost, from, NULL);
}
/* Between the two (begun right after flow_step_begin, by method entries
 * and interpreted steps), states added to the current step are held back;
 * at the end they are added as they came, or, if max_states drops one,
 * all again by rank: every predecessor's likeliest successor before any
 * one's second (RECONSTRUCTION.md, "Pruning"). */
void flow_stage_begin(struct flow *f);
/* Stage the entries of callees M[0..N) on the invoke at T, each a state
 * from node FROM, as flow_add_node of each new frame would while
 * staging is held (flow_stage_begin; else jpb_err_internal). */
int flow_stage_entries(struct flow *f, struct frame *t, const uint32_t *m, uint32_t n,
		       uint32_t from);
/* flow_stage_begin for a step whose states are added as they come while
 * they fit the cap (no join is looked for): they are added at once, and
 * staged only when more come than the cap (RECONSTRUCTION.md, "Flow
 * phase cost"). */
void flow_stage_begin_added(struct flow *f);
int flow_stage_end(struct flow *f);
/* flow_stage_end for a method entry's callees: first those that enter
 * one callee from different callers become one state (flow_join_staged;
 * no other step stages a method's first instruction). */
int flow_stage_end_entries(struct flow *f);
void flow_drop_lost(struct flow *f);
int flow_flush_some(struct flow *f, uint32_t chosen, int all);
int flow_flush_first(struct flow *f);
int flow_reset_lost(struct flow *f, int lost);
/* A thread's start: one state, lost. */
int flow_states_begin(struct flow *f);
/* A compiled event I that left the single state TOP from a single
 * resolved one: emitted (OP: the opcode at TOP), TOP the new resolved
 * state. */
int flow_settle_compiled(struct flow *f, uint32_t ev, struct frame *top,
			 uint8_t op);
/* The single resolved state TOP (a compiled event's innermost frame),
 * with nothing pending: flow_settle_compiled less the emission. */
void flow_settle_state(struct flow *f, struct frame *top);
/* Evidence: method M placed for sure N more times. */
void flow_prove_n(struct flow *f, uint32_t m, size_t n);
/* Interpreted opcode OP of event EV (emitted when EMIT_IT) moved the
 * single resolved state's top frame to TOP, a single state again. */
int flow_settle_interp(struct flow *f, uint32_t ev, uint8_t op, int emit_it,
		       struct frame *top);

/* callees.c: who an invoke may call */
int flow_is_invoke_at(struct flow *f, const struct frame *t);
int flow_call_targets(struct flow *f, const struct frame *t,
		      const struct jhier_method **out);
int flow_can_call(struct flow *f, const struct frame *t, uint32_t callee);

/* resync.c: the whole program's search for a lost position */
int flow_fuses(uint8_t op, const struct jcfg *g, uint32_t pos);
/* The opcodes the automaton will see from event I on (fused dispatches
 * expanded), up to MAX, stopping at any other event: their count. */
size_t flow_lookahead_ops(const struct flow *f, uint32_t i, uint8_t *ops, size_t max);
/* The lookahead's opcodes from event I: flow_lookahead_ops for
 * flow_opts.lookahead of them (at most 64). */
static inline size_t flow_lookahead(const struct flow *f, uint32_t i, uint8_t ops[64])
{
	return flow_lookahead_ops(f, i, ops, f->o.lookahead < 64 ? f->o.lookahead : 64);
}
/* A hash of N opcodes OPS searched for after LOST (at an entry that
 * says WANT): the key of resync's cache, and of the entry filter's
 * memo (LOST_NONE, -1). */
uint64_t flow_ops_hash(int lost, int want, const uint8_t *ops, size_t n);
/* FNV-1a of P[0..N) from H (an FNV offset basis, or a hash so far). */
static inline uint64_t flow_fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}
#define FLOW_FNV_BASIS 1469598103934665603ull
/* Can the raw bytecode CODE from BCI (which ran OPS[0]) go on to run
 * OPS[1..N-1] within the method?  0 only where the automaton's steps
 * would find no way (calls, returns, throws, switches end the check
 * with 1); *BUDGET bounds the walk. */
int flow_raw_explains(const uint8_t *code, size_t len, size_t bci, const uint8_t *ops,
		      size_t n, unsigned *budget);
int flow_resync(struct flow *f, uint32_t i, uint8_t op, int lost, uint32_t from,
		struct frame *below);

/* joins.c: callers that share a callee */
/* Merge the staged entries of the step (flow_stage_end, before they are
 * added) that push the same callee on different callers: one frame on a
 * join of the callers. */
int flow_join_staged(struct flow *f);
/* The join that join frame J stands for. */
static inline const struct fjoin *flow_join_of(const struct flow *f, const struct frame *j)
{
	return &f->joins[j->pos];
}
/* For a resolution's path: is EDGE's link an entry (into the callee) of
 * a join, and which caller index (jalts) it names. */
static inline int flow_link_is_entry(uint32_t link)
{
	return (link & LINK_ENTRY) != 0;
}
static inline uint32_t flow_link_alt(uint32_t link)
{
	return (link & ~LINK_ENTRY) - 1;
}
/* The stack under TOP with every join replaced by the caller a
 * resolution picked (fjoin.pick; the first caller if none): TOP itself
 * when it has no join; NULL when out of memory. */
struct frame *flow_join_collapse(struct flow *f, struct frame *top);
/* mark_ends' rule for joins: the marks of end states still inside a
 * join's callee open it (all its callers stay candidates). */
void flow_join_open(struct flow *f, const struct frame *top, uint8_t mark);
void flow_joins_reset(struct flow *f);
/* State N's stack as known: its top, or a lost state's known caller
 * frames (NULL: none). */
static inline struct frame *flow_node_stack(const struct node *n)
{
	return n->top ? n->top : n->below;
}
/* Does state N's stack hold a join? */
static inline int flow_node_joined(const struct node *n)
{
	const struct frame *s = flow_node_stack(n);
	return s && s->joined;
}

/* steps.c: decoded event I (an index into f->ev) through the automaton */
int flow_event(struct flow *f, uint32_t i);
/* From f->next, before END, the compiled events that continue the
 * activation the last compiled event left as the single state (those
 * compiled_again takes, and those that change its inlined frames, which
 * compiled_fast would push on the same base), as one run; f->next moves
 * past them. */
int flow_run_compiled(struct flow *f, size_t end);

#endif /* JPBPF_FLOW_INT_H */
