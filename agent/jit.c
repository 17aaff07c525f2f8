// SPDX-License-Identifier: MIT
/*
 * Compiled methods and other generated code.  The pc map comes from the
 * JVMTI_CMLR_INLINE_INFO record: for each pc the full inline stack,
 * innermost first, which is what the decoder needs to turn a JIT pc back
 * into bytecode positions.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

#include <jvmticmlr.h>

static __thread int tls_replaying;

/* CPU time, not wall time: the callback's thread may be descheduled. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void jit_set_replaying(int on)
{
	tls_replaying = on;
}

static const jvmtiCompiledMethodLoadInlineRecord *
find_inline(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	for (int guard = 0; h && guard < 64; h = h->next, guard++)
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	return NULL;
}

/* Methods already described, as seen by this nmethod: most pcs repeat
 * the previous pc's frames, and the session-wide table takes a lock. */
struct seen {
	jmethodID m[16];
	unsigned next;
};

static void note_once(struct agent *a, struct seen *s, jmethodID m)
{
	for (unsigned i = 0; i < 16; i++)
		if (s->m[i] == m)
			return;
	methods_note(a, m);
	s->m[s->next++ & 15] = m;
}

/* Encode the pc map; every method it names gets a METHOD record. */
static int encode_pcmap(struct agent *a,
			const jvmtiCompiledMethodLoadInlineRecord *r,
			struct jpb_buf *b)
{
	struct seen seen = { { 0 }, 0 };
	/* 12 bytes per pc and per frame: one allocation for most maps. */
	if (r && r->numpcs > 0 &&
	    jpb_buf_reserve(b, (size_t)r->numpcs * 12 * 3) != 0)
		return -1;
	for (jint i = 0; r && i < r->numpcs; i++) {
		const PCStackInfo *pc = &r->pcinfo[i];
		jint n = pc->numstackframes > 0 ? pc->numstackframes : 0;
		if (jpb_buf_u64(b, (uint64_t)(uintptr_t)pc->pc) ||
		    jpb_buf_u32(b, (uint32_t)n))
			return -1;
		for (jint k = 0; k < n; k++) {
			note_once(a, &seen, pc->methods[k]);
			if (jpb_buf_u64(b, (uint64_t)(uintptr_t)pc->methods[k]) ||
			    jpb_buf_u32(b, (uint32_t)pc->bcis[k]))
				return -1;
		}
	}
	return 0;
}

void JNICALL jit_on_load(jvmtiEnv *e, jmethodID m, jint size,
			 const void *addr, jint map_len,
			 const jvmtiAddrLocationMap *map,
			 const void *compile_info)
{
	(void)e;
	(void)map_len;
	(void)map;
	struct agent *a = agent_get();
	if (!a || a->stopped || size < 0 || !addr)
		return;
	uint64_t now = agent_now(), cpu0 = thread_cpu_ns();
	methods_note(a, m);
	struct jpb_buf pcmap = { 0 };
	uint32_t flags = 0;
	if (encode_pcmap(a, find_inline(compile_info), &pcmap) != 0) {
		aq_note(&a->q, JPB_NOTE_WARN, "nmethod %p: pc map lost (no memory)",
			addr);
		jpb_buf_reset(&pcmap);
	}
	if (tls_replaying) {
		flags |= JPB_NM_F_REPLAY;
		if (!a->debug_nonsafepoints)
			flags |= JPB_NM_F_COARSE;
	}
	struct jpb_rec_jvm_nmethod_load r = {
		.method_id = (uint64_t)(uintptr_t)m,
		.code_addr = (uint64_t)(uintptr_t)addr,
		.code_size = (uint64_t)size,
		.flags = flags,
		.level = -1,
		.code = { a->opts.no_code ? NULL : addr,
			  a->opts.no_code ? 0 : (uint32_t)size },
		.pcmap = { pcmap.data, (uint32_t)pcmap.len },
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_NMETHOD_LOAD, now, &r);
	__atomic_add_fetch(&a->n_nmethods, 1, __ATOMIC_RELAXED);
	jpb_buf_fini(&pcmap);
	__atomic_add_fetch(&a->jit_ns, thread_cpu_ns() - cpu0, __ATOMIC_RELAXED);
}

void JNICALL jit_on_unload(jvmtiEnv *e, jmethodID m, const void *addr)
{
	(void)e;
	struct agent *a = agent_get();
	if (!a || a->stopped)
		return;
	struct jpb_rec_jvm_nmethod_unload r = {
		(uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)addr
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_NMETHOD_UNLOAD, agent_now(), &r);
}

void JNICALL jit_on_dynamic(jvmtiEnv *e, const char *name, const void *addr,
			    jint length)
{
	(void)e;
	struct agent *a = agent_get();
	if (!a || a->stopped || length < 0 || !addr)
		return;
	struct jpb_rec_jvm_code_blob r = {
		.kind = JPB_BLOB_DYNAMIC,
		.start = (uint64_t)(uintptr_t)addr,
		.size = (uint64_t)length,
		.name = jpb_str_c(name),
		.code = { addr, (uint32_t)length },
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_CODE_BLOB, agent_now(), &r);
	__atomic_add_fetch(&a->n_blobs, 1, __ATOMIC_RELAXED);
}
