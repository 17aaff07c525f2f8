/* SPDX-License-Identifier: MIT */
/*
 * Intel PT recording through perf_event_open (docs/RECORDING.md).
 *
 * Three layers, so that what needs no hardware is unit-tested here:
 *   probe   sysfs (intel_pt PMU type, caps/, format/), perf_event_paranoid,
 *           capabilities and CPUID 0x14/0x15, all read below a root
 *           directory that tests replace with a fake tree;
 *   config  attr.config built from the PMU's format/ bit positions;
 *   rings   AUX ring arithmetic (full-trace copy, snapshot extraction,
 *           PERF_RECORD_AUX flags, loss accounting) on plain memory;
 * and the recorder, which opens the events, mmaps the data and AUX areas
 * and drains them into the bundle using the layers above.
 *
 * Error codes are negative `enum jpb_pt_error` values named by jpb_pt_errstr(); the
 * functions that can fail for an environmental reason also fill a one-line
 * reason (`why`) naming the cause and what still works.
 */
#ifndef JPBPF_RECORD_PT_H
#define JPBPF_RECORD_PT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "bundle.h"
#include "codec.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jpb_pt_error {
	jpb_pt_ok = 0,
	jpb_pt_err_no_pmu = -1,    /* no intel_pt PMU: CPU, VM or kernel lacks PT */
	jpb_pt_err_paranoid = -2,  /* kernel.perf_event_paranoid forbids it */
	jpb_pt_err_perm = -3,      /* missing CAP_PERFMON / CAP_SYS_ADMIN / ptrace */
	jpb_pt_err_sysfs = -4,     /* intel_pt sysfs present but unreadable/odd */
	jpb_pt_err_unsupported = -5, /* an option this PMU does not have */
	jpb_pt_err_invalid = -6,   /* bad argument */
	jpb_pt_err_nomem = -7,
	jpb_pt_err_io = -8,        /* a system call failed; see `why` */
	jpb_pt_err_bundle = -9,    /* writing the bundle failed; see `why` */
	jpb_pt_err_overflow = -10, /* ring pointers inconsistent (head-tail > size) */
};

const char *jpb_pt_errstr(int err);

/* ------------------------------------------------------------------ */
/* Probe.                                                             */

/* One format/<name> file: "config:LO" or "config:LO-HI".  Only fields in
 * attr.config are used by jpbpf; others are kept with word != 0. */
#define JPB_PT_MAX_FORMATS 32
#define JPB_PT_MAX_CAPS 32
#define JPB_PT_NAME_MAX 32

struct jpb_pt_format {
	char name[JPB_PT_NAME_MAX];
	unsigned word; /* 0 = config, 1 = config1, 2 = config2, 3 = config3 */
	unsigned lo, hi;
};

struct jpb_pt_cap {
	char name[JPB_PT_NAME_MAX];
	uint32_t value; /* caps/ files are hex */
};

/* CPUID facts the decoder (libipt pt_config) needs.  Leaves 0x14/0x15/0x16
 * are read only on GenuineIntel with a max basic leaf that has them. */
struct jpb_pt_cpuid {
	char vendor[13];
	uint32_t max_leaf;
	int hypervisor;        /* CPUID.1:ECX[31]: running in a VM */
	int pt_bit;            /* CPUID.(7,0):EBX[25]: the CPU has Intel PT */
	uint32_t family, model, stepping;
	int has_leaf14;
	uint32_t leaf14_0[4];  /* eax..edx of 0x14 subleaf 0 */
	uint32_t leaf14_1[4];  /* subleaf 1 (if subleaf 0 eax >= 1) */
	int has_leaf15;
	uint32_t tsc_ctc_den;  /* 0x15 eax */
	uint32_t tsc_ctc_num;  /* 0x15 ebx */
	uint32_t crystal_hz;   /* 0x15 ecx, 0 if not enumerated */
	uint32_t base_mhz;     /* 0x16 eax, 0 if absent */
};

/* cpuid(leaf, subleaf, regs[4]): the real instruction or a test fake. */
typedef void (*jpb_pt_cpuid_fn)(uint32_t leaf, uint32_t subleaf,
			    uint32_t regs[4]);

struct jpb_pt_caps {
	int pmu_type; /* intel_pt/type: attr.type */
	struct jpb_pt_format formats[JPB_PT_MAX_FORMATS];
	size_t nformats;
	struct jpb_pt_cap caps[JPB_PT_MAX_CAPS];
	size_t ncaps;
	uint32_t max_nonturbo_ratio; /* intel_pt/max_nonturbo_ratio, 0 if absent */
	uint32_t tsc_art_num, tsc_art_den; /* intel_pt/tsc_art_ratio "N:D" */
	int paranoid;           /* kernel.perf_event_paranoid */
	uint64_t mlock_kb;      /* kernel.perf_event_mlock_kb, 0 if unreadable */
	int cap_perfmon;        /* CAP_PERFMON or CAP_SYS_ADMIN effective */
	int cap_ipc_lock;       /* AUX pages beyond mlock_kb allowed */
	int nr_cpus;            /* highest online CPU + 1 (cpu/online) */
	int ncpus_online;       /* online CPUs */
	uint64_t memlock_kb;    /* RLIMIT_MEMLOCK soft limit, KiB */
	struct jpb_pt_cpuid cpuid;
};

/* Probe PT below ROOT ("/" normally; tests pass a fake tree holding
 * sys/bus/event_source/devices/intel_pt/..., proc/sys/kernel/
 * perf_event_paranoid, proc/self/status and sys/devices/system/cpu/online).
 * Returns 0 when PT can be used for user-space tracing, else a negative
 * jpb_pt_error with a one-line reason in WHY naming the cause and what still
 * works (--no-pt, decoding elsewhere).  CAPS is filled as far as probed
 * (pmu_type 0 when there is no PMU).  CPUID is read only when ROOT is "/". */
int jpb_pt_probe(const char *sysfs_root, struct jpb_pt_caps *caps, char *why,
	     size_t size);

/* The sysfs part of the probe alone, with CPUID from FN (NULL: none). */
int jpb_pt_probe_with(const char *root, jpb_pt_cpuid_fn fn, struct jpb_pt_caps *caps,
		  char *why, size_t size);

/* Fill CPUID facts through FN, honouring the Intel/max-leaf guards. */
void jpb_pt_cpuid_read(jpb_pt_cpuid_fn fn, struct jpb_pt_cpuid *out);

/* The host's cpuid instruction (x86 only; zeros elsewhere). */
void jpb_pt_cpuid_native(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

const struct jpb_pt_format *jpb_pt_caps_format(const struct jpb_pt_caps *caps,
				       const char *name);
/* caps/<name> value; returns 0 if present, -1 if not. */
int jpb_pt_caps_get(const struct jpb_pt_caps *caps, const char *name, uint32_t *v);

/* Parse one format file's text ("config:14-17\n") into F. */
int jpb_pt_format_parse(const char *name, const char *text, struct jpb_pt_format *f);

/* ------------------------------------------------------------------ */
/* Configuration.                                                     */

enum jpb_pt_mode {
	JPB_PT_MODE_PER_CPU = 0,    /* default: per-CPU rings, inherit on */
	JPB_PT_MODE_PER_THREAD = 1, /* one ring per thread, no inherit */
};

struct jpb_pt_config {
	enum jpb_pt_mode mode;
	int branch;         /* branch tracing (TNT/TIP); on by default */
	int tsc;            /* TSC packets; on */
	int mtc;            /* MTC packets: 1 on, 0 off, -1 (default) if caps/mtc */
	unsigned mtc_period;  /* encoded 0..15, freq = CTC >> period; 3 */
	int cyc;            /* CYC packets; off (bandwidth) */
	unsigned cyc_thresh;  /* encoded 0..15 */
	int noretcomp;      /* disable return compression; off */
	int psb_period;     /* encoded 0..15: a PSB every 2^(n+11) bytes;
			     * -1 (default): 3 if caps allow, else PMU default */
	int exclude_kernel; /* user space only; on */
	int context_switch; /* perf SWITCH records as a cross-check; on */
	uint64_t aux_size;  /* AUX bytes per ring, power of 2; 4 MiB */
	uint64_t data_size; /* data area bytes (w/o header page), pow2; 64 KiB*/
	uint64_t snapshot_size; /* 0: full trace; else bytes kept per ring */
	int no_aux;         /* sideband only, no AUX area: lets tests drive
			     * the recorder with a software event */
};

void jpb_pt_config_default(struct jpb_pt_config *cfg);

/* Command-line settings of the PT recorder, for `jpbpf record` to append
 * to its getopt table (has_arg as getopt's: 0 none, 1 required,
 * 2 optional) and pass to jpb_pt_config_option().  NULL-terminated. */
struct jpb_pt_option {
	const char *name; /* long option, without "--" */
	int has_arg;
	const char *help; /* one line, for the usage text */
};
extern const struct jpb_pt_option jpb_pt_options[];

/* Apply option NAME (from jpb_pt_options) with ARG (NULL if none) to CFG.
 * Sizes take K/M/G suffixes (powers of 1024).  jpb_pt_err_invalid with a
 * one-line reason for a bad value. */
int jpb_pt_config_option(struct jpb_pt_config *cfg, const char *name, const char *arg,
		     char *why, size_t size);

/* "4M", "512K", "65536" -> bytes.  0 or jpb_pt_err_invalid. */
int jpb_pt_parse_size(const char *s, uint64_t *out);

/* attr.config for CFG from CAPS' format bit positions.  Fails with
 * jpb_pt_err_unsupported and a reason when CFG asks for something the PMU
 * lacks (no such format file, period not in caps/mtc_periods...). */
int jpb_pt_config_word(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		   uint64_t *config, char *why, size_t size);

/* Put VAL into format field NAME of WORDS (config, config1..3).  Fails
 * with jpb_pt_err_unsupported when the PMU has no such field, jpb_pt_err_invalid
 * when VAL does not fit it. */
int jpb_pt_format_set(const struct jpb_pt_caps *caps, const char *name, uint64_t val,
		  uint64_t words[4]);

/* Check sizes (powers of two, snapshot <= aux), kernel tracing against
 * perf_event_paranoid, and the locked-memory budget of NRINGS rings
 * (perf_event_mlock_kb x CPUs + RLIMIT_MEMLOCK unless CAP_IPC_LOCK). */
int jpb_pt_config_check(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		    unsigned nrings, char *why, size_t size);

/* meta.json "pt" object: caps, formats, cpuid, config and config word,
 * mode, sizes.  New reference; NULL on allocation failure. */
json_t *jpb_pt_meta_json(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		     uint64_t config);

/* ------------------------------------------------------------------ */
/* Ring arithmetic (pt_aux.c, pt_snapshot.c): pure, no syscalls.       */

/* Up to two pieces of a ring, oldest first. */
struct jpb_pt_span {
	uint64_t off; /* offset in the ring, < size */
	uint64_t len;
};

/* The spans holding [tail, head) of a ring of SIZE (a power of two)
 * bytes; tail/head are the free-running perf pointers.  Returns the
 * number of spans (0..2) or jpb_pt_err_overflow when head - tail > size. */
int jpb_pt_ring_spans(uint64_t size, uint64_t tail, uint64_t head,
		  struct jpb_pt_span sp[2]);

/* Copy [tail, head) out of BASE into DST (which holds head - tail
 * bytes).  Returns bytes copied or a negative jpb_pt_error. */
int64_t jpb_pt_ring_copy(const uint8_t *base, uint64_t size, uint64_t tail,
		     uint64_t head, uint8_t *dst);

/* Kernel PERF_AUX_FLAG_* values as documented in uapi perf_event.h. */
#define JPB_PT_AUX_TRUNCATED 0x01u /* AUX filled: trace stopped, data lost */
#define JPB_PT_AUX_OVERWRITE 0x02u /* snapshot mode: data was overwritten */
#define JPB_PT_AUX_PARTIAL 0x04u   /* record holds gaps (PMU-specific) */
#define JPB_PT_AUX_COLLISION 0x08u /* sample collided with another */

/* Loss and volume counters of one ring (or all, summed). */
struct jpb_pt_stats {
	uint64_t bytes;        /* AUX bytes written to the bundle */
	uint64_t aux_records;  /* PERF_RECORD_AUX seen */
	uint64_t truncated;    /* ... with TRUNCATED */
	uint64_t partial;
	uint64_t collision;
	uint64_t overwrite;
	uint64_t lost;         /* PERF_RECORD_LOST: sideband records lost */
	uint64_t lost_samples;
	uint64_t aux_gap_bytes; /* AUX bytes the kernel reported but that were
				 * overwritten before we copied them */
	uint64_t snapshots;
};

/* Account one PERF_RECORD_AUX (flags as the kernel gave them). */
void jpb_pt_stats_aux(struct jpb_pt_stats *st, uint64_t size, uint64_t flags);
void jpb_pt_stats_add(struct jpb_pt_stats *sum, const struct jpb_pt_stats *one);

/* Snapshot (overwrite) mode: the kernel moves only aux_head, which for
 * Intel PT is an offset inside the ring (not free-running), and nothing
 * consumes.  OLD is the head at the previous snapshot (0 at first).  If
 * the ring has wrapped, all SIZE bytes ending at HEAD are valid; if not,
 * only those written since OLD ([OLD, HEAD), itself possibly crossing the
 * end once).  Of those, the spans of the newest min(WANT, valid) bytes,
 * oldest first.  Returns the number of spans (0..2). */
int jpb_pt_snapshot_spans(uint64_t size, uint64_t head, uint64_t old,
		      int wrapped, uint64_t want, struct jpb_pt_span sp[2]);

/* Has a zero-filled ring been overwritten past its end?  Perf's first-wrap
 * test, made exact: the PMU writes from offset 0 on, so until it wraps the
 * bytes from HEAD to the end are still zero.  Checks the last (at most)
 * 4 KiB of the ring that lie at or after HEAD.  The caller keeps the
 * answer sticky: once wrapped, always wrapped.  (A false "not wrapped"
 * needs 4 KiB of trace zeros, which PT's PAD packet 0x00 could only give
 * on an idle ring; a false "wrapped" cannot happen.) */
int jpb_pt_snapshot_wrapped(const uint8_t *base, uint64_t size, uint64_t head);

/* Offset of the first PSB packet at or after START within a linear buffer
 * of LEN bytes, or -1.  A decoder can start there without loss of sync. */
int64_t jpb_pt_find_psb(const uint8_t *buf, uint64_t len, uint64_t start);

/* Sideband: one record of the perf data area.  jpbpf opens its events
 * with sample_id_all and sample_type TID | TIME | CPU, so every non-sample
 * record ends with {u32 pid, tid; u64 time; u32 cpu, res}. */
#define JPB_PT_SB_ID_SIZE 24u

struct jpb_pt_sb {
	uint32_t type;  /* PERF_RECORD_* */
	uint16_t misc;  /* PERF_RECORD_MISC_* (SWITCH_OUT...) */
	uint32_t pid, tid, cpu; /* from sample_id */
	uint64_t time;          /* sample_id time (the attr's clockid) */
	uint64_t aux_offset, aux_size, aux_flags; /* PERF_RECORD_AUX */
	uint32_t itrace_pid, itrace_tid;          /* PERF_RECORD_ITRACE_START */
	uint64_t lost_id, lost;  /* PERF_RECORD_LOST / LOST_SAMPLES */
	uint32_t np_pid, np_tid; /* SWITCH_CPU_WIDE: next/prev task */
};

/* Parse one whole record (header included) of LEN bytes.  Types jpbpf
 * does not use parse with only type/misc set.  jpb_pt_err_overflow when the
 * record is shorter than its type's layout. */
int jpb_pt_sb_parse(const uint8_t *rec, size_t len, struct jpb_pt_sb *sb);

/* The next record of a data ring of SIZE (power of two) bytes between
 * *TAIL and HEAD (free-running): copied to TMP when it wraps, parsed into
 * SB, *TAIL advanced.  Returns 1 for a record, 0 when the ring is empty,
 * jpb_pt_err_overflow for a header that cannot be right (size 0, beyond
 * head, larger than TMPSIZE): the caller then skips to HEAD and counts
 * the skipped bytes as lost. */
int jpb_pt_sb_next(const uint8_t *base, uint64_t size, uint64_t *tail,
	       uint64_t head, uint8_t *tmp, size_t tmpsize, struct jpb_pt_sb *sb);

/* ------------------------------------------------------------------ */
/* One mapped ring (pt_drain.c): the seam between the system calls of  */
/* pt_record.c and the logic that moves data into the bundle, which    */
/* tests drive with a fake user page, data area and AUX area.          */

struct jpb_writer;

struct jpb_pt_ring_view {
	void *user_page;    /* struct perf_event_mmap_page */
	uint8_t *data;      /* data area */
	uint64_t data_size;
	uint8_t *aux;       /* AUX area */
	uint64_t aux_size;
	int overwrite;      /* snapshot mode: AUX mapped read-only */
	uint32_t cpu;       /* JPB_PT_NO_CPU for a per-thread ring */
	uint32_t tid;       /* 0 for a per-CPU ring */
	uint64_t config;
	struct jpb_writer *w; /* the ring's stream */
	struct jpb_buf scratch; /* record encoding; jpb_buf_fini when done */
	/* snapshot state */
	uint64_t snap_old;
	int wrapped;
	uint32_t snapshots;
	struct jpb_pt_stats st;
	char errmsg[256];
};

/* Write the ring's pt_ring record (perf clock of its user page). */
int jpb_pt_view_begin(struct jpb_pt_ring_view *v);

/* Move everything the kernel published: sideband records from the data
 * area (and data_tail forward), then, in full-trace mode, AUX bytes
 * [aux_tail, aux_head) as pt_aux_data chunks (and aux_tail forward).
 * Every loss (TRUNCATED/PARTIAL/COLLISION AUX records, PERF_RECORD_LOST,
 * unparsable sideband) also becomes a JPB_REC_LOSS record. */
int jpb_pt_view_drain(struct jpb_pt_ring_view *v);

/* Snapshot mode, with the ring's events disabled (so aux_head is
 * current): save the newest WANT bytes written since the last snapshot
 * (or the whole ring once it has wrapped) as pt_aux_data records. */
int jpb_pt_view_snapshot(struct jpb_pt_ring_view *v, uint64_t want);

/* ------------------------------------------------------------------ */
/* The recorder.                                                      */

struct jpb_pt_recorder;

struct jpb_pt_target {
	pid_t pid;          /* the JVM (tgid) */
	const char *stream_prefix; /* "pt" */
};

/* Open PT for every thread of TARGET->pid (from /proc/PID/task) in
 * CFG->mode, mmap each ring's data and AUX areas and create its stream in
 * BUNDLE ("pt/cpuN" per CPU, "pt/tidN" per thread).  The events are
 * enabled on return; data goes to the bundle only from
 * jpb_pt_recorder_drain()/_snapshot()/_stop().  On failure *out is NULL and
 * WHY says why (the streams of rings opened before the failure remain). */
int jpb_pt_recorder_open(struct jpb_pt_recorder **out, struct jpb_bundle *bundle,
		     const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		     const struct jpb_pt_target *target, char *why, size_t size);

/* A thread the BPF fork events found.  Per-CPU mode: a thread created by
 * a traced thread inherited its events at clone(), so this only notes
 * TID (threads that existed before are opened by jpb_pt_recorder_open, which
 * rescans /proc/PID/task).  Per-thread mode: opens TID's event and ring
 * (its first instructions, before this call, are not traced). */
int jpb_pt_recorder_add_thread(struct jpb_pt_recorder *r, pid_t tid);

/* A thread exited: per-thread full-trace mode drains and closes its
 * ring (jpb_pt_recorder_drain does the same on the fd's POLLHUP); snapshot
 * mode keeps it for the next snapshot; per-CPU mode has nothing to do. */
int jpb_pt_recorder_thread_exit(struct jpb_pt_recorder *r, pid_t tid);

/* File descriptors to poll() for POLLIN: AUX watermark and data-area
 * wake-ups of every ring.  Today this is one epoll descriptor holding all
 * event fds (per-CPU mode has threads x CPUs of them); when it is
 * readable, call jpb_pt_recorder_drain().  Fills up to MAX and returns how
 * many there are in total. */
size_t jpb_pt_recorder_fds(const struct jpb_pt_recorder *r, int *fds, size_t max);

/* Copy whatever is ready from every ring into the bundle: sideband
 * (ITRACE_START, AUX, LOST, SWITCH) and, in full-trace mode, AUX data.
 * Acts on a pending snapshot trigger; retires the fds of exited threads
 * (per-thread mode: drains and closes their rings).  Never blocks. */
int jpb_pt_recorder_drain(struct jpb_pt_recorder *r);

/* Take a snapshot now (snapshot mode; a no-op in full-trace mode):
 * briefly disable the events, save the newest snapshot_size bytes of
 * every ring, re-enable. */
int jpb_pt_recorder_snapshot(struct jpb_pt_recorder *r);

/* Ask for a snapshot at the next drain.  Async-signal-safe (SIGUSR2
 * handlers) and callable from the BPF event thread (a probe-hit trigger). */
void jpb_pt_recorder_trigger(struct jpb_pt_recorder *r);

void jpb_pt_recorder_stats(const struct jpb_pt_recorder *r, struct jpb_pt_stats *st);

/* The last error's context. */
const char *jpb_pt_recorder_errmsg(const struct jpb_pt_recorder *r);

/* End of recording (SIGINT/SIGTERM, --duration, target exit): disable
 * the events and drain what is left, with a final snapshot in snapshot
 * mode.  Idempotent; the streams stay open so stats and meta are final. */
int jpb_pt_recorder_stop(struct jpb_pt_recorder *r);

/* meta.json "pt" for this recording: jpb_pt_meta_json() of its caps and
 * configuration plus "stats" (jpb_pt_stats) and "threads_opened".  Call after
 * jpb_pt_recorder_stop() for final numbers.  New reference or NULL. */
json_t *jpb_pt_recorder_meta(const struct jpb_pt_recorder *r);

/* jpb_pt_recorder_stop() if not done, then close the streams, unmap, close
 * the fds and free R.  Returns the first error seen over the recorder's
 * life (a full disk included). */
int jpb_pt_recorder_close(struct jpb_pt_recorder *r);

#ifdef __cplusplus
}
#endif
#endif /* JPBPF_RECORD_PT_H */
