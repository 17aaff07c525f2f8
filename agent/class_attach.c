// SPDX-License-Identifier: MIT
/*
 * The class files of the classes loaded before a late attach
 * (docs/AGENT.md, "Late attach"), or, at VMInit, of those loaded before
 * the hook posts (the primordial phase: the agent does not ask for early
 * hook events, which would turn CDS off).  RetransformClasses would pass
 * them to the hook, but every call stops the JVM at a safepoint that walks all
 * loaded classes and deoptimizes dependent code (on JDK 17 the first call
 * deoptimizes all of it).  So each class's file is first read back from
 * its loader's resources and checked against the loaded class
 * (class_resource.c), in this thread and with no safepoint.  What that
 * cannot give (classes defined from bytes made at run time, classes
 * changed at load) is rebuilt from JVMTI (class_rebuild.c), also without
 * a safepoint, by default; retransform=auto retransforms them instead and
 * retransform=always every class, each call a jvm_pause record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

struct attach_stats {
	jint loaded;
	uint64_t resource, deferred, failed, noted;
	uint64_t hooked;     /* the hook delivered them: skipped */
	uint64_t jimage;     /* of the resources, read from the runtime image */
	int use_pending;     /* unprepared classes wait for ClassPrepare */
	uint64_t why[CR_COUNT]; /* CR_OK: from resources; others: left over */
	uint64_t rebuilt, rebuild_later, rb_why[RB_COUNT];
	uint64_t unmod[2][2]; /* [rebuilt][hidden]: not modifiable classes */
	uint64_t unmod_cpu_ns;
	uint64_t res_ns, res_cpu_ns, rb_cpu_ns;
};

static uint64_t loader_of(jvmtiEnv *e, JNIEnv *jni, jclass k)
{
	jobject loader = NULL;
	if ((*e)->GetClassLoader(e, k, &loader) != JVMTI_ERROR_NONE)
		loader = NULL;
	uint64_t id = classes_loader_id(e, loader);
	if (loader)
		(*jni)->DeleteLocalRef(jni, loader);
	return id;
}

static const char *mode_str(int mode)
{
	return mode == RT_NEVER ? "never" : mode == RT_AUTO ? "auto" : "always";
}

/* K's resource is not used (RC says why): rebuild it, or leave it to
 * RetransformClasses (returns 0). */
static int leftover(struct agent *a, JNIEnv *jni, jclass k, const char *sig,
		    uint64_t loader, int rc, struct attach_stats *st)
{
	size_t len;
	const char *name = classes_sig_name(sig, &len);
	st->why[rc]++;
	if (agent_rt_mode(a) != RT_NEVER) {
		if (st->noted++ < 8)
			aq_note(&a->q, JPB_NOTE_INFO, "class %.*s: resource not "
				"used (%s): retransformed", (int)len, name,
				class_res_strs[rc]);
		return 0;
	}
	uint64_t c0 = agent_thread_cpu_ns();
	int rb = class_rebuild_put(a, jni, k, sig, loader, class_res_strs[rc]);
	st->rb_cpu_ns += agent_thread_cpu_ns() - c0;
	st->rebuilt += rb == RB_OK;
	st->rb_why[rb]++;
	if (st->noted++ < 8)
		aq_note(&a->q, JPB_NOTE_INFO, "class %.*s: resource not used "
			"(%s): %s%s", (int)len, name, class_res_strs[rc],
			rb == RB_OK ? "rebuilt from JVMTI" : "not rebuilt: ",
			rb == RB_OK ? "" : class_rebuild_strs[rb]);
	return 1;
}

/* K's class file into *DATA, checked against K (fully if METHODS): a
 * boot-loader class from the runtime image in C first, else through its
 * loader (-Xbootclasspath/a, a patched module, other loaders). */
static int read_checked(struct agent *a, struct class_res *r, jclass k,
			const char *name, size_t len, uint64_t loader,
			int methods, uint8_t **data, size_t *size,
			struct attach_stats *st)
{
	int rc = loader == 0 ? class_res_read_jimage(r, name, len, data, size)
			     : CR_NOT_TRIED;
	if (rc == CR_OK)
		rc = class_res_match(a->jvmti, k, name, len, *data, *size,
				     methods);
	if (rc == CR_OK) {
		st->jimage++;
		return CR_OK;
	}
	free(*data);
	*data = NULL;
	rc = r->jni ? class_res_read(r, k, name, len, data, size)
		    : CR_NOT_TRIED;
	if (rc == CR_OK)
		rc = class_res_match(a->jvmti, k, name, len, *data, *size,
				     methods);
	return rc;
}

/* 1 if K's class file was read from its loader, rebuilt, or will be dealt
 * with when K is prepared; 0 if K is left to RetransformClasses. */
static int from_resource(struct agent *a, struct class_res *r, JNIEnv *jni,
			 jclass k, const char *sig, struct attach_stats *st)
{
	jvmtiEnv *e = a->jvmti;
	uint8_t *data = NULL;
	size_t len, size = 0;
	const char *name = classes_sig_name(sig, &len);
	int never = agent_rt_mode(a) == RT_NEVER;
	uint64_t loader = loader_of(e, jni, k);
	int pending = st->use_pending &&
		      class_pending_begin(a, k, name, len, loader) == 0;
	int rc = read_checked(a, r, k, name, len, loader, !pending, &data,
			      &size, st);
	if (pending && class_pending_end(a, name, len, loader,
					  rc == CR_OK ? data : NULL, size,
					  never)) {
		if (rc != CR_OK)
			free(data);
		st->deferred += rc == CR_OK;
		st->rebuild_later += rc != CR_OK;
		return 1;
	}
	if (pending && rc == CR_OK) /* prepared meanwhile: check it all */
		rc = class_res_match(e, k, name, len, data, size, 1);
	if (rc == CR_OK) {
		classes_put(a, JPB_CLASS_F_RESOURCE, loader, name, len, data,
			    size);
		st->why[CR_OK]++;
	}
	free(data);
	return rc == CR_OK || leftover(a, jni, k, sig, loader, rc, st);
}

/* A class the JVM does not let us retransform: a hidden class (its
 * JVMTI name has a '.', which no other internal name has), or one the
 * JVM keeps unmodifiable (jdk/internal/vm/Continuation on 25).  Rebuilt
 * from JVMTI in every retransform= mode, once prepared (ClassPrepare
 * deals with the others). */
static void put_unmodifiable(struct agent *a, JNIEnv *jni, jclass k,
			     const char *sig, struct attach_stats *st)
{
	jint status = 0;
	if ((*a->jvmti)->GetClassStatus(a->jvmti, k, &status) !=
		    JVMTI_ERROR_NONE ||
	    !(status & JVMTI_CLASS_STATUS_PREPARED))
		return;
	int hidden = strchr(sig, '.') != NULL;
	uint64_t c0 = agent_thread_cpu_ns();
	int rb = class_rebuild_put(a, jni, k, sig, loader_of(a->jvmti, jni, k),
				   hidden ? "not modifiable: no retransform "
					    "(hidden class)"
					  : "not modifiable: no retransform");
	st->unmod_cpu_ns += agent_thread_cpu_ns() - c0;
	st->unmod[rb == RB_OK][hidden]++;
}

/* 1 if K is left to RetransformClasses. */
static int take_class(struct agent *a, struct class_res *r, JNIEnv *jni,
		      jclass k, struct attach_stats *st)
{
	jvmtiEnv *e = a->jvmti;
	char *sig = NULL;
	size_t len;
	jboolean modifiable = JNI_FALSE;
	if ((*e)->GetClassSignature(e, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return 0;
	const char *name = classes_sig_name(sig, &len);
	int left = 0;
	if (!name) {
		/* arrays and primitives have no class file */
	} else if (hset_has_name(a->class_names, name, len)) {
		/* The hook (or ClassPrepare) has it: it finished before the
		 * class was loaded, so before GetLoadedClasses listed it. */
		st->hooked++;
	} else if (((*e)->IsModifiableClass(e, k, &modifiable) !=
			    JVMTI_ERROR_NONE ||
		    !modifiable) &&
		   (strchr(sig, '.') || agent_rt_mode(a) != RT_NEVER)) {
		/* With retransform=never nothing is retransformed: a
		 * non-hidden one may still come from its resource. */
		put_unmodifiable(a, jni, k, sig, st);
	} else {
		left = !from_resource(a, r, jni, k, sig, st);
	}
	(*e)->Deallocate(e, (unsigned char *)sig);
	return left;
}

/* Write what resources give; keep the classes left to retransform at
 * the front of CS and return their number. */
static jint take_classes(struct agent *a, JNIEnv *jni, jclass *cs, jint n,
			 struct attach_stats *st)
{
	struct class_res r;
	uint64_t t0 = agent_now(), c0 = agent_thread_cpu_ns();
	int mode = agent_rt_mode(a);
	int res = !a->opts.no_resource && mode != RT_ALWAYS;
	class_res_init(&r, res ? jni : NULL, res ? a->jvmti : NULL);
	st->use_pending = a->pending && (r.jni || r.jimage || mode == RT_NEVER);
	jint k = 0;
	for (jint i = 0; i < n; i++) {
		if (!a->stopped && take_class(a, &r, jni, cs[i], st))
			cs[k++] = cs[i];
		else if (jni)
			(*jni)->DeleteLocalRef(jni, cs[i]);
	}
	class_res_fini(&r);
	st->resource = st->why[CR_OK];
	st->res_ns = agent_now() - t0;
	st->res_cpu_ns = agent_thread_cpu_ns() - c0;
	return k;
}

static void put_pause(struct agent *a, uint32_t items, uint64_t ns)
{
	struct jpb_rec_jvm_pause p = { jpb_str_c("retransform"), items, 0, ns };
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_PAUSE, agent_now(), &p);
	a->n_retransform_batches++;
	a->total_pause_ns += ns;
	if (ns > a->max_pause_ns)
		a->max_pause_ns = ns;
}

/* Retransform one batch, splitting it if the JVM rejects a class in it,
 * so one bad class costs only itself. */
static void retransform(struct agent *a, jclass *cs, jint n, uint64_t *failed)
{
	jvmtiEnv *e = a->jvmti;
	uint64_t t0 = agent_now();
	jvmtiError err = (*e)->RetransformClasses(e, n, cs);
	put_pause(a, (uint32_t)n, agent_now() - t0);
	if (err == JVMTI_ERROR_NONE)
		return;
	if (n == 1) {
		(*failed)++;
		return;
	}
	retransform(a, cs, n / 2, failed);
	retransform(a, cs + n / 2, n - n / 2, failed);
}

/* Batch sizes for batch_ms=N: aim each call at N ms from the previous
 * call's per-class cost. */
static jint next_batch(struct agent *a, uint64_t dt, jint k)
{
	uint64_t target = (uint64_t)a->opts.batch_ms * 1000000u;
	uint64_t next = target / (dt / (uint64_t)k + 1);
	return (jint)(next < 64 ? 64 : next > 4096 ? 4096 : next);
}

/* can_retransform_classes is taken at attach (agent.c) although most
 * attaches no longer retransform: AddCapabilities refuses it later, in
 * the live phase (JDK 17, tried here).
 *
 * One RetransformClasses call for all classes by default.  Every call
 * stops the JVM once and pays costs that do not shrink with the batch:
 * HotSpot walks every loaded class to fix up constant-pool caches and
 * vtables, and deoptimizes the compiled code that depends on the batch
 * (on JDK 17 the first call deoptimizes all of it).  Small batches thus
 * multiply the total stop time and keep the JIT recompiling: measured
 * here, 429 calls of ~5 classes never finished within 25 s of a javac
 * workload, while one call stops it once (docs/AGENT.md). */
static void retransform_loaded(struct agent *a, jclass *cs, jint n,
			       uint64_t *failed)
{
	jint batch = a->opts.batch_ms > 0 ? 64 : n;
	for (jint i = 0; i < n && !a->stopped;) {
		jint k = n - i < batch ? n - i : batch;
		uint64_t t0 = agent_now();
		retransform(a, cs + i, k, failed);
		i += k;
		if (a->opts.batch_ms > 0)
			batch = next_batch(a, agent_now() - t0, k);
	}
}

/* "what n, what n" for the nonzero counts, or "none". */
static void list_counts(char *buf, size_t size, const uint64_t *n,
			const char *const *strs, int from, int count)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = from; i < count && off < size; i++)
		if (n[i])
			off += (size_t)snprintf(buf + off, size - off, "%s%s %llu",
						off ? ", " : "", strs[i],
						(unsigned long long)n[i]);
	if (!buf[0])
		snprintf(buf, size, "none");
}

static void put_summary(struct agent *a, const struct attach_stats *st,
			jint left, uint64_t n_def, uint64_t n_drained)
{
	char why[512], rb[512], what[128];
	list_counts(why, sizeof(why), st->why, class_res_strs, CR_OK + 1,
		    CR_COUNT);
	list_counts(rb, sizeof(rb), st->rb_why, class_rebuild_strs, RB_OK + 1,
		    RB_COUNT);
	if (a->late_attach)
		snprintf(what, sizeof(what), "classes on attach (retransform=%s)",
			 mode_str(a->opts.retransform));
	else
		snprintf(what, sizeof(what), "classes loaded before "
			 "ClassFileLoadHook posts, caught up at VMInit");
	aq_note(&a->q, JPB_NOTE_INFO,
		"%s: %d loaded, %llu delivered by the hook, %llu prepared "
		"meanwhile (%llu of them recorded after), %llu from "
		"their loaders' resources (%.1f ms, %.1f ms CPU, no pause; "
		"%llu read from the runtime image in C), "
		"%llu more read and checked when prepared; not from resources "
		"(%s): %llu rebuilt from JVMTI (tables from HotSpot metadata) "
		"(%.1f ms CPU, no pause), %llu more to rebuild when prepared, "
		"not rebuilt: %s; %d retransformed in %llu RetransformClasses "
		"calls, longest %.2f ms, total %.1f ms, %llu failed; not "
		"modifiable: %llu rebuilt from JVMTI (%llu hidden, %.1f ms "
		"CPU), %llu not rebuilt (%llu hidden)",
		what, (int)st->loaded, (unsigned long long)st->hooked,
		(unsigned long long)n_def, (unsigned long long)n_drained,
		(unsigned long long)st->resource, st->res_ns / 1e6,
		st->res_cpu_ns / 1e6, (unsigned long long)st->jimage,
		(unsigned long long)st->deferred, why,
		(unsigned long long)st->rebuilt, st->rb_cpu_ns / 1e6,
		(unsigned long long)st->rebuild_later, rb, (int)left,
		(unsigned long long)a->n_retransform_batches,
		a->max_pause_ns / 1e6, a->total_pause_ns / 1e6,
		(unsigned long long)st->failed,
		(unsigned long long)(st->unmod[1][0] + st->unmod[1][1]),
		(unsigned long long)st->unmod[1][1], st->unmod_cpu_ns / 1e6,
		(unsigned long long)(st->unmod[0][0] + st->unmod[0][1]),
		(unsigned long long)st->unmod[0][1]);
}

/* The classes prepared during the catch-up and left to its end: those it
 * did not record go the ClassPrepare way now (rebuilt).  Returns how
 * many were deferred; *DRAINED how many of them were recorded here. */
static uint64_t end_catchup(struct agent *a, JNIEnv *jni, uint64_t *drained)
{
	size_t n = 0;
	jobject *ks = class_pending_catchup_end(a, &n);
	uint64_t before = a->n_classes + a->n_class_fail;
	for (size_t i = 0; i < n; i++) {
		if (jni)
			classes_on_prepare(a->jvmti, jni, NULL, ks[i]);
		if (jni)
			(*jni)->DeleteGlobalRef(jni, ks[i]);
	}
	free(ks);
	*drained = a->n_classes + a->n_class_fail - before;
	return n;
}

static void put_loss(struct agent *a, uint64_t n, uint64_t t0)
{
	struct jpb_rec_loss l = { jpb_str_c("classes"), UINT32_MAX, n, t0,
				  agent_now() };
	aq_put_rec(&a->q, AS_JVM, JPB_REC_LOSS, agent_now(), &l);
}

void classes_attach(struct agent *a, JNIEnv *jni)
{
	jvmtiEnv *e = a->jvmti;
	jint n = 0;
	jclass *cs = NULL;
	uint64_t drained = 0, n_def;
	if (a->opts.no_classes)
		return;
	if ((*e)->GetLoadedClasses(e, &n, &cs) != JVMTI_ERROR_NONE) {
		end_catchup(a, jni, &drained);
		aq_note(&a->q, JPB_NOTE_ERROR, "GetLoadedClasses failed: no "
			"class bytes of the classes loaded before %s",
			a->late_attach ? "attach" : "the hook");
		put_loss(a, 1, agent_now());
		return;
	}
	struct attach_stats st = { .loaded = n };
	jint left = take_classes(a, jni, cs, n, &st);
	uint64_t t_start = agent_now();
	retransform_loaded(a, cs, left, &st.failed);
	n_def = end_catchup(a, jni, &drained);
	put_summary(a, &st, left, n_def, drained);
	if (st.failed)
		put_loss(a, st.failed, t_start);
	if (jni)
		for (jint i = 0; i < left; i++)
			(*jni)->DeleteLocalRef(jni, cs[i]);
	(*e)->Deallocate(e, (unsigned char *)cs);
}
