// SPDX-License-Identifier: MIT
/*
 * Ground-truth mode: every bytecode each thread executes (SingleStep),
 * plus method entry/exit and exceptions, into stream "truth" in the
 * format of records_truth.h.  Events go into a per-thread preallocated
 * buffer of packed 8-byte events; a full buffer becomes one
 * JPB_REC_TRUTH_EVENTS record handed to the writer thread.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define TT_EVENTS 8192u /* per record: 64 KiB */

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
	const struct tmethod *last; /* one-entry cache */
	uint8_t buf[TT_EVENTS * JPB_TRUTH_EVENT_SIZE];
};

struct truth {
	pthread_mutex_t lock; /* methods and the thread list */
	struct tmethod *slots;
	size_t cap, used;
	uint32_t next_id;
	struct tthread *threads;
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
	a->truth = t;
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

static void emit(jmethodID m, jlocation loc, uint8_t kind)
{
	struct agent *a = agent_get();
	if (!a || a->stopped || !a->truth)
		return;
	struct tthread *th = this_thread(a);
	if (!th)
		return;
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
	pthread_mutex_lock(&th->lock);
	if (!th->dead) {
		jpb_truth_event_put(th->buf + th->n * JPB_TRUTH_EVENT_SIZE, &ev);
		if (++th->n == TT_EVENTS)
			flush_locked(a, th);
	}
	pthread_mutex_unlock(&th->lock);
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

void truth_callbacks(jvmtiEventCallbacks *cb)
{
	cb->SingleStep = on_step;
	cb->MethodEntry = on_entry;
	cb->MethodExit = on_mexit;
	cb->Exception = on_throw;
	cb->ExceptionCatch = on_catch;
}

void truth_thread_end(struct agent *a)
{
	struct tthread *th = tls_thread;
	if (!th || !a->truth)
		return;
	pthread_mutex_lock(&th->lock);
	flush_locked(a, th);
	pthread_mutex_unlock(&th->lock);
}

void truth_flush_all(struct agent *a)
{
	struct truth *t = a->truth;
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	for (struct tthread *th = t->threads; th; th = th->next) {
		pthread_mutex_lock(&th->lock);
		flush_locked(a, th);
		th->dead = 1;
		pthread_mutex_unlock(&th->lock);
	}
	pthread_mutex_unlock(&t->lock);
}
