// SPDX-License-Identifier: MIT
/*
 * Class-file bytes, as the JVM received them.  At start-up the hook sees
 * every class; on a late attach the loaded classes are retransformed
 * (unchanged: the hook never returns new bytes) in batches sized so that
 * each safepoint stays near opts.batch_ms, and every batch is reported as
 * a JPB_REC_JVM_PAUSE.
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

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
	jint hash = 0;
	if (loader && (*e)->GetObjectHashCode(e, loader, &hash) != JVMTI_ERROR_NONE)
		hash = 0;
	struct jpb_rec_jvm_class r = {
		.flags = (redefined ? JPB_CLASS_F_RETRANSFORM : 0) |
			 (name ? 0 : JPB_CLASS_F_HIDDEN),
		/* The hash only tells loaders apart; bit 32 keeps a loader
		 * whose hash is 0 distinct from the bootstrap loader. */
		.loader = loader ? ((uint64_t)1 << 32) | (uint32_t)hash : 0,
		.name = jpb_str_c(name),
		.bytes = { data, (uint32_t)len },
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CLASS, agent_now(), &r);
	__atomic_add_fetch(&a->n_classes, 1, __ATOMIC_RELAXED);
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

/* Keep only classes the JVM lets us retransform; returns the count. */
static jint modifiable(jvmtiEnv *e, JNIEnv *jni, jclass *cs, jint n)
{
	jint k = 0;
	for (jint i = 0; i < n; i++) {
		jboolean ok = JNI_FALSE;
		if ((*e)->IsModifiableClass(e, cs[i], &ok) == JVMTI_ERROR_NONE &&
		    ok)
			cs[k++] = cs[i];
		else if (jni)
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
	n = modifiable(e, jni, cs, n);
	uint64_t target = (uint64_t)(a->opts.batch_ms > 0 ? a->opts.batch_ms : 5) *
			  1000000u;
	uint64_t failed = 0, t_start = agent_now();
	jint batch = 4; /* the first call also pays one-time set-up */
	for (jint i = 0; i < n && !a->stopped;) {
		jint k = n - i < batch ? n - i : batch;
		uint64_t t0 = agent_now();
		retransform(a, cs + i, k, &failed);
		uint64_t dt = agent_now() - t0;
		i += k;
		/* Aim the next batch at the target pause from this one's
		 * per-class cost. */
		uint64_t per = dt / (uint64_t)k + 1;
		uint64_t next = target / per;
		batch = (jint)(next < 4 ? 4 : next > 1024 ? 1024 : next);
	}
	aq_note(&a->q, JPB_NOTE_INFO,
		"retransform on attach: %d loaded, %d modifiable, %llu failed, "
		"%llu batches, max pause %.2f ms, total %.1f ms in %.1f ms",
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
