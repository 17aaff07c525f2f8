/* SPDX-License-Identifier: MIT */
/*
 * Internals of the jpbpf JVMTI agent (docs/AGENT.md).
 *
 * JVMTI callbacks carry no user pointer, so the one session lives in a
 * process-wide `struct agent` reached through agent_get().  Callbacks
 * never write to disk: they encode a record and hand it to the writer
 * thread (aq_*), which owns the bundle's stream writers.
 */
#ifndef JPBPF_AGENT_H
#define JPBPF_AGENT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <jvmti.h>

#include "bundle.h"
#include "class_vmmeta.h"
#include "hashset.h"
#include "nmethod_level.h"
#include "recycle.h"
#include "records.h"
#include "records_jvm.h"
#include "records_truth.h"

/* This thread's CPU time in ns (0 if unreadable): the agent's cost
 * accounts use CPU, not wall time, since the thread may be descheduled. */
static inline uint64_t agent_thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define AGENT_LOCAL __attribute__((visibility("hidden")))

enum agent_stream { AS_JVM = 0, AS_TRUTH = 1, AS_COUNT };

/* A queued record: this header and its payload are one allocation. */
struct aq_item {
	struct aq_item *next;
	uint16_t type;
	uint8_t stream;
	uint64_t time_ns;
	uint32_t size;
	uint8_t *data; /* the payload, right after this header */
	size_t cap;    /* bytes of the allocation, this header included */
};

/* The writer queue: callbacks append, the writer thread drains. */
struct aq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct aq_item *head, *tail;
	uint64_t queued_bytes;
	struct recycle spare; /* written records' memory, for the next ones */
	uint64_t max_bytes;  /* beyond this, records are dropped and counted */
	uint64_t dropped[AS_COUNT];
	uint64_t dropped_first_ns, dropped_last_ns;
	int stop;     /* drain, then exit */
	int running;
	pthread_t thread;
	struct jpb_bundle *bundle;
	struct jpb_writer *w[AS_COUNT];
	int write_err;
	char errmsg[512];
	char stop_file[4096]; /* polled: the recorder asks us to stop */
	char done_file[4096]; /* written once the streams are closed */
	uint64_t cpu_ns;      /* the writer thread's CPU time, at its end */
	int (*on_stop_request)(void);
};

/* On late attach, the loaded classes whose file no resource gives:
 * rebuilt from JVMTI (no safepoint), retransformed, or all of them
 * retransformed (docs/AGENT.md, "Late attach"). */
enum agent_retransform { RT_NEVER, RT_AUTO, RT_ALWAYS };

struct agent_opts {
	char out[4096];
	int truth;
	int no_classes;
	int no_code;     /* don't copy compiled code bytes */
	int batch_ms;    /* 0: one RetransformClasses call; N: batches near N ms */
	int no_resource; /* on attach, read no resources (for comparisons) */
	int retransform; /* enum agent_retransform: on attach, what is left */
	int max_kb;      /* writer backlog limit */
	uint64_t truth_max;   /* truthmax=: bytecodes in the truth window, 0: all */
	char truth_from[512]; /* truthfrom=Class.method: window trigger, "" none */
	char raw[1024];
};

struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_opts opts;
	int late_attach;
	int debug_nonsafepoints; /* -XX:+DebugNonSafepoints given */
	int coarse_pcmaps;       /* -XX:-DebugNonSafepoints given: every
				  * compiled method's pc map is coarse */
	int stopped;  /* nothing more is recorded */
	int finished; /* streams closed */
	int published; /* g_agent pointed at it: never freed */
	pthread_mutex_t stop_lock;
	struct aq q;
	struct hset *methods;     /* methods.c: ids already described */
	/* methods.c: a lock-free filter in front of METHODS, one id a slot */
	uint64_t methods_seen[4096];
	struct hset *class_names; /* classes.c: names the hook delivered */
	struct class_pending *pending; /* class_pending.c, late attach */
	uint32_t host_pid, nspid;
	int same_pidns; /* host tid == gettid() */
	/* counters for the notes at the end */
	uint64_t n_classes, n_class_fail, n_nmethods, n_blobs;
	uint64_t n_hidden_rebuilt, hidden_ns; /* classes.c, at ClassPrepare */
	/* CPU time in the CompiledMethodLoad callbacks timed (jit.c: the
	 * first and every 8th) and how many they were */
	uint64_t jit_ns, n_jit_timed;
	struct nml_stats nml; /* compile levels found / fallbacks by reason */
	struct cvm_stats cvm; /* class_rebuild.c: tables from HotSpot metadata */
	uint64_t n_retransform_batches, max_pause_ns, total_pause_ns;
	void *truth; /* struct truth state, truth mode only */
};

AGENT_LOCAL struct agent *agent_get(void);
AGENT_LOCAL uint64_t agent_now(void);
AGENT_LOCAL uint32_t agent_gettid(void);

/* queue.c */
AGENT_LOCAL int aq_start(struct aq *q, struct jpb_bundle *b, int truth,
			 char *err, size_t size);
/* A record encoded in place: aq_buf_init leaves room for the queue's
 * header and reserves SIZE more bytes; encode after it (b->len grows), and
 * aq_put_buf queues the record, taking B's memory. */
AGENT_LOCAL int aq_buf_init(struct aq *q, struct jpb_buf *b, size_t size);
AGENT_LOCAL void aq_put_buf(struct aq *q, int stream, uint16_t type,
			    uint64_t time_ns, struct jpb_buf *b);
/* A record that could not be made: counted in the stream's JPB_REC_LOSS. */
AGENT_LOCAL void aq_drop(struct aq *q, int stream, uint64_t time_ns);
AGENT_LOCAL void aq_put_rec(struct aq *q, int stream, uint16_t type,
			    uint64_t time_ns, const void *rec);
AGENT_LOCAL void aq_note(struct aq *q, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
AGENT_LOCAL int aq_finish(struct aq *q);

/* methods.c: a JPB_REC_JVM_METHOD for M, the first time it is used. */
AGENT_LOCAL void methods_note(struct agent *a, jmethodID m);

/* threads.c */
AGENT_LOCAL void threads_record(struct agent *a, JNIEnv *jni, jthread t,
				uint32_t event, int on_thread);
AGENT_LOCAL void threads_record_all(struct agent *a, JNIEnv *jni);

/* jit.c.  GenerateEvents calls back on the calling thread, so a
 * thread-local flag tells replayed methods from ones compiled meanwhile. */
AGENT_LOCAL void jit_set_replaying(int on);
AGENT_LOCAL void JNICALL jit_on_load(jvmtiEnv *e, jmethodID m, jint size,
				     const void *addr, jint map_len,
				     const jvmtiAddrLocationMap *map,
				     const void *compile_info);
AGENT_LOCAL void JNICALL jit_on_unload(jvmtiEnv *e, jmethodID m,
				       const void *addr);
AGENT_LOCAL void JNICALL jit_on_dynamic(jvmtiEnv *e, const char *name,
					const void *addr, jint length);

/* classes.c */
AGENT_LOCAL void JNICALL classes_on_load(jvmtiEnv *e, JNIEnv *jni,
					 jclass redefined, jobject loader,
					 const char *name, jobject pd,
					 jint len, const unsigned char *data,
					 jint *new_len, unsigned char **new_data);
AGENT_LOCAL void JNICALL classes_on_prepare(jvmtiEnv *e, JNIEnv *jni,
					    jthread t, jclass k);
/* Write the class file of a class named NAME (LEN bytes, may be NULL). */
AGENT_LOCAL void classes_put(struct agent *a, uint32_t flags, uint64_t loader,
			     const char *name, size_t len,
			     const uint8_t *data, size_t size);
/* A class that runs without its class file: a jvm_class_missing record
 * and each method's bytecodes. */
AGENT_LOCAL void classes_put_missing(struct agent *a, JNIEnv *jni, jclass k,
				     const char *sig, const char *reason);
AGENT_LOCAL uint64_t classes_loader_id(jvmtiEnv *e, jobject loader);
/* The class name inside "Lname;", or NULL (arrays, primitives). */
AGENT_LOCAL const char *classes_sig_name(const char *sig, size_t *len);

/* class_attach.c: the class files of the classes loaded before a late
 * attach, or at VMInit of those loaded before the hook posted, from their
 * loaders' resources, else rebuilt or retransformed. */
AGENT_LOCAL void classes_attach(struct agent *a, JNIEnv *jni);
/* What class_attach.c does with classes no resource gives: at start-up
 * the agent holds no retransform capability, so always RT_NEVER. */
static inline int agent_rt_mode(const struct agent *a)
{
	return a->late_attach ? a->opts.retransform : RT_NEVER;
}

/* class_resource.c */
enum class_res_rc {
	CR_OK, CR_NOT_TRIED, CR_NO_RESOURCE, CR_EXCEPTION, CR_PARSE, CR_NAME,
	CR_VERSION, CR_METHODS, CR_BYTECODE, CR_JVMTI, CR_COUNT
};
AGENT_LOCAL extern const char *class_res_strs[CR_COUNT];
struct class_jimage;
struct class_res {
	JNIEnv *jni; /* NULL: no resources (no JNI, or noresource) */
	jmethodID get_res, read_all, close;
	struct class_jimage *jimage; /* the runtime image, or NULL */
};
/* JE, if not NULL, opens the runtime image for boot-loader classes. */
AGENT_LOCAL int class_res_init(struct class_res *r, JNIEnv *jni,
			       jvmtiEnv *je);
AGENT_LOCAL void class_res_fini(struct class_res *r);
/* The resource "/NAME.class" of K's loader into *DATA (malloc'd). */
AGENT_LOCAL int class_res_read(struct class_res *r, jclass k,
			       const char *name, size_t len, uint8_t **data,
			       size_t *size);
/* The same for a boot-loader class, from the runtime image in C: no
 * Java code runs (the interpreter reading the image costs ~0.2 ms a
 * class at start-up). */
AGENT_LOCAL int class_res_read_jimage(struct class_res *r, const char *name,
				      size_t len, uint8_t **data,
				      size_t *size);
/* CR_OK if DATA is the class file K was loaded from, else why not.
 * Without METHODS (a class not prepared yet has no method list) only the
 * name and version are compared. */
AGENT_LOCAL int class_res_match(jvmtiEnv *e, jclass k, const char *name,
				size_t len, const uint8_t *data, size_t size,
				int methods);

/* class_rebuild.c: a class file made from JVMTI's view of prepared class
 * K (NAME, LEN bytes), exception tables, max_stack and BootstrapMethods
 * from HotSpot's metadata (JPB_CLASS_F_REBUILT), counted in ST (may be
 * NULL): RB_OK and *DATA (malloc'd), else why not. */
enum class_rebuild_rc {
	RB_OK, RB_NOMEM, RB_JVMTI, RB_CPOOL, RB_BOOTSTRAP, RB_LIMIT, RB_PARSE,
	RB_COUNT
};
AGENT_LOCAL extern const char *class_rebuild_strs[RB_COUNT];
AGENT_LOCAL int class_rebuild(jvmtiEnv *e, JNIEnv *jni, jclass k,
			      const char *name, size_t len,
			      struct cvm_stats *st, uint8_t **data,
			      size_t *size);
/* Rebuild K (signature SIG) and write it; if that fails, a
 * jvm_class_missing record saying WHY there is no class file and why it
 * was not rebuilt.  Returns the enum class_rebuild_rc. */
AGENT_LOCAL int class_rebuild_put(struct agent *a, JNIEnv *jni, jclass k,
				  const char *sig, uint64_t loader,
				  const char *why);

/* class_pending.c: classes loaded but not prepared at attach.  Their
 * resource is read at attach and checked when they are prepared; those
 * without one are rebuilt then (retransform=never). */
struct class_pending;
AGENT_LOCAL struct class_pending *class_pending_new(void);
/* Before reading K's resource: 0 if K is registered, -1 if it is
 * prepared already (or no memory): check it at once. */
AGENT_LOCAL int class_pending_begin(struct agent *a, jclass k,
				    const char *name, size_t len,
				    uint64_t loader);
/* After reading it (DATA NULL: failed; then REBUILD keeps the entry, to
 * rebuild K when prepared).  Takes DATA.  1 if kept until ClassPrepare,
 * 0 if the caller must deal with K now (DATA not taken). */
AGENT_LOCAL int class_pending_end(struct agent *a, const char *name,
				  size_t len, uint64_t loader, uint8_t *data,
				  size_t size, int rebuild);
/* At ClassPrepare of a class nothing has recorded: 1 if the catch-up of
 * the loaded classes (classes_attach) is not over, K is then kept for
 * its end; 0: deal with K now. */
AGENT_LOCAL int class_pending_defer(struct agent *a, JNIEnv *jni, jclass k);
/* The catch-up is over: the classes deferred meanwhile (global refs,
 * *N of them, malloc'd array; the caller deletes them). */
AGENT_LOCAL jobject *class_pending_catchup_end(struct agent *a, size_t *n);
/* At the end: the classes still pending were never prepared and never
 * ran; their resources are written, checked by name and version only
 * (no method list without preparation); a note counts them, and those
 * with no resource, not written. */
AGENT_LOCAL void class_pending_flush(struct agent *a);
/* At ClassPrepare: 1 if K was pending and is now dealt with. */
AGENT_LOCAL int class_pending_prepared(struct agent *a, JNIEnv *jni,
				       jclass k, const char *sig,
				       const char *name, size_t len);

/* interp.c */
AGENT_LOCAL void interp_record(struct agent *a);

/* truth.c */
AGENT_LOCAL int truth_parse_opt(struct agent_opts *o, const char *k,
				const char *v);
AGENT_LOCAL int truth_init(struct agent *a);
AGENT_LOCAL void truth_callbacks(struct agent *a, jvmtiEventCallbacks *cb);
/* At VMInit: record from now, or arm the truthfrom= trigger. */
AGENT_LOCAL int truth_start(struct agent *a);
AGENT_LOCAL void truth_stop_events(struct agent *a);
AGENT_LOCAL void truth_thread_end(struct agent *a);
AGENT_LOCAL void truth_flush_all(struct agent *a);

/* Log a one-line message on the target's stderr. */
AGENT_LOCAL void agent_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* JPBPF_AGENT_H */
