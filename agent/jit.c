// SPDX-License-Identifier: MIT
/*
 * Compiled methods and other generated code.  The pc map comes from the
 * JVMTI_CMLR_INLINE_INFO record: for each pc the full inline stack,
 * innermost first, which is what the decoder needs to turn a JIT pc back
 * into bytecode positions.
 */
#include <stddef.h>
#include <string.h>

#include "agent.h"

#include <jvmticmlr.h>

static __thread int tls_replaying;

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

/* Bytes of the pc map (docs/FORMAT.md, jvm_nmethod_load): a u64 pc and a
 * u32 frame count per pc, a u64 method and a u32 bci per frame. */
static size_t pcmap_size(const jvmtiCompiledMethodLoadInlineRecord *r)
{
	size_t n = 0;
	for (jint i = 0; r && i < r->numpcs; i++) {
		jint f = r->pcinfo[i].numstackframes;
		n += 12 + (f > 0 ? (size_t)f * 12 : 0);
	}
	return n;
}

static jint frames(const PCStackInfo *pc)
{
	return pc->numstackframes > 0 ? pc->numstackframes : 0;
}

/* Whether frame K of PC (innermost first) is the frame at the same depth
 * from the outermost in PREV: consecutive pcs mostly share their outer
 * frames, whose methods were described at the previous pc. */
static int seen_at_prev(const PCStackInfo *prev, const PCStackInfo *pc,
			jint k)
{
	if (!prev)
		return 0;
	jint j = k + frames(prev) - frames(pc);
	return j >= 0 && j < frames(prev) && prev->methods[j] == pc->methods[k];
}

/* Encode the pc map into OUT, pcmap_size(r) bytes, with plain stores: the
 * map is most of what a CompiledMethodLoad costs the agent.  Every method
 * it names gets a METHOD record; only those not at the previous pc are
 * asked for (about 130 frames per nmethod name 5 methods, javac loop). */
static void encode_pcmap(struct agent *a,
			 const jvmtiCompiledMethodLoadInlineRecord *r,
			 uint8_t *out)
{
	const PCStackInfo *prev = NULL;
	for (jint i = 0; r && i < r->numpcs; i++) {
		const PCStackInfo *pc = &r->pcinfo[i];
		jint n = frames(pc);
		jpb_st64(out, (uint64_t)(uintptr_t)pc->pc);
		jpb_st32(out + 8, (uint32_t)n);
		out += 12;
		for (jint k = 0; k < n; k++, out += 12) {
			if (!seen_at_prev(prev, pc, k))
				methods_note(a, pc->methods[k]);
			jpb_st64(out, (uint64_t)(uintptr_t)pc->methods[k]);
			jpb_st32(out + 8, (uint32_t)pc->bcis[k]);
		}
		prev = pc;
	}
}

/* Encode R and its pc map straight into a queue buffer sized once: the
 * map is the record's last field, a BYTES (u32 length, then the bytes;
 * docs/FORMAT.md), so R goes in with an empty map whose length is then
 * set, and the map is written behind it.  One allocation and one copy of
 * the code bytes per nmethod; the map was built in a buffer of its own
 * and copied before. */
static int map_is_last(const struct jpb_rectype *t)
{
	const struct jpb_field *f = t ? &t->fields[t->nfields - 1] : NULL;
	return f && f->kind == JPB_F_BYTES &&
	       f->offset == offsetof(struct jpb_rec_jvm_nmethod_load, pcmap);
}

static int put_nmethod(struct agent *a, uint64_t now,
		       struct jpb_rec_jvm_nmethod_load *r,
		       const jvmtiCompiledMethodLoadInlineRecord *inl)
{
	const struct jpb_rectype *t = jpb_rectype_find(JPB_REC_JVM_NMETHOD_LOAD);
	size_t map_size = pcmap_size(inl);
	struct jpb_buf b = { 0 };
	r->pcmap = (struct jpb_bytes){ NULL, 0 };
	/* A layout that moved the map would lose every nmethod, loudly (a
	 * loss record, no compiled code), rather than write a wrong one. */
	if (!map_is_last(t) || map_size >= UINT32_MAX ||
	    aq_buf_init(&a->q, &b, 64 + (size_t)r->code.len + map_size) ||
	    jpb_rec_encode(t, r, &b) || jpb_buf_reserve(&b, map_size)) {
		jpb_buf_fini(&b);
		aq_drop(&a->q, AS_JVM, now);
		return -1;
	}
	jpb_st32(b.data + b.len - 4, (uint32_t)map_size);
	encode_pcmap(a, inl, b.data + b.len);
	b.len += map_size;
	aq_put_buf(&a->q, AS_JVM, JPB_REC_JVM_NMETHOD_LOAD, now, &b);
	return 0;
}

/* The entry bci of an OSR compile follows its load record (FORMAT.md,
 * jvm_nmethod_osr): not a field of it, which old bundles lack. */
static void put_osr(struct agent *a, uint64_t now,
		    const struct jpb_rec_jvm_nmethod_load *r, int32_t bci)
{
	struct jpb_rec_jvm_nmethod_osr o = {
		.method_id = r->method_id,
		.code_addr = r->code_addr,
		.entry_bci = bci,
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_NMETHOD_OSR, now, &o);
}

/* The first callback read the level layout before it moved to VMInit
 * (docs/AGENT.md, "Compile level"): its CPU says whether it still does. */
static void note_first(struct agent *a, uint64_t spent)
{
	uint64_t none = 0;
	if (__atomic_compare_exchange_n(&a->nml.first_callback_ns, &none,
					spent ? spent : 1, 0, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		aq_note(&a->q, JPB_NOTE_INFO,
			"first CompiledMethodLoad callback: %.3f ms of CPU",
			(double)spent / 1e6);
}

/* Each CPU clock read is a system call (no vDSO for thread clocks:
 * ~0.5 us here), two of them were a tenth of a callback's ~10 us; the
 * account times the first callback and every JIT_TIME_EVERY-th and
 * scales (agent.c, put_summary). */
#define JIT_TIME_EVERY 8

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
	uint64_t idx = __atomic_fetch_add(&a->n_nmethods, 1, __ATOMIC_RELAXED);
	int timed = idx % JIT_TIME_EVERY == 0;
	uint64_t now = agent_now(), cpu0 = timed ? agent_thread_cpu_ns() : 0;
	methods_note(a, m);
	uint32_t flags = 0;
	if (tls_replaying) {
		flags |= JPB_NM_F_REPLAY;
		if (!a->debug_nonsafepoints)
			flags |= JPB_NM_F_COARSE;
	}
	if (a->coarse_pcmaps)
		flags |= JPB_NM_F_COARSE;
	int32_t osr_bci;
	int level = nml_level_for(a, addr, size, &flags, &osr_bci);
	struct jpb_rec_jvm_nmethod_load r = {
		.method_id = (uint64_t)(uintptr_t)m,
		.code_addr = (uint64_t)(uintptr_t)addr,
		.code_size = (uint64_t)size,
		.flags = flags,
		.level = level,
		.code = { a->opts.no_code ? NULL : addr,
			  a->opts.no_code ? 0 : (uint32_t)size },
	};
	if (put_nmethod(a, now, &r, find_inline(compile_info)) == 0 &&
	    (flags & JPB_NM_F_OSR))
		put_osr(a, now, &r, osr_bci);
	if (!timed)
		return;
	uint64_t spent = agent_thread_cpu_ns() - cpu0;
	__atomic_add_fetch(&a->jit_ns, spent, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->n_jit_timed, 1, __ATOMIC_RELAXED);
	note_first(a, spent);
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
