// SPDX-License-Identifier: MIT
/*
 * Class-file bytes, as the JVM received them: the ClassFileLoadHook sees
 * every class loaded while the agent runs (class_attach.c gets those
 * loaded before a late attach, or before the hook posts at start-up).
 * A class that runs without a class file (a hidden class) is found at
 * ClassPrepare and rebuilt from JVMTI (class_rebuild.c); one that cannot
 * be is described by its methods' bytecodes.
 */
#include <string.h>

#include "agent.h"

uint64_t classes_loader_id(jvmtiEnv *e, jobject loader)
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
	classes_put(a, redefined ? JPB_CLASS_F_RETRANSFORM : 0,
		    classes_loader_id(e, loader), name, name ? strlen(name) : 0,
		    data, (size_t)len);
}

void classes_put(struct agent *a, uint32_t flags, uint64_t loader,
		 const char *name, size_t len, const uint8_t *data,
		 size_t size)
{
	if (name && a->class_names)
		hset_add_name(a->class_names, name, len);
	struct jpb_rec_jvm_class r = {
		.flags = flags | (name ? 0 : JPB_CLASS_F_HIDDEN),
		.loader = loader,
		.name = { name ? name : "", (uint32_t)len },
		.bytes = { data, (uint32_t)size },
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CLASS, agent_now(), &r);
	__atomic_add_fetch(&a->n_classes, 1, __ATOMIC_RELAXED);
}

/* A class that runs without its bytes: say so, and keep what JVMTI
 * still gives, each method's bytecodes. */
void classes_put_missing(struct agent *a, JNIEnv *jni, jclass k,
			 const char *sig, const char *reason)
{
	jvmtiEnv *e = a->jvmti;
	jobject loader = NULL;
	size_t nlen;
	const char *name = classes_sig_name(sig, &nlen);
	/* Dealt with: ClassPrepare and the catch-up leave it alone. */
	if (name && a->class_names)
		hset_add_name(a->class_names, name, nlen);
	if ((*e)->GetClassLoader(e, k, &loader) != JVMTI_ERROR_NONE)
		loader = NULL;
	struct jpb_rec_jvm_class_missing r = { classes_loader_id(e, loader),
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

/* Arrays and primitives have no class file. */
const char *classes_sig_name(const char *sig, size_t *len)
{
	size_t n = sig ? strlen(sig) : 0;
	if (n < 3 || sig[0] != 'L' || sig[n - 1] != ';')
		return NULL;
	*len = n - 2;
	return sig + 1;
}

/* A class the hook never saw: a hidden class (lambda proxy, LambdaForm,
 * Lookup.defineHiddenClass).  Rebuilt once, here on the defining thread,
 * with JVMTI reads only; its CPU time is summed for the closing note. */
static void put_hidden(struct agent *a, JNIEnv *jni, jclass k,
		       const char *sig)
{
	uint64_t c0 = agent_thread_cpu_ns();
	jobject ld = NULL;
	if ((*a->jvmti)->GetClassLoader(a->jvmti, k, &ld) != JVMTI_ERROR_NONE)
		ld = NULL;
	uint64_t loader = classes_loader_id(a->jvmti, ld);
	if (ld && jni)
		(*jni)->DeleteLocalRef(jni, ld);
	int rc = class_rebuild_put(a, jni, k, sig, loader,
				   strchr(sig, '.') ? "not passed to "
				   "ClassFileLoadHook (hidden class)"
				   : "not passed to ClassFileLoadHook");
	__atomic_add_fetch(&a->n_hidden_rebuilt, rc == RB_OK,
			   __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->hidden_ns, agent_thread_cpu_ns() - c0,
			   __ATOMIC_RELAXED);
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
	const char *name = classes_sig_name(sig, &len);
	if (name && !hset_has_name(a->class_names, name, len) &&
	    !class_pending_prepared(a, jni, k, sig, name, len) &&
	    !class_pending_defer(a, jni, k))
		put_hidden(a, jni, k, sig);
	(*e)->Deallocate(e, (unsigned char *)sig);
}
