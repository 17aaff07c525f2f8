// SPDX-License-Identifier: MIT
/*
 * Ground-truth mode: every bytecode each thread executes (SingleStep),
 * plus method entry/exit and exceptions, into stream "truth" in the
 * format of records_truth.h.  Events go into a per-thread preallocated
 * buffer of packed 8-byte events; a full buffer becomes one
 * JPB_REC_TRUTH_EVENTS record handed to the writer thread.
 *
 * The window: events are recorded from VMInit, or from the first entry
 * of the truthfrom= method (a breakpoint, so the JVM runs at full speed
 * until then), to the end, or until truthmax= bytecodes, when the events
 * are switched off again.  Each thread's sequence is bracketed by
 * truth_window records: the start lists the frames already on its stack.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define TT_EVENTS 8192u /* per record: 64 KiB */
#define TT_MAX_FRAMES 4096 /* caller frames listed in a window start */
#define TT_MAX_BREAKPOINTS 64

struct tmethod {
	jmethodID m;
	uint32_t id;
	jint code_len;
	unsigned char *code; /* jvmti-allocated, or NULL */
};

struct tthread {
	struct tthread *next;
	pthread_mutex_t lock; /* this thread vs. the final flush */
	uint32_t nstid, tid;
	uint64_t seq;
	uint32_t n;
	int dead;
	int started; /* its window start is written */
	int closed;  /* its window stop is written: nothing more */
	const struct tmethod *last; /* one-entry cache */
	uint8_t buf[TT_EVENTS * JPB_TRUTH_EVENT_SIZE];
};

struct truth {
	pthread_mutex_t lock; /* methods and the thread list */
	struct tmethod *slots;
	size_t cap, used;
	uint32_t next_id;
	struct tthread *threads;
	/* the window; open and closed are read without the lock */
	int open, closed;
	uint32_t start_why;
	uint64_t max;       /* truthmax=, 0: none */
	uint64_t bytecodes; /* recorded so far, counted when max is set */
	char from_class[512], from_name[256]; /* "La/B;", "m"; "" if no trigger */
	jmethodID bps[TT_MAX_BREAKPOINTS];
	int nbps;
	jvmtiEventClassPrepare chained_prepare;
};

static __thread struct tthread *tls_thread;

int truth_init(struct agent *a)
{
	struct truth *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	t->cap = 8192;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return -1;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->next_id = 1;
	t->max = a->opts.truth_max;
	const char *f = a->opts.truth_from, *dot = strrchr(f, '.');
	if (*f && dot) {
		snprintf(t->from_class, sizeof(t->from_class), "L%.*s;",
			 (int)(dot - f), f);
		for (char *c = t->from_class; *c; c++)
			if (*c == '.')
				*c = '/';
		snprintf(t->from_name, sizeof(t->from_name), "%s", dot + 1);
	}
	a->truth = t;
	return 0;
}

/* truthmax=N and truthfrom=Class.method; 1 if K is one of them and V is
 * valid, 0 if K is not ours, -1 if V is malformed. */
int truth_parse_opt(struct agent_opts *o, const char *k, const char *v)
{
	if (!strcmp(k, "truthmax")) {
		char *end;
		if (!v || *v < '0' || *v > '9')
			return -1;
		unsigned long long n = strtoull(v, &end, 10);
		if (*end || n == 0 || n > (1ull << 40))
			return -1;
		o->truth_max = n;
		return 1;
	}
	if (!strcmp(k, "truthfrom")) {
		const char *dot = v ? strrchr(v, '.') : NULL;
		if (!dot || dot == v || !dot[1] || strlen(v) >= sizeof(o->truth_from) ||
		    strpbrk(v, "/;()") || strstr(v, ".."))
			return -1;
		snprintf(o->truth_from, sizeof(o->truth_from), "%s", v);
		return 1;
	}
	return 0;
}

static size_t hash_slot(jmethodID m, size_t cap)
{
	return (size_t)(((uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull) >> 20) &
	       (cap - 1);
}

static int grow(struct truth *t)
{
	size_t cap = t->cap * 2;
	struct tmethod *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].m)
			continue;
		size_t j = hash_slot(t->slots[i].m, cap);
		while (s[j].m)
			j = (j + 1) & (cap - 1);
		s[j] = t->slots[i];
	}
	/* Old slots stay reachable through threads' caches: leak them
	 * rather than free under a reader. */
	t->slots = s;
	t->cap = cap;
	return 0;
}

static void put_method(struct agent *a, const struct tmethod *tm)
{
	jvmtiEnv *e = a->jvmti;
	char *name = NULL, *sig = NULL, *csig = NULL;
	jclass cls = NULL;
	jint mods = 0;
	if ((*e)->GetMethodName(e, tm->m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		name = sig = NULL;
	if ((*e)->GetMethodDeclaringClass(e, tm->m, &cls) != JVMTI_ERROR_NONE ||
	    (*e)->GetClassSignature(e, cls, &csig, NULL) != JVMTI_ERROR_NONE)
		csig = NULL;
	if ((*e)->GetMethodModifiers(e, tm->m, &mods) != JVMTI_ERROR_NONE)
		mods = 0;
	struct jpb_rec_truth_method r = {
		.method_id = tm->id,
		.access_flags = (uint32_t)mods,
		.class_sig = jpb_str_c(csig),
		.name = jpb_str_c(name),
		.signature = jpb_str_c(sig),
		.bytecode = { tm->code, tm->code ? (uint32_t)tm->code_len : 0 },
	};
	aq_put_rec(&a->q, AS_TRUTH, JPB_REC_TRUTH_METHOD, agent_now(), &r);
	if (name)
		(*e)->Deallocate(e, (unsigned char *)name);
	if (sig)
		(*e)->Deallocate(e, (unsigned char *)sig);
	if (csig)
		(*e)->Deallocate(e, (unsigned char *)csig);
}

/* The dense id of M, describing M in the stream the first time. */
static const struct tmethod *lookup(struct agent *a, jmethodID m)
{
	struct truth *t = a->truth;
	pthread_mutex_lock(&t->lock);
	if (t->used * 2 >= t->cap && grow(t) != 0) {
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	size_t i = hash_slot(m, t->cap);
	while (t->slots[i].m && t->slots[i].m != m)
		i = (i + 1) & (t->cap - 1);
	struct tmethod *tm = &t->slots[i];
	if (!tm->m) {
		jvmtiEnv *e = a->jvmti;
		tm->m = m;
		tm->id = t->next_id++;
		if ((*e)->GetBytecodes(e, m, &tm->code_len, &tm->code) !=
		    JVMTI_ERROR_NONE) {
			tm->code = NULL;
			tm->code_len = 0;
		}
		t->used++;
		put_method(a, tm);
	}
	pthread_mutex_unlock(&t->lock);
	return tm;
}

static void flush_locked(struct agent *a, struct tthread *th)
{
	if (!th->n)
		return;
	struct jpb_rec_truth_events r = {
		th->tid, th->nstid, th->seq,
		{ th->buf, th->n * JPB_TRUTH_EVENT_SIZE }
	};
	aq_put_rec(&a->q, AS_TRUTH, JPB_REC_TRUTH_EVENTS, agent_now(), &r);
	th->seq += th->n;
	th->n = 0;
}

static struct tthread *this_thread(struct agent *a)
{
	struct tthread *th = tls_thread;
	if (th)
		return th;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	pthread_mutex_init(&th->lock, NULL);
	th->nstid = agent_gettid();
	th->tid = a->same_pidns ? th->nstid : 0;
	struct truth *t = a->truth;
	pthread_mutex_lock(&t->lock);
	th->next = t->threads;
	t->threads = th;
	pthread_mutex_unlock(&t->lock);
	tls_thread = th;
	return th;
}

static int window_closed(const struct truth *t)
{
	return __atomic_load_n(&t->closed, __ATOMIC_ACQUIRE);
}

/* The caller frames under the current one (depth 1 on), innermost first,
 * packed into BUF (TT_MAX_FRAMES of them at most, *LISTED); returns how
 * many the thread has (0 if the stack cannot be read). */
static uint32_t caller_frames(struct agent *a, jvmtiFrameInfo *fr, uint8_t *buf,
			      uint32_t *listed)
{
	jvmtiEnv *e = a->jvmti;
	jint n = 0, total = 0;
	*listed = 0;
	if ((*e)->GetStackTrace(e, NULL, 1, TT_MAX_FRAMES, fr, &n) !=
	    JVMTI_ERROR_NONE)
		return 0;
	total = n;
	if (n == TT_MAX_FRAMES && (*e)->GetFrameCount(e, NULL, &total) ==
					  JVMTI_ERROR_NONE)
		total = total > 0 ? total - 1 : 0;
	for (jint i = 0; i < n; i++) {
		const struct tmethod *tm = lookup(a, fr[i].method);
		if (!tm)
			break;
		struct jpb_truth_frame f = {
			tm->id, fr[i].location < 0 ? JPB_TRUTH_NO_BCI
						   : (uint32_t)fr[i].location
		};
		jpb_truth_frame_put(buf + *listed * JPB_TRUTH_FRAME_SIZE, &f);
		(*listed)++;
	}
	return (uint32_t)total;
}

static void put_window(struct agent *a, struct tthread *th, uint32_t kind,
		       uint32_t why, uint32_t depth, const uint8_t *frames,
		       uint32_t nframes)
{
	struct jpb_rec_truth_window r = {
		th->tid, th->nstid, kind, why, th->seq + th->n, depth,
		{ frames, nframes * JPB_TRUTH_FRAME_SIZE },
	};
	aq_put_rec(&a->q, AS_TRUTH, JPB_REC_TRUTH_WINDOW, agent_now(), &r);
}

/* The thread's first event: say what is on its stack.  Before taking the
 * thread's lock, because lookup() takes the table's. */
static void start_thread_window(struct agent *a, struct tthread *th)
{
	struct truth *t = a->truth;
	jvmtiFrameInfo *fr = malloc(TT_MAX_FRAMES * sizeof(*fr));
	uint8_t *buf = malloc(TT_MAX_FRAMES * JPB_TRUTH_FRAME_SIZE);
	uint32_t listed = 0, depth = 0;
	if (fr && buf)
		depth = caller_frames(a, fr, buf, &listed);
	pthread_mutex_lock(&th->lock);
	if (!th->started && !th->closed && !window_closed(t)) {
		put_window(a, th, JPB_TRUTH_WINDOW_START, t->start_why, depth,
			   buf, listed);
		th->started = 1;
	}
	pthread_mutex_unlock(&th->lock);
	free(fr);
	free(buf);
}

/* With the thread's lock held: flush and end its sequence. */
static void stop_thread_locked(struct agent *a, struct tthread *th, uint32_t why)
{
	flush_locked(a, th);
	if (th->started && !th->closed)
		put_window(a, th, JPB_TRUTH_WINDOW_STOP, why, 0, NULL, 0);
	th->closed = 1;
}

static const jvmtiEvent step_events[] = {
	JVMTI_EVENT_SINGLE_STEP,
	JVMTI_EVENT_METHOD_ENTRY,
	JVMTI_EVENT_METHOD_EXIT,
	JVMTI_EVENT_EXCEPTION,
	JVMTI_EVENT_EXCEPTION_CATCH,
};

static int set_step_events(struct agent *a, jvmtiEventMode mode)
{
	jvmtiEnv *e = a->jvmti;
	int rc = 0;
	for (size_t i = 0; i < sizeof(step_events) / sizeof(step_events[0]); i++)
		if ((*e)->SetEventNotificationMode(e, mode, step_events[i], NULL) !=
		    JVMTI_ERROR_NONE)
			rc = -1;
	return rc;
}

/* truthmax= reached: no thread records anything more, and the JVM leaves
 * interpreter-only mode so the program runs on at full speed. */
static void close_window(struct agent *a, uint32_t why)
{
	struct truth *t = a->truth;
	int was = 0;
	if (!__atomic_compare_exchange_n(&t->closed, &was, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (set_step_events(a, JVMTI_DISABLE) != 0)
		aq_note(&a->q, JPB_NOTE_WARN,
			"truth: cannot disable single-stepping after the window");
	pthread_mutex_lock(&t->lock);
	for (struct tthread *th = t->threads; th; th = th->next) {
		pthread_mutex_lock(&th->lock);
		stop_thread_locked(a, th, why);
		pthread_mutex_unlock(&th->lock);
	}
	pthread_mutex_unlock(&t->lock);
	aq_note(&a->q, JPB_NOTE_INFO, "truth: window closed after %llu bytecodes",
		(unsigned long long)t->max);
}

static void emit(jmethodID m, jlocation loc, uint8_t kind)
{
	struct agent *a = agent_get();
	if (!a || a->stopped || !a->truth)
		return;
	struct truth *t = a->truth;
	if (!__atomic_load_n(&t->open, __ATOMIC_ACQUIRE) || window_closed(t))
		return;
	struct tthread *th = this_thread(a);
	if (!th)
		return;
	if (!th->started)
		start_thread_window(a, th);
	const struct tmethod *tm = th->last;
	if (!tm || tm->m != m) {
		tm = lookup(a, m);
		if (!tm)
			return;
		th->last = tm;
	}
	struct jpb_truth_event ev = { tm->id, (uint16_t)(loc < 0 ? 0 : loc), 0,
				      kind };
	if (kind == JPB_TRUTH_BYTECODE && tm->code && loc >= 0 &&
	    loc < tm->code_len)
		ev.opcode = tm->code[loc];
	int last = 0;
	if (kind == JPB_TRUTH_BYTECODE && t->max) {
		uint64_t k = __atomic_add_fetch(&t->bytecodes, 1, __ATOMIC_ACQ_REL);
		if (k > t->max)
			return;
		last = k == t->max;
	}
	pthread_mutex_lock(&th->lock);
	if (!th->dead && !th->closed && th->started) {
		jpb_truth_event_put(th->buf + th->n * JPB_TRUTH_EVENT_SIZE, &ev);
		if (++th->n == TT_EVENTS)
			flush_locked(a, th);
	}
	pthread_mutex_unlock(&th->lock);
	if (last)
		close_window(a, JPB_TRUTH_WHY_LIMIT);
}

static void JNICALL on_step(jvmtiEnv *e, JNIEnv *j, jthread t, jmethodID m,
			    jlocation loc)
{
	(void)e;
	(void)j;
	(void)t;
	emit(m, loc, JPB_TRUTH_BYTECODE);
}

static void JNICALL on_entry(jvmtiEnv *e, JNIEnv *j, jthread t, jmethodID m)
{
	(void)e;
	(void)j;
	(void)t;
	emit(m, 0, JPB_TRUTH_ENTRY);
}

static void JNICALL on_mexit(jvmtiEnv *e, JNIEnv *j, jthread t, jmethodID m,
			    jboolean by_exc, jvalue v)
{
	(void)e;
	(void)j;
	(void)t;
	(void)v;
	emit(m, 0, by_exc ? JPB_TRUTH_EXIT_EXC : JPB_TRUTH_EXIT);
}

static void JNICALL on_throw(jvmtiEnv *e, JNIEnv *j, jthread t, jmethodID m,
			     jlocation loc, jobject exc, jmethodID cm,
			     jlocation cloc)
{
	(void)e;
	(void)j;
	(void)t;
	(void)exc;
	(void)cm;
	(void)cloc;
	emit(m, loc, JPB_TRUTH_THROW);
}

static void JNICALL on_catch(jvmtiEnv *e, JNIEnv *j, jthread t, jmethodID m,
			     jlocation loc, jobject exc)
{
	(void)e;
	(void)j;
	(void)t;
	(void)exc;
	emit(m, loc, JPB_TRUTH_CATCH);
}

/* ---- the truthfrom= trigger ---- */

/* Breakpoints at bci 0 of every method of K named like the trigger. */
static void arm_class(struct agent *a, jclass k)
{
	struct truth *t = a->truth;
	jvmtiEnv *e = a->jvmti;
	char *sig = NULL;
	jint n = 0;
	jmethodID *ms = NULL;
	if ((*e)->GetClassSignature(e, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return;
	int match = !strcmp(sig, t->from_class);
	(*e)->Deallocate(e, (unsigned char *)sig);
	if (!match || (*e)->GetClassMethods(e, k, &n, &ms) != JVMTI_ERROR_NONE)
		return;
	pthread_mutex_lock(&t->lock);
	for (jint i = 0; i < n && t->nbps < TT_MAX_BREAKPOINTS; i++) {
		char *name = NULL;
		if ((*e)->GetMethodName(e, ms[i], &name, NULL, NULL) != JVMTI_ERROR_NONE)
			continue;
		if (!strcmp(name, t->from_name) &&
		    (*e)->SetBreakpoint(e, ms[i], 0) == JVMTI_ERROR_NONE)
			t->bps[t->nbps++] = ms[i];
		(*e)->Deallocate(e, (unsigned char *)name);
	}
	pthread_mutex_unlock(&t->lock);
	(*e)->Deallocate(e, (unsigned char *)ms);
}

static void JNICALL on_prepare(jvmtiEnv *e, JNIEnv *j, jthread th, jclass k)
{
	struct agent *a = agent_get();
	struct truth *t = a ? a->truth : NULL;
	if (t && t->chained_prepare)
		t->chained_prepare(e, j, th, k);
	if (t && !a->stopped && !__atomic_load_n(&t->open, __ATOMIC_ACQUIRE))
		arm_class(a, k);
}

static void JNICALL on_breakpoint(jvmtiEnv *e, JNIEnv *j, jthread th,
				  jmethodID m, jlocation loc)
{
	(void)j;
	(void)th;
	struct agent *a = agent_get();
	if (!a || a->stopped || !a->truth)
		return;
	struct truth *t = a->truth;
	int was = 0;
	if (!__atomic_compare_exchange_n(&t->open, &was, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nbps; i++)
		(*e)->ClearBreakpoint(e, t->bps[i], 0);
	pthread_mutex_unlock(&t->lock);
	(*e)->SetEventNotificationMode(e, JVMTI_DISABLE, JVMTI_EVENT_BREAKPOINT, NULL);
	if (set_step_events(a, JVMTI_ENABLE) != 0)
		aq_note(&a->q, JPB_NOTE_ERROR,
			"truth: cannot enable the JVMTI events: no truth");
	/* The bytecode under the breakpoint runs without a SingleStep
	 * (HotSpot posts one event per location): it is the first one. */
	emit(m, loc, JPB_TRUTH_BYTECODE);
}

/* Arm the trigger on classes loaded before VMInit (JDK classes). */
static void arm_loaded(struct agent *a)
{
	jvmtiEnv *e = a->jvmti;
	jint n = 0;
	jclass *ks = NULL;
	if ((*e)->GetLoadedClasses(e, &n, &ks) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++)
		arm_class(a, ks[i]);
	(*e)->Deallocate(e, (unsigned char *)ks);
}

int truth_start(struct agent *a)
{
	struct truth *t = a->truth;
	if (!t->from_class[0]) {
		t->start_why = JPB_TRUTH_WHY_VMINIT;
		__atomic_store_n(&t->open, 1, __ATOMIC_RELEASE);
		return set_step_events(a, JVMTI_ENABLE);
	}
	t->start_why = JPB_TRUTH_WHY_TRIGGER;
	jvmtiEnv *e = a->jvmti;
	if ((*e)->SetEventNotificationMode(e, JVMTI_ENABLE, JVMTI_EVENT_BREAKPOINT,
					   NULL) != JVMTI_ERROR_NONE)
		return -1;
	arm_loaded(a);
	return 0;
}

void truth_stop_events(struct agent *a)
{
	set_step_events(a, JVMTI_DISABLE);
	if (a->truth && ((struct truth *)a->truth)->from_class[0])
		(*a->jvmti)->SetEventNotificationMode(a->jvmti, JVMTI_DISABLE,
						      JVMTI_EVENT_BREAKPOINT, NULL);
}

void truth_callbacks(struct agent *a, jvmtiEventCallbacks *cb)
{
	struct truth *t = a->truth;
	cb->SingleStep = on_step;
	cb->MethodEntry = on_entry;
	cb->MethodExit = on_mexit;
	cb->Exception = on_throw;
	cb->ExceptionCatch = on_catch;
	if (t && t->from_class[0]) {
		/* The trigger's class is found at ClassPrepare, which the
		 * agent already handles: run its callback, then ours. */
		t->chained_prepare = cb->ClassPrepare;
		cb->ClassPrepare = on_prepare;
		cb->Breakpoint = on_breakpoint;
	}
}

void truth_thread_end(struct agent *a)
{
	struct tthread *th = tls_thread;
	if (!th || !a->truth)
		return;
	pthread_mutex_lock(&th->lock);
	stop_thread_locked(a, th, JPB_TRUTH_WHY_THREAD_END);
	pthread_mutex_unlock(&th->lock);
}

void truth_flush_all(struct agent *a)
{
	struct truth *t = a->truth;
	if (!t)
		return;
	if (t->from_class[0] && !__atomic_load_n(&t->open, __ATOMIC_ACQUIRE)) {
		/* Said, not silent: an empty truth is not a quiet program. */
		aq_note(&a->q, JPB_NOTE_WARN,
			"truth: truthfrom=%s never entered (%d methods armed): "
			"no truth recorded", a->opts.truth_from, t->nbps);
		agent_log("truthfrom=%s never entered (%d methods armed): no "
			  "truth recorded", a->opts.truth_from, t->nbps);
	}
	pthread_mutex_lock(&t->lock);
	for (struct tthread *th = t->threads; th; th = th->next) {
		pthread_mutex_lock(&th->lock);
		stop_thread_locked(a, th, JPB_TRUTH_WHY_SESSION);
		th->dead = 1;
		pthread_mutex_unlock(&th->lock);
	}
	pthread_mutex_unlock(&t->lock);
}
