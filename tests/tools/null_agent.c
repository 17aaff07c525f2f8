// SPDX-License-Identifier: MIT
/*
 * null_agent.so: a JVMTI agent that does a chosen part of what jpbpf's
 * agent makes HotSpot do at start-up, and nothing of its own, so that
 * bench/fig-agent-overhead can split the agent's slowdown (docs/BENCH.md,
 * Agent overhead, the ablation):
 *   -agentpath:null_agent.so=caps    the capabilities agent/agent.c takes
 *                                    at start-up; no event enabled
 *   -agentpath:null_agent.so=events  also the events it enables, each with
 *                                    an empty callback
 *   -agentpath:null_agent.so=inline  like events, but CompiledMethodLoad
 *                                    reads every JVMTI_CMLR_INLINE_INFO
 *                                    frame (pc, method, bci) and no more
 * A second option, "count" (e.g. "inline,count"), makes the callbacks
 * count what they see and prints the counts and the capabilities held at
 * VMDeath on stderr, for tests; the bench never passes it, so its
 * callbacks stay empty.  A bad option fails the JVM's start (JNI_ERR).
 *
 * Built without sanitizers in every build: it runs inside a JVM, where
 * ASan's runtime cannot be preloaded sanely (Makefile).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>
#include <jvmticmlr.h>

/* By its path from this file: the rule for test agents has no -I. */
#include "../../agent/agent_events.h"

#define EXPORT __attribute__((visibility("default")))

enum mode { M_CAPS, M_EVENTS, M_INLINE };

/* Reached from callbacks through the environment's local storage: JVMTI
 * callbacks carry no context pointer of their own. */
struct null_agent {
	enum mode mode;
	int count;
	/* count mode only; updated from any thread. */
	uint64_t n_load, n_unload, n_dynamic, n_hook, n_prepare, n_thread;
	uint64_t n_pcs, n_frames;
	/* Where the inline walk leaves what it read, so it is not elided. */
	uint64_t sink;
};

static void add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static struct null_agent *state(jvmtiEnv *e)
{
	void *p = NULL;
	(*e)->GetEnvironmentLocalStorage(e, &p);
	return p;
}

/* ---- empty callbacks: the events mode, and the inline mode's others */

static void JNICALL nop_load(jvmtiEnv *e, jmethodID m, jint size,
			     const void *addr, jint n, const jvmtiAddrLocationMap *map,
			     const void *info)
{
	(void)e, (void)m, (void)size, (void)addr, (void)n, (void)map, (void)info;
}

static void JNICALL nop_unload(jvmtiEnv *e, jmethodID m, const void *addr)
{
	(void)e, (void)m, (void)addr;
}

static void JNICALL nop_dynamic(jvmtiEnv *e, const char *name,
				const void *addr, jint len)
{
	(void)e, (void)name, (void)addr, (void)len;
}

static void JNICALL nop_hook(jvmtiEnv *e, JNIEnv *jni, jclass redefined,
			     jobject loader, const char *name, jobject pd,
			     jint len, const unsigned char *data, jint *new_len,
			     unsigned char **new_data)
{
	(void)e, (void)jni, (void)redefined, (void)loader, (void)name, (void)pd;
	(void)len, (void)data, (void)new_len, (void)new_data;
}

static void JNICALL nop_class(jvmtiEnv *e, JNIEnv *jni, jthread t, jclass c)
{
	(void)e, (void)jni, (void)t, (void)c;
}

static void JNICALL nop_thread(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)e, (void)jni, (void)t;
}

/* VMDeath's and VMStart's */
static void JNICALL nop_death(jvmtiEnv *e, JNIEnv *jni)
{
	(void)e, (void)jni;
}

/* ---- the inline walk ---------------------------------------------- */

/* Reads every frame of the inline records as jit.c's encoder does (the
 * loads, not the encoding); returns the frames read. */
static uint64_t walk_inline(const void *info, uint64_t *pcs, uint64_t *sum)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = info;
	uint64_t frames = 0;
	for (int guard = 0; h && guard < 64; h = h->next, guard++) {
		if (h->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		const jvmtiCompiledMethodLoadInlineRecord *r =
			(const jvmtiCompiledMethodLoadInlineRecord *)h;
		for (jint i = 0; i < r->numpcs; i++) {
			const PCStackInfo *pc = &r->pcinfo[i];
			*sum += (uint64_t)(uintptr_t)pc->pc;
			for (jint k = 0; k < pc->numstackframes; k++)
				*sum += (uint64_t)(uintptr_t)pc->methods[k] +
					(uint64_t)pc->bcis[k];
			frames += pc->numstackframes > 0 ? (uint64_t)pc->numstackframes : 0;
		}
		*pcs += (uint64_t)r->numpcs;
	}
	return frames;
}

static void JNICALL inline_load(jvmtiEnv *e, jmethodID m, jint size,
				const void *addr, jint n,
				const jvmtiAddrLocationMap *map, const void *info)
{
	(void)m, (void)size, (void)addr, (void)n, (void)map;
	struct null_agent *a = state(e);
	uint64_t pcs = 0, sum = 0;
	uint64_t frames = walk_inline(info, &pcs, &sum);
	if (!a)
		return;
	__atomic_store_n(&a->sink, sum, __ATOMIC_RELAXED);
	if (a->count) {
		add(&a->n_load, 1);
		add(&a->n_pcs, pcs);
		add(&a->n_frames, frames);
	}
}

/* ---- counting callbacks (count mode) ------------------------------- */

static void JNICALL count_load(jvmtiEnv *e, jmethodID m, jint size,
			       const void *addr, jint n,
			       const jvmtiAddrLocationMap *map, const void *info)
{
	(void)m, (void)size, (void)addr, (void)n, (void)map, (void)info;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_load, 1);
}

static void JNICALL count_unload(jvmtiEnv *e, jmethodID m, const void *addr)
{
	(void)m, (void)addr;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_unload, 1);
}

static void JNICALL count_dynamic(jvmtiEnv *e, const char *name,
				  const void *addr, jint len)
{
	(void)name, (void)addr, (void)len;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_dynamic, 1);
}

static void JNICALL count_hook(jvmtiEnv *e, JNIEnv *jni, jclass redefined,
			       jobject loader, const char *name, jobject pd,
			       jint len, const unsigned char *data,
			       jint *new_len, unsigned char **new_data)
{
	(void)jni, (void)redefined, (void)loader, (void)name, (void)pd;
	(void)len, (void)data, (void)new_len, (void)new_data;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_hook, 1);
}

static void JNICALL count_prepare(jvmtiEnv *e, JNIEnv *jni, jthread t,
				  jclass c)
{
	(void)jni, (void)t, (void)c;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_prepare, 1);
}

static void JNICALL count_thread(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)jni, (void)t;
	struct null_agent *a = state(e);
	if (a)
		add(&a->n_thread, 1);
}

static const char *const mode_names[] = { "caps", "events", "inline" };

static void report(jvmtiEnv *e, const struct null_agent *a)
{
	jvmtiCapabilities c;
	memset(&c, 0, sizeof(c));
	(*e)->GetCapabilities(e, &c);
	fprintf(stderr,
		"null_agent: %s: compiled_method_load %llu, unload %llu, "
		"dynamic_code %llu, class_file_load_hook %llu, class_prepare "
		"%llu, thread_start_end %llu, inline_pcs %llu, inline_frames "
		"%llu; capabilities: can_compiled_method_load %u, "
		"can_all_class_hook %u, can_early_class_hook %u, "
		"can_get_bytecodes %u, can_retransform %u\n",
		mode_names[a->mode], (unsigned long long)a->n_load,
		(unsigned long long)a->n_unload, (unsigned long long)a->n_dynamic,
		(unsigned long long)a->n_hook, (unsigned long long)a->n_prepare,
		(unsigned long long)a->n_thread, (unsigned long long)a->n_pcs,
		(unsigned long long)a->n_frames,
		c.can_generate_compiled_method_load_events,
		c.can_generate_all_class_hook_events,
		c.can_generate_early_class_hook_events, c.can_get_bytecodes,
		c.can_retransform_classes);
}

static void JNICALL count_death(jvmtiEnv *e, JNIEnv *jni)
{
	(void)jni;
	struct null_agent *a = state(e);
	if (a)
		report(e, a);
}

/* ---- set-up ---------------------------------------------------------- */

/* The agent's own, for one loaded at start-up without truth mode. */
static int add_capabilities(jvmtiEnv *e)
{
	jvmtiCapabilities pot, want;
	if ((*e)->GetPotentialCapabilities(e, &pot) != JVMTI_ERROR_NONE)
		return -1;
	agent_base_caps(&pot, &want);
	return (*e)->AddCapabilities(e, &want) == JVMTI_ERROR_NONE ? 0 : -1;
}

static void set_callbacks(const struct null_agent *a, jvmtiEventCallbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	int c = a->count;
	cb->VMStart = nop_death;
	cb->VMInit = c ? count_thread : nop_thread;
	cb->VMDeath = c ? count_death : nop_death;
	cb->ThreadStart = c ? count_thread : nop_thread;
	cb->ThreadEnd = c ? count_thread : nop_thread;
	cb->ClassFileLoadHook = c ? count_hook : nop_hook;
	cb->ClassPrepare = c ? count_prepare : nop_class;
	cb->CompiledMethodLoad = a->mode == M_INLINE ? inline_load :
				 c ? count_load : nop_load;
	cb->CompiledMethodUnload = c ? count_unload : nop_unload;
	cb->DynamicCodeGenerated = c ? count_dynamic : nop_dynamic;
}

static int enable_events(jvmtiEnv *e, const struct null_agent *a)
{
	jvmtiEventCallbacks cb;
	set_callbacks(a, &cb);
	if ((*e)->SetEventCallbacks(e, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE)
		return -1;
	/* An event the agent adds needs a callback in set_callbacks() too. */
	for (size_t i = 0; i < AGENT_N_BASE_EVENTS; i++)
		if ((*e)->SetEventNotificationMode(e, JVMTI_ENABLE,
						   agent_base_events[i],
						   NULL) != JVMTI_ERROR_NONE)
			return -1;
	return 0;
}

/* The caps mode's report in count mode: VMDeath alone, which costs the
 * JVM nothing until it exits. */
static int enable_death_only(jvmtiEnv *e)
{
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMDeath = count_death;
	if ((*e)->SetEventCallbacks(e, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE)
		return -1;
	return (*e)->SetEventNotificationMode(e, JVMTI_ENABLE,
					      JVMTI_EVENT_VM_DEATH, NULL) ==
			       JVMTI_ERROR_NONE ? 0 : -1;
}

/* "MODE[,count]" */
static int parse(struct null_agent *a, const char *opts)
{
	char buf[64];
	if (!opts || strlen(opts) >= sizeof(buf))
		return -1;
	strcpy(buf, opts);
	char *count = strchr(buf, ',');
	if (count) {
		*count++ = 0;
		if (strcmp(count, "count") != 0)
			return -1;
		a->count = 1;
	}
	for (int m = M_CAPS; m <= M_INLINE; m++)
		if (!strcmp(buf, mode_names[m])) {
			a->mode = (enum mode)m;
			return 0;
		}
	return -1;
}

static jint fail(const char *what, const char *opts)
{
	fprintf(stderr, "null_agent: %s (options '%s'; want caps, events or "
		"inline, optionally followed by ,count)\n", what,
		opts ? opts : "");
	return JNI_ERR;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options,
					   void *reserved)
{
	(void)reserved;
	struct null_agent *a = calloc(1, sizeof(*a));
	jvmtiEnv *e = NULL;
	if (!a)
		return fail("out of memory", options);
	if (parse(a, options) != 0) {
		free(a);
		return fail("bad options", options);
	}
	/* On failure A is left to the JVM's exit: the environment may
	 * already hold it. */
	if ((*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_1_2) != JNI_OK)
		return fail("JVMTI 1.2 not available", options);
	if ((*e)->SetEnvironmentLocalStorage(e, a) != JVMTI_ERROR_NONE ||
	    add_capabilities(e) != 0)
		return fail("cannot take the agent's capabilities", options);
	if (a->mode == M_CAPS) {
		/* No event, but count mode still wants its report. */
		if (a->count && enable_death_only(e) != 0)
			return fail("cannot enable VMDeath", options);
		return JNI_OK;
	}
	if (enable_events(e, a) != 0)
		return fail("cannot enable the agent's events", options);
	return JNI_OK;
}
