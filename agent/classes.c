// SPDX-License-Identifier: MIT
/*
 * Class-file bytes, as the JVM received them.  At start-up the hook sees
 * every class; on a late attach the loaded classes are retransformed
 * (unchanged: the hook never returns new bytes) in one RetransformClasses
 * call, or in batches near opts.batch_ms when asked, and every call is
 * reported as a JPB_REC_JVM_PAUSE.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

/* Names of the classes whose bytes the hook delivered, to find those it
 * never sees (hidden classes, lambda proxies) at ClassPrepare. */
struct name_set {
	pthread_mutex_t lock;
	char **slots;
	size_t cap, used;
};

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static int set_grow(struct name_set *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	char **s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		size_t j = hash_name(t->slots[i]) & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

/* Add NAME (len bytes) if ADD; returns 1 if it was present. */
static int set_lookup(struct name_set *t, const char *name, size_t len,
		      int add)
{
	int found = 0;
	pthread_mutex_lock(&t->lock);
	if ((t->used + 1) * 2 > t->cap && set_grow(t) != 0) {
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	char key[1024];
	if (len >= sizeof(key))
		len = sizeof(key) - 1;
	memcpy(key, name, len);
	key[len] = 0;
	size_t i = hash_name(key) & (t->cap - 1);
	while (t->slots[i] && strcmp(t->slots[i], key) != 0)
		i = (i + 1) & (t->cap - 1);
	found = t->slots[i] != NULL;
	if (!found && add) {
		t->slots[i] = strdup(key);
		if (t->slots[i])
			t->used++;
	}
	pthread_mutex_unlock(&t->lock);
	return found;
}

void *classes_new_set(void)
{
	struct name_set *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	if (set_grow(t) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

static uint64_t loader_id(jvmtiEnv *e, jobject loader)
{
	jint hash = 0;
	if (!loader)
		return 0;
	if ((*e)->GetObjectHashCode(e, loader, &hash) != JVMTI_ERROR_NONE)
		hash = 0;
	/* The hash only tells loaders apart; bit 32 keeps a loader whose
	 * hash is 0 distinct from the bootstrap loader. */
	return ((uint64_t)1 << 32) | (uint32_t)hash;
}

void JNICALL classes_on_load(jvmtiEnv *e, JNIEnv *jni, jclass redefined,
			     jobject loader, const char *name, jobject pd,
			     jint len, const unsigned char *data,
			     jint *new_len, unsigned char **new_data)
{
	(void)jni;
	(void)pd;
	(void)new_len;
	(void)new_data;
	struct agent *a = agent_get();
	if (!a || a->stopped || a->opts.no_classes || len <= 0 || !data)
		return;
	if (name && a->class_names)
		set_lookup(a->class_names, name, strlen(name), 1);
	struct jpb_rec_jvm_class r = {
		.flags = (redefined ? JPB_CLASS_F_RETRANSFORM : 0) |
			 (name ? 0 : JPB_CLASS_F_HIDDEN),
		.loader = loader_id(e, loader),
		.name = jpb_str_c(name),
		.bytes = { data, (uint32_t)len },
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CLASS, agent_now(), &r);
	__atomic_add_fetch(&a->n_classes, 1, __ATOMIC_RELAXED);
}

/* A class that runs without its bytes: say so, and keep what JVMTI
 * still gives, each method's bytecodes. */
static void put_missing(struct agent *a, JNIEnv *jni, jclass k,
			const char *sig, const char *reason)
{
	jvmtiEnv *e = a->jvmti;
	jobject loader = NULL;
	if ((*e)->GetClassLoader(e, k, &loader) != JVMTI_ERROR_NONE)
		loader = NULL;
	struct jpb_rec_jvm_class_missing r = { loader_id(e, loader),
					       jpb_str_c(sig),
					       jpb_str_c(reason) };
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CLASS_MISSING, agent_now(), &r);
	__atomic_add_fetch(&a->n_class_fail, 1, __ATOMIC_RELAXED);
	if (jni && loader)
		(*jni)->DeleteLocalRef(jni, loader);
	jint n = 0;
	jmethodID *ms = NULL;
	if ((*e)->GetClassMethods(e, k, &n, &ms) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		jint len = 0;
		unsigned char *code = NULL;
		methods_note(a, ms[i]);
		if ((*e)->GetBytecodes(e, ms[i], &len, &code) != JVMTI_ERROR_NONE)
			continue; /* native or abstract */
		struct jpb_rec_jvm_method_code c = {
			(uint64_t)(uintptr_t)ms[i], { code, (uint32_t)len }
		};
		aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_METHOD_CODE, agent_now(), &c);
		(*e)->Deallocate(e, code);
	}
	(*e)->Deallocate(e, (unsigned char *)ms);
}

/* The class name inside a signature "Lname;", or NULL for arrays and
 * primitives, which have no class file. */
static const char *sig_name(const char *sig, size_t *len)
{
	size_t n = sig ? strlen(sig) : 0;
	if (n < 3 || sig[0] != 'L' || sig[n - 1] != ';')
		return NULL;
	*len = n - 2;
	return sig + 1;
}

void JNICALL classes_on_prepare(jvmtiEnv *e, JNIEnv *jni, jthread t,
				jclass k)
{
	(void)t;
	struct agent *a = agent_get();
	char *sig = NULL;
	size_t len;
	if (!a || a->stopped || a->opts.no_classes || !a->class_names ||
	    (*e)->GetClassSignature(e, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return;
	const char *name = sig_name(sig, &len);
	if (name && !set_lookup(a->class_names, name, len, 0))
		put_missing(a, jni, k, sig, "not passed to ClassFileLoadHook "
			    "(hidden class)");
	(*e)->Deallocate(e, (unsigned char *)sig);
}

static void put_pause(struct agent *a, uint32_t items, uint64_t ns)
{
	struct jpb_rec_jvm_pause p = { jpb_str_c("retransform"), items, 0, ns };
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_PAUSE, agent_now(), &p);
	a->n_retransform_batches++;
	a->total_pause_ns += ns;
	if (ns > a->max_pause_ns)
		a->max_pause_ns = ns;
}

/* Keep only classes the JVM lets us retransform; returns the count.
 * The others (hidden classes) are reported missing. */
static jint modifiable(struct agent *a, JNIEnv *jni, jclass *cs, jint n)
{
	jvmtiEnv *e = a->jvmti;
	jint k = 0;
	for (jint i = 0; i < n; i++) {
		jboolean ok = JNI_FALSE;
		if ((*e)->IsModifiableClass(e, cs[i], &ok) == JVMTI_ERROR_NONE &&
		    ok) {
			cs[k++] = cs[i];
			continue;
		}
		char *sig = NULL;
		size_t len;
		if ((*e)->GetClassSignature(e, cs[i], &sig, NULL) ==
		    JVMTI_ERROR_NONE) {
			jint status = 0;
			if (sig_name(sig, &len) &&
			    (*e)->GetClassStatus(e, cs[i], &status) ==
				    JVMTI_ERROR_NONE &&
			    (status & JVMTI_CLASS_STATUS_PREPARED))
				put_missing(a, jni, cs[i], sig,
					    "not modifiable: no retransform "
					    "(hidden class)");
			(*e)->Deallocate(e, (unsigned char *)sig);
		}
		if (jni)
			(*jni)->DeleteLocalRef(jni, cs[i]);
	}
	return k;
}

/* Retransform one batch, splitting it if the JVM rejects a class in it,
 * so one bad class costs only itself. */
static void retransform(struct agent *a, jclass *cs, jint n, uint64_t *failed)
{
	jvmtiEnv *e = a->jvmti;
	uint64_t t0 = agent_now();
	jvmtiError err = (*e)->RetransformClasses(e, n, cs);
	put_pause(a, (uint32_t)n, agent_now() - t0);
	if (err == JVMTI_ERROR_NONE)
		return;
	if (n == 1) {
		(*failed)++;
		return;
	}
	retransform(a, cs, n / 2, failed);
	retransform(a, cs + n / 2, n - n / 2, failed);
}

/* Batch sizes for batch_ms=N: aim each call at N ms from the previous
 * call's per-class cost. */
static jint next_batch(struct agent *a, uint64_t dt, jint k)
{
	uint64_t target = (uint64_t)a->opts.batch_ms * 1000000u;
	uint64_t next = target / (dt / (uint64_t)k + 1);
	return (jint)(next < 64 ? 64 : next > 4096 ? 4096 : next);
}

/* One RetransformClasses call for all classes by default.  Every call
 * stops the JVM once and pays costs that do not shrink with the batch:
 * HotSpot walks every loaded class to fix up constant-pool caches and
 * vtables, and deoptimizes the compiled code that depends on the batch
 * (on JDK 17 the first call deoptimizes all of it).  Small batches thus
 * multiply the total stop time and keep the JIT recompiling: measured
 * here, 429 calls of ~5 classes never finished within 25 s of a javac
 * workload, while one call stops it once (docs/AGENT.md). */
static void retransform_loaded(struct agent *a, jclass *cs, jint n,
			       uint64_t *failed)
{
	jint batch = a->opts.batch_ms > 0 ? 64 : n;
	for (jint i = 0; i < n && !a->stopped;) {
		jint k = n - i < batch ? n - i : batch;
		uint64_t t0 = agent_now();
		retransform(a, cs + i, k, failed);
		i += k;
		if (a->opts.batch_ms > 0)
			batch = next_batch(a, agent_now() - t0, k);
	}
}

void classes_retransform_all(struct agent *a, JNIEnv *jni)
{
	jvmtiEnv *e = a->jvmti;
	jint n = 0;
	jclass *cs = NULL;
	if (a->opts.no_classes)
		return;
	if ((*e)->GetLoadedClasses(e, &n, &cs) != JVMTI_ERROR_NONE) {
		aq_note(&a->q, JPB_NOTE_ERROR,
			"GetLoadedClasses failed: no class bytes before attach");
		struct jpb_rec_loss l = { jpb_str_c("classes"), UINT32_MAX, 1,
					  agent_now(), agent_now() };
		aq_put_rec(&a->q, AS_JVM, JPB_REC_LOSS, agent_now(), &l);
		return;
	}
	jint total = n;
	n = modifiable(a, jni, cs, n);
	uint64_t failed = 0, t_start = agent_now();
	retransform_loaded(a, cs, n, &failed);
	aq_note(&a->q, JPB_NOTE_INFO,
		"retransform on attach: %d loaded, %d modifiable, %llu failed, "
		"%llu RetransformClasses calls, longest %.2f ms, total %.1f ms "
		"in %.1f ms",
		(int)total, (int)n, (unsigned long long)failed,
		(unsigned long long)a->n_retransform_batches,
		a->max_pause_ns / 1e6, a->total_pause_ns / 1e6,
		(agent_now() - t_start) / 1e6);
	if (failed) {
		struct jpb_rec_loss l = { jpb_str_c("classes"), UINT32_MAX,
					  failed, t_start, agent_now() };
		aq_put_rec(&a->q, AS_JVM, JPB_REC_LOSS, agent_now(), &l);
	}
	if (jni)
		for (jint i = 0; i < n; i++)
			(*jni)->DeleteLocalRef(jni, cs[i]);
	(*e)->Deallocate(e, (unsigned char *)cs);
}
