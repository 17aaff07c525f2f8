// SPDX-License-Identifier: MIT
/*
 * Classes loaded but not yet prepared at a late attach or at the VMInit
 * catch-up (a sixth of them on
 * a javac loop: loaded while resolving or verifying others).  JVMTI gives
 * no method list before preparation, so their resource cannot be checked
 * at attach, and retransforming them would cost the very safepoint the
 * resources avoid.  None of their code has run yet: the attach thread
 * reads the resource, and the check happens at their ClassPrepare, with
 * JVMTI calls only (no Java code on the application's thread).  A class
 * never prepared never runs and needs no class file.
 *
 * An entry is registered before its resource is read, so that a class
 * prepared meanwhile is seen: its ClassPrepare marks the entry, and the
 * attach thread checks the class itself.  A class with no usable resource
 * keeps an entry without data under retransform=never: it is rebuilt from
 * JVMTI at its ClassPrepare (class_rebuild.c), as are those whose resource
 * turns out to differ from the class prepared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

enum { P_READING, P_READY, P_REBUILD, P_PREPARED };

struct pend {
	char *name;
	size_t len;
	uint64_t loader;
	uint8_t *data;
	size_t size;
	int state;
};

struct class_pending {
	pthread_mutex_t lock;
	struct pend *v;
	size_t n, cap;
	/* Classes prepared while the catch-up runs, unrecorded: the
	 * catch-up may be about to record them (class_pending_defer). */
	int catchup_done;
	jobject *def;
	size_t n_def, cap_def;
};

struct class_pending *class_pending_new(void)
{
	struct class_pending *p = calloc(1, sizeof(*p));
	if (p)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

static struct pend *find(struct class_pending *p, const char *name,
			 size_t len, uint64_t loader)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].loader == loader && p->v[i].len == len &&
		    !memcmp(p->v[i].name, name, len))
			return &p->v[i];
	return NULL;
}

/* Remove E, keeping its data for the caller. */
static void drop(struct class_pending *p, struct pend *e)
{
	free(e->name);
	*e = p->v[--p->n];
}

static int add(struct class_pending *p, const char *name, size_t len,
	       uint64_t loader)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct pend *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -1;
		p->v = v;
		p->cap = cap;
	}
	char *copy = strndup(name, len);
	if (!copy)
		return -1;
	p->v[p->n++] = (struct pend){ copy, len, loader, NULL, 0, P_READING };
	return 0;
}

int class_pending_begin(struct agent *a, jclass k, const char *name,
			size_t len, uint64_t loader)
{
	struct class_pending *p = a->pending;
	jint status = 0;
	int rc = -1;
	if (!p)
		return -1;
	pthread_mutex_lock(&p->lock);
	/* Under the lock: a class whose ClassPrepare has not looked for an
	 * entry yet is not prepared, so it will find this one. */
	if ((*a->jvmti)->GetClassStatus(a->jvmti, k, &status) ==
		    JVMTI_ERROR_NONE &&
	    !(status & JVMTI_CLASS_STATUS_PREPARED))
		rc = add(p, name, len, loader);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int class_pending_end(struct agent *a, const char *name, size_t len,
		      uint64_t loader, uint8_t *data, size_t size, int rebuild)
{
	struct class_pending *p = a->pending;
	int kept = 0;
	pthread_mutex_lock(&p->lock);
	struct pend *e = find(p, name, len, loader);
	if (e && (data || rebuild) && e->state == P_READING) {
		e->data = data;
		e->size = size;
		e->state = data ? P_READY : P_REBUILD;
		kept = 1;
	} else if (e) {
		drop(p, e);
	}
	pthread_mutex_unlock(&p->lock);
	return kept;
}

/* A class prepared during the catch-up that neither the hook nor the
 * catch-up has recorded yet: recording it here (rebuilt) could race with
 * the catch-up recording it from its resource, and blocking here could
 * deadlock (ClassPrepare holds K's init lock, which the catch-up's Java
 * code may need).  So K waits for the catch-up's end, which records it
 * unless the catch-up did. */
int class_pending_defer(struct agent *a, JNIEnv *jni, jclass k)
{
	struct class_pending *p = a->pending;
	if (!p || !jni || __atomic_load_n(&p->catchup_done, __ATOMIC_ACQUIRE))
		return 0;
	jobject g = (*jni)->NewGlobalRef(jni, k);
	if (!g)
		return 0;
	int kept = 0;
	pthread_mutex_lock(&p->lock);
	if (!p->catchup_done && p->n_def == p->cap_def) {
		size_t cap = p->cap_def ? p->cap_def * 2 : 64;
		jobject *v = realloc(p->def, cap * sizeof(*v));
		if (v) {
			p->def = v;
			p->cap_def = cap;
		}
	}
	if (!p->catchup_done && p->n_def < p->cap_def) {
		p->def[p->n_def++] = g;
		kept = 1;
	}
	pthread_mutex_unlock(&p->lock);
	if (!kept)
		(*jni)->DeleteGlobalRef(jni, g);
	return kept;
}

jobject *class_pending_catchup_end(struct agent *a, size_t *n)
{
	struct class_pending *p = a->pending;
	jobject *v = NULL;
	*n = 0;
	if (!p)
		return NULL;
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->catchup_done, 1, __ATOMIC_RELEASE);
	v = p->def;
	*n = p->n_def;
	p->def = NULL;
	p->n_def = p->cap_def = 0;
	pthread_mutex_unlock(&p->lock);
	return v;
}

void class_pending_flush(struct agent *a)
{
	struct class_pending *p = a->pending;
	uint64_t written = 0, lost = 0;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		struct pend *e = &p->v[i];
		/* The others have no resource and, unprepared, no method
		 * list to rebuild from; a class that never ran is not
		 * jvm_class_missing ("runs without its class file"). */
		if (e->state == P_READY)
			classes_put(a, JPB_CLASS_F_RESOURCE, e->loader, e->name,
				    e->len, e->data, e->size);
		written += e->state == P_READY;
		lost += e->state != P_READY;
		free(e->data);
		free(e->name);
	}
	p->n = 0;
	pthread_mutex_unlock(&p->lock);
	if (written || lost)
		aq_note(&a->q, JPB_NOTE_INFO, "classes loaded but never "
			"prepared (their code never ran): %llu written from "
			"their resources, checked by name and version only; "
			"%llu without a resource, not written",
			(unsigned long long)written, (unsigned long long)lost);
}

/* Take the entry of K if it has one: its state, and its data if READY.
 * One still being read is marked, and the attach thread checks K. */
static int take(struct class_pending *p, const char *name, size_t len,
		uint64_t loader, uint8_t **data, size_t *size)
{
	pthread_mutex_lock(&p->lock);
	struct pend *e = find(p, name, len, loader);
	int state = e ? e->state : -1;
	*data = NULL;
	if (e && e->state == P_READING) {
		e->state = P_PREPARED;
	} else if (e) {
		*data = e->data;
		*size = e->size;
		drop(p, e);
	}
	pthread_mutex_unlock(&p->lock);
	return state;
}

int class_pending_prepared(struct agent *a, JNIEnv *jni, jclass k,
			   const char *sig, const char *name, size_t len)
{
	struct class_pending *p = __atomic_load_n(&a->pending, __ATOMIC_ACQUIRE);
	jvmtiEnv *e = a->jvmti;
	jobject ld = NULL;
	uint8_t *data;
	size_t size = 0;
	if (!p || !__atomic_load_n(&p->n, __ATOMIC_RELAXED))
		return 0;
	if ((*e)->GetClassLoader(e, k, &ld) != JVMTI_ERROR_NONE)
		ld = NULL;
	uint64_t loader = classes_loader_id(e, ld);
	if (ld && jni)
		(*jni)->DeleteLocalRef(jni, ld);
	int state = take(p, name, len, loader, &data, &size);
	if (state < 0)
		return 0;
	if (state == P_READING)
		return 1;
	int rc = data ? class_res_match(e, k, name, len, data, size, 1)
		      : CR_NO_RESOURCE;
	char why[128];
	if (rc == CR_OK) {
		classes_put(a, JPB_CLASS_F_RESOURCE, loader, name, len, data,
			    size);
	} else if (state == P_REBUILD) {
		class_rebuild_put(a, jni, k, sig, loader, "no resource");
	} else if (agent_rt_mode(a) == RT_NEVER) {
		snprintf(why, sizeof(why), "resource differs from the class "
			 "prepared: %s", class_res_strs[rc]);
		class_rebuild_put(a, jni, k, sig, loader, why);
	} else {
		snprintf(why, sizeof(why), "resource read on attach differs "
			 "from the class prepared later: %s",
			 class_res_strs[rc]);
		classes_put_missing(a, jni, k, sig, why);
	}
	free(data);
	return 1;
}
