// SPDX-License-Identifier: MIT
/* jmethodID -> identity.  Each method is described once per session, the
 * first time any record refers to it. */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

struct method_table {
	pthread_mutex_t lock;
	uintptr_t *slots; /* open addressing, 0 = empty */
	size_t cap, used;
};

struct method_table *methods_new(void)
{
	struct method_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = 4096;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

void methods_free(struct method_table *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->slots);
	free(t);
}

static size_t slot_of(uintptr_t key, size_t cap)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

static int grow(struct method_table *t)
{
	size_t cap = t->cap * 2;
	uintptr_t *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		size_t j = slot_of(t->slots[i], cap);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->cap = cap;
	return 0;
}

/* 1 if KEY was new (and is now in), 0 if present, -1 on no memory. */
static int insert(struct method_table *t, uintptr_t key)
{
	pthread_mutex_lock(&t->lock);
	if (t->used * 2 >= t->cap && grow(t) != 0) {
		pthread_mutex_unlock(&t->lock);
		return -1;
	}
	size_t i = slot_of(key, t->cap);
	while (t->slots[i] && t->slots[i] != key)
		i = (i + 1) & (t->cap - 1);
	int fresh = !t->slots[i];
	if (fresh) {
		t->slots[i] = key;
		t->used++;
	}
	pthread_mutex_unlock(&t->lock);
	return fresh;
}

static void dealloc(jvmtiEnv *e, char *p)
{
	if (p)
		(*e)->Deallocate(e, (unsigned char *)p);
}

void methods_note(struct agent *a, jmethodID m)
{
	if (!m || !a->methods || insert(a->methods, (uintptr_t)m) != 1)
		return;
	jvmtiEnv *e = a->jvmti;
	char *name = NULL, *sig = NULL, *csig = NULL;
	jclass cls = NULL;
	jint mods = 0;
	if ((*e)->GetMethodName(e, m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		name = sig = NULL;
	if ((*e)->GetMethodDeclaringClass(e, m, &cls) == JVMTI_ERROR_NONE &&
	    (*e)->GetClassSignature(e, cls, &csig, NULL) != JVMTI_ERROR_NONE)
		csig = NULL;
	if ((*e)->GetMethodModifiers(e, m, &mods) != JVMTI_ERROR_NONE)
		mods = 0;
	struct jpb_rec_jvm_method r = {
		.method_id = (uint64_t)(uintptr_t)m,
		.access_flags = (uint32_t)mods,
		.class_sig = jpb_str_c(csig),
		.name = jpb_str_c(name),
		.signature = jpb_str_c(sig),
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_METHOD, agent_now(), &r);
	dealloc(e, name);
	dealloc(e, sig);
	dealloc(e, csig);
}
