// SPDX-License-Identifier: MIT
/* The `jvm` section of `jpbpf info`: what the agent recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records_jvm.h"

struct jvm_state {
	int seen;
	json_t *info;  /* from JPB_REC_JVM_INFO */
	uint64_t codelets, classes, nmethods, unloads, methods, blobs;
	uint64_t inline_records, coarse, threads, pauses, max_pause_ns;
	uint64_t pause_ns, lost, missing;
	uint64_t from_resource, retransformed, rebuilt; /* jvm_class flags */
	uint64_t by_level[6]; /* jvm_nmethod_load level -1..4 */
	uint64_t level_other, osr;
	uint8_t covered[256];
};

static void *jvm_alloc(void)
{
	return calloc(1, sizeof(struct jvm_state));
}

static void jvm_free(void *p)
{
	struct jvm_state *s = p;
	if (s)
		json_decref(s->info);
	free(s);
}

static json_t *strj(struct jpb_str s)
{
	return json_stringn(s.ptr ? s.ptr : "", s.len);
}

/* pcs whose inline stack has more than one frame. */
static uint64_t count_inline(struct jpb_bytes map)
{
	struct jpb_cur c = jpb_cur_init(map.ptr, map.len);
	uint64_t n = 0, pc;
	uint32_t nf;
	while (jpb_cur_u64(&c, &pc) == 0 && jpb_cur_u32(&c, &nf) == 0) {
		if (nf > 1)
			n++;
		if (nf > map.len || jpb_cur_skip(&c, (size_t)nf * 12) != 0)
			break;
	}
	return n;
}

static void on_info(struct jvm_state *s, const struct jpb_rec_jvm_info *r)
{
	json_decref(s->info);
	s->info = json_object();
	json_object_set_new(s->info, "jdk_version", strj(r->jdk_version));
	json_object_set_new(s->info, "vm_name", strj(r->vm_name));
	json_object_set_new(s->info, "pid", json_integer(r->pid));
	json_object_set_new(s->info, "nspid", json_integer(r->nspid));
	json_object_set_new(s->info, "late_attach",
			    json_boolean(r->late_attach));
	json_object_set_new(s->info, "truth",
			    json_boolean(r->flags & JPB_JVM_F_TRUTH));
	json_object_set_new(s->info, "debug_nonsafepoints",
			    json_boolean(r->flags &
					 JPB_JVM_F_DEBUG_NONSAFEPOINTS));
	json_object_set_new(s->info, "coarse_pcmaps",
			    json_boolean(r->flags & JPB_JVM_F_COARSE_PCMAPS));
}

static void jvm_record(void *p, const char *stream,
		       const struct jpb_record *rec)
{
	struct jvm_state *s = p;
	if (strcmp(stream, "jvm") != 0)
		return;
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	union {
		struct jpb_rec_jvm_info info;
		struct jpb_rec_jvm_codelet c;
		struct jpb_rec_jvm_nmethod_load nm;
		struct jpb_rec_jvm_class cls;
		struct jpb_rec_jvm_pause pause;
		struct jpb_rec_loss loss;
	} u;
	s->seen = 1;
	if (!t || jpb_rec_decode(t, rec->payload, rec->size, &u) != 0)
		return;
	switch (rec->type) {
	case JPB_REC_JVM_INFO: on_info(s, &u.info); break;
	case JPB_REC_JVM_CODELET:
		s->codelets++;
		if (u.c.bytecode >= 0 && u.c.bytecode < 256)
			s->covered[u.c.bytecode] = 1;
		break;
	case JPB_REC_JVM_CLASS:
		s->classes++;
		s->from_resource += (u.cls.flags & JPB_CLASS_F_RESOURCE) != 0;
		s->retransformed += (u.cls.flags & JPB_CLASS_F_RETRANSFORM) != 0;
		s->rebuilt += (u.cls.flags & JPB_CLASS_F_REBUILT) != 0;
		break;
	case JPB_REC_JVM_CLASS_MISSING: s->missing++; break;
	case JPB_REC_JVM_METHOD: s->methods++; break;
	case JPB_REC_JVM_CODE_BLOB: s->blobs++; break;
	case JPB_REC_JVM_NMETHOD_UNLOAD: s->unloads++; break;
	case JPB_REC_THREAD: s->threads++; break;
	case JPB_REC_LOSS: s->lost += u.loss.count; break;
	case JPB_REC_JVM_NMETHOD_LOAD:
		s->nmethods++;
		s->coarse += (u.nm.flags & JPB_NM_F_COARSE) != 0;
		s->osr += (u.nm.flags & JPB_NM_F_OSR) != 0;
		if (u.nm.level >= -1 && u.nm.level <= 4)
			s->by_level[u.nm.level + 1]++;
		else
			s->level_other++;
		s->inline_records += count_inline(u.nm.pcmap);
		break;
	case JPB_REC_JVM_PAUSE:
		s->pauses++;
		s->pause_ns += u.pause.duration_ns;
		if (u.pause.duration_ns > s->max_pause_ns)
			s->max_pause_ns = u.pause.duration_ns;
		break;
	}
}

#define SETI(o, k, v) json_object_set_new(o, k, json_integer((json_int_t)(v)))

/* {"-1": n, "0": n, ... "4": n}: levels with no method are left out. */
static json_t *levels_json(const struct jvm_state *s)
{
	json_t *o = json_object();
	for (int i = 0; i < 6; i++) {
		char k[4];
		snprintf(k, sizeof(k), "%d", i - 1);
		if (s->by_level[i])
			SETI(o, k, s->by_level[i]);
	}
	if (s->level_other)
		SETI(o, "other", s->level_other);
	return o;
}

static json_t *jvm_finish(void *p, json_t *meta)
{
	(void)meta;
	struct jvm_state *s = p;
	if (!s->seen)
		return NULL;
	json_t *o = s->info ? json_incref(s->info) : json_object();
	if (!s->info)
		json_object_set_new(o, "jdk_version", json_null());
	unsigned cov = 0;
	for (int i = 0; i < 256; i++)
		cov += s->covered[i];
	SETI(o, "codelets", s->codelets);
	SETI(o, "bytecodes_covered", cov);
	SETI(o, "compiled_methods", s->nmethods);
	SETI(o, "compiled_unloads", s->unloads);
	SETI(o, "coarse_methods", s->coarse);
	json_object_set_new(o, "compiled_by_level", levels_json(s));
	SETI(o, "compiled_level_unknown", s->by_level[0]);
	SETI(o, "compiled_osr", s->osr);
	SETI(o, "inline_records", s->inline_records);
	SETI(o, "methods", s->methods);
	SETI(o, "code_blobs", s->blobs);
	SETI(o, "classes", s->classes);
	SETI(o, "classes_missing", s->missing);
	SETI(o, "classes_from_resources", s->from_resource);
	SETI(o, "classes_retransformed", s->retransformed);
	SETI(o, "classes_rebuilt", s->rebuilt);
	SETI(o, "threads", s->threads);
	SETI(o, "pauses", s->pauses);
	SETI(o, "pause_total_ns", s->pause_ns);
	SETI(o, "pause_max_ns", s->max_pause_ns);
	SETI(o, "lost", s->lost);
	return o;
}

const struct info_section info_section_jvm = {
	"jvm", jvm_alloc, jvm_record, jvm_finish, jvm_free,
};
