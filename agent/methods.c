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

void methods_note(struct agent *a, jmethodID m)
{
	if (!m || !a->methods || hset_add(a->methods, (uintptr_t)m) != 1)
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
