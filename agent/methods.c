// SPDX-License-Identifier: MIT
/* jmethodID -> identity.  Each method is described once per session, the
 * first time any record refers to it. */
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static void dealloc(jvmtiEnv *e, char *p)
{
	if (p)
		(*e)->Deallocate(e, (unsigned char *)p);
}

/* Whether M is known described, without the set's lock.  A slot holds
 * an id only once the set has it (the set never forgets), so a hit is
 * always right; a miss asks the set.  About 10 asks per compiled method,
 * most of them for methods described long ago, each took the set's lock
 * and a cache miss in its table (6% of the Service Thread's samples). */
static int seen(struct agent *a, uint64_t key, uint64_t **slot)
{
	size_t n = sizeof(a->methods_seen) / sizeof(a->methods_seen[0]);
	*slot = &a->methods_seen[((key * 0x9e3779b97f4a7c15ull) >> 40) & (n - 1)];
	return __atomic_load_n(*slot, __ATOMIC_RELAXED) == key;
}

void methods_note(struct agent *a, jmethodID m)
{
	uint64_t key = (uint64_t)(uintptr_t)m, *slot;
	if (!m || !a->methods || seen(a, key, &slot))
		return;
	int rc = hset_add(a->methods, key);
	if (rc >= 0)
		__atomic_store_n(slot, key, __ATOMIC_RELAXED);
	if (rc != 1)
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
