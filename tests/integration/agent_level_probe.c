// SPDX-License-Identifier: MIT
/*
 * A test JVMTI agent for agent_level.sh, built at test time with
 * agent/nmethod_level.c and agent/vmstructs.c: for every CompiledMethodLoad
 * it looks up the real code address (must succeed) and addresses that are
 * no nmethod's code begin (inside the method's code, outside every code
 * heap, a wrong size: must all fall back, and the JVM must live), and
 * times the real lookup in thread CPU time.  At VM death it prints one
 * line on stderr:
 *   level_probe: events=N ok=N wrong_ok=N fallbacks=N why=R:N,...
 *                first_ns=N ns=N clock_ns=N in_place=0|1
 * first_ns: the first lookup, which reads the layout from VMStructs;
 * ns: all later ones together; clock_ns: the clock's own cost in them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jvmti.h>

#include "nmethod_level.h"

static uint64_t events, ok, wrong_ok, fallbacks, cpu_ns, clock_ns, first_ns;
static uint64_t why_n[NML_WHY_COUNT];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void wrong(uint64_t addr, uint64_t size)
{
	struct nml_result r;
	int why = nml_lookup(addr, size, &r);
	if (why == NML_OK || r.level != -1) {
		__atomic_add_fetch(&wrong_ok, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "level_probe: %#" PRIx64 " (%" PRIu64
			" bytes) accepted as level %d\n", addr, size, r.level);
		return;
	}
	__atomic_add_fetch(&fallbacks, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&why_n[why], 1, __ATOMIC_RELAXED);
}

static void JNICALL on_load(jvmtiEnv *e, jmethodID m, jint size,
			    const void *addr, jint map_len,
			    const jvmtiAddrLocationMap *map, const void *info)
{
	(void)e; (void)m; (void)map_len; (void)map; (void)info;
	uint64_t a = (uint64_t)(uintptr_t)addr, n = (uint64_t)size;
	struct nml_result r;
	uint64_t t0 = now_ns(), t1 = now_ns();
	int why = nml_lookup(a, n, &r);
	uint64_t t2 = now_ns();
	if (__atomic_fetch_add(&events, 1, __ATOMIC_RELAXED) == 0) {
		first_ns = t2 - t1;
	} else {
		__atomic_add_fetch(&clock_ns, t1 - t0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&cpu_ns, t2 - t1, __ATOMIC_RELAXED);
	}
	if (why == NML_OK && r.level >= 0 && r.level <= 4)
		__atomic_add_fetch(&ok, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&why_n[why], 1, __ATOMIC_RELAXED);
	/* Inside the method's own code: never another nmethod's begin. */
	const uint64_t in[] = { 1, 8, 16, 64, n / 2, n - 1 };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		if (in[i] > 0 && in[i] < n)
			wrong(a + in[i], n - in[i]);
	wrong(a, n + (1u << 30)); /* the code cannot be that long */
	wrong(0, n);
	wrong(1, n);
	wrong(4096, n);
	wrong((uint64_t)(uintptr_t)&r, n); /* the stack */
	wrong((uint64_t)(uintptr_t)&events, n); /* our own data */
	wrong(UINT64_MAX - 4095, n);
}

static void JNICALL on_death(jvmtiEnv *e, JNIEnv *jni)
{
	(void)e; (void)jni;
	char why[256] = "";
	size_t len = 0;
	for (int i = 1; i < NML_WHY_COUNT; i++)
		if (why_n[i] && len < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len,
						"%s%d:%" PRIu64, len ? "," : "",
						i, why_n[i]);
	fprintf(stderr, "level_probe: events=%" PRIu64 " ok=%" PRIu64
		" wrong_ok=%" PRIu64 " fallbacks=%" PRIu64 " why=%s first_ns=%"
		PRIu64 " ns=%" PRIu64 " clock_ns=%" PRIu64 " in_place=%d\n",
		events, ok, wrong_ok, fallbacks, why, first_ns, cpu_ns,
		clock_ns, nml_reads_in_place());
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *opts, void *res)
{
	(void)opts; (void)res;
	jvmtiEnv *e;
	if ((*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_load;
	cb.VMDeath = on_death;
	if ((*e)->AddCapabilities(e, &caps) ||
	    (*e)->SetEventCallbacks(e, &cb, sizeof(cb)) ||
	    (*e)->SetEventNotificationMode(e, JVMTI_ENABLE,
					   JVMTI_EVENT_COMPILED_METHOD_LOAD,
					   NULL) ||
	    (*e)->SetEventNotificationMode(e, JVMTI_ENABLE,
					   JVMTI_EVENT_VM_DEATH, NULL))
		return JNI_ERR;
	return JNI_OK;
}
