// SPDX-License-Identifier: MIT
/*
 * The jpbpf JVMTI agent: lifecycle and options (docs/AGENT.md).
 *
 *   -agentpath:libjpbpf-agent.so=out=DIR[,truth[,truthmax=N]
 *                               [,truthfrom=Class.method]][,noclasses]
 *                               [,nocode][,noresource][,batch_ms=N]
 *                               [,retransform=never|auto|always]
 *                               [,maxmem=MB|KBk]
 *
 * or the same string through the attach protocol.  Every JVMTI call's
 * result is checked; on any failure at start the agent releases what it
 * took and returns an error, leaving the JVM running.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "agent.h"
#include "agent_events.h"
#include "vmstructs.h"

#define EXPORT __attribute__((visibility("default")))

/* JVMTI callbacks have no user pointer: this is the session they serve.
 * A finished session is kept (never freed) because a callback of its
 * environment may still be running on another thread. */
static struct agent *g_agent;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

struct agent *agent_get(void)
{
	return __atomic_load_n(&g_agent, __ATOMIC_ACQUIRE);
}

uint64_t agent_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t agent_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

void agent_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "jpbpf-agent: %s\n", line);
}

static int parse_uint(const char *v, int *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > 1000000)
		return -1;
	*out = (int)n;
	return 0;
}

/* "64" = 64 MiB, "64k" = 64 KiB; result in KiB. */
static int parse_size_kb(const char *v, int *kb)
{
	char num[32];
	size_t n = strlen(v);
	int k = n > 0 && (v[n - 1] == 'k' || v[n - 1] == 'K');
	if (n == 0 || n >= sizeof(num))
		return -1;
	snprintf(num, sizeof(num), "%.*s", (int)(n - (size_t)k), v);
	if (parse_uint(num, kb) != 0 || (!k && *kb > 1000000 / 1024))
		return -1;
	if (!k)
		*kb *= 1024;
	return 0;
}

static int parse_opt(struct agent_opts *o, char *kv, char *err, size_t size)
{
	char *v = strchr(kv, '=');
	if (v)
		*v++ = 0;
	int maxmem = 0;
	if (!strcmp(kv, "out") && v && *v) {
		if (strlen(v) >= sizeof(o->out)) {
			snprintf(err, size, "out= path too long");
			return -1;
		}
		snprintf(o->out, sizeof(o->out), "%s", v);
	} else if (!strcmp(kv, "truth") && !v) {
		o->truth = 1;
	} else if (!strcmp(kv, "noclasses") && !v) {
		o->no_classes = 1;
	} else if (!strcmp(kv, "nocode") && !v) {
		o->no_code = 1;
	} else if (!strcmp(kv, "noresource") && !v) {
		o->no_resource = 1;
	} else if (!strcmp(kv, "retransform") && v && !strcmp(v, "never")) {
		o->retransform = RT_NEVER;
	} else if (!strcmp(kv, "retransform") && v && !strcmp(v, "auto")) {
		o->retransform = RT_AUTO;
	} else if (!strcmp(kv, "retransform") && v && !strcmp(v, "always")) {
		o->retransform = RT_ALWAYS;
	} else if (!strcmp(kv, "batch_ms") && v && !parse_uint(v, &o->batch_ms) &&
		   o->batch_ms > 0) {
	} else if (!strcmp(kv, "maxmem") && v && parse_size_kb(v, &maxmem) == 0 &&
		   maxmem > 0) {
		o->max_kb = maxmem;
	} else if (truth_parse_opt(o, kv, v) > 0) {
	} else {
		snprintf(err, size, "bad option '%s%s%s' (known: out=DIR, truth, "
			 "truthmax=N, truthfrom=Class.method, "
			 "noclasses, nocode, noresource, "
			 "retransform=never|auto|always, batch_ms=N, "
			 "maxmem=MB|KBk)",
			 kv, v ? "=" : "", v ? v : "");
		return -1;
	}
	return 0;
}

/* Exposed (hidden visibility) for the unit test of option parsing. */
AGENT_LOCAL int agent_parse_options(struct agent_opts *o, const char *s,
				    char *err, size_t size);
int agent_parse_options(struct agent_opts *o, const char *s, char *err,
			size_t size)
{
	memset(o, 0, sizeof(*o));
	if (!s || !*s) {
		snprintf(err, size, "no options: out=DIR is required");
		return -1;
	}
	if (strlen(s) >= sizeof(o->raw)) {
		snprintf(err, size, "option string too long");
		return -1;
	}
	snprintf(o->raw, sizeof(o->raw), "%s", s);
	char copy[sizeof(o->raw)], *save = NULL;
	snprintf(copy, sizeof(copy), "%s", s);
	for (char *kv = strtok_r(copy, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save))
		if (parse_opt(o, kv, err, size))
			return -1;
	if (!o->out[0]) {
		snprintf(err, size, "out=DIR is required");
		return -1;
	}
	if ((o->truth_max || o->truth_from[0]) && !o->truth) {
		snprintf(err, size, "truthmax= and truthfrom= need truth");
		return -1;
	}
	return 0;
}

/* Pid facts: the init pid namespace has a fixed inode number. */
static void pid_facts(struct agent *a)
{
	char link[64] = "";
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	a->nspid = (uint32_t)getpid();
	if (n > 0)
		link[n] = 0;
	if (strcmp(link, "pid:[4026531836]") == 0) {
		a->same_pidns = 1;
		a->host_pid = a->nspid;
		return;
	}
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned first, last;
		if (sscanf(line, "NSpid: %u", &first) != 1)
			continue;
		char *p = strrchr(line, '\t');
		if (p && sscanf(p, "%u", &last) == 1 && last == a->nspid &&
		    first != last)
			a->host_pid = first;
	}
	if (f)
		fclose(f);
}

static char *get_prop(jvmtiEnv *e, const char *name)
{
	char *v = NULL;
	if ((*e)->GetSystemProperty(e, name, &v) != JVMTI_ERROR_NONE)
		return NULL;
	return v;
}

static void put_info(struct agent *a)
{
	jvmtiEnv *e = a->jvmti;
	char *ver = get_prop(e, "java.version");
	char *vm = get_prop(e, "java.vm.name");
	char *vmv = get_prop(e, "java.vm.version");
	/* java.version is set only after Agent_OnLoad; the VM version
	 * ("17.0.15+6-Debian-1") starts with it. */
	char ver_buf[64] = "";
	if (!ver && vmv) {
		snprintf(ver_buf, sizeof(ver_buf), "%.*s",
			 (int)strcspn(vmv, "+-"), vmv);
	}
	const char *version = ver ? ver : ver_buf;
	struct jpb_rec_jvm_info r = {
		.pid = a->host_pid,
		.nspid = a->nspid,
		.late_attach = (uint32_t)a->late_attach,
		.flags = (a->opts.truth ? JPB_JVM_F_TRUTH : 0) |
			 (a->debug_nonsafepoints ? JPB_JVM_F_DEBUG_NONSAFEPOINTS
						 : 0) |
			 (a->coarse_pcmaps ? JPB_JVM_F_COARSE_PCMAPS : 0),
		.jdk_version = jpb_str_c(version),
		.vm_name = jpb_str_c(vm),
		.vm_version = jpb_str_c(vmv),
		.options = jpb_str_c(a->opts.raw),
		.libjvm = jpb_str_c(vms_libjvm_path()),
		.libjvm_base = vms_libjvm_base(),
	};
	aq_put_rec(&a->q, AS_JVM, JPB_REC_JVM_INFO, agent_now(), &r);
	if (a->coarse_pcmaps)
		aq_note(&a->q, JPB_NOTE_WARN,
			"DebugNonSafepoints is set off: compiled methods' pc "
			"maps hold only calls and safepoint polls, so most "
			"compiled bytecodes cannot be decoded (flag "
			"JPB_NM_F_COARSE on every method)");
	void *meta = NULL;
	if (jpb_meta_load(a->q.bundle, &meta) == jpb_err_not_found) {
		json_t *m = jpb_meta_new_base();
		json_t *j = json_pack("{s:s?, s:s?, s:i, s:i, s:s, s:b}",
				      "jdk_version", version, "vm_name", vm,
				      "pid", (json_int_t)a->host_pid,
				      "nspid", (json_int_t)a->nspid,
				      "agent_options", a->opts.raw,
				      "late_attach", a->late_attach);
		if (m && j && json_object_set_new(m, "jvm", j) == 0) {
			j = NULL;
			if (jpb_meta_save(a->q.bundle, m) != 0)
				agent_log("cannot write meta.json: %s",
					  jpb_bundle_errmsg(a->q.bundle));
		}
		json_decref(j);
		json_decref(m);
	}
	if (ver)
		(*e)->Deallocate(e, (unsigned char *)ver);
	if (vm)
		(*e)->Deallocate(e, (unsigned char *)vm);
	if (vmv)
		(*e)->Deallocate(e, (unsigned char *)vmv);
}

static int add_capabilities(struct agent *a, char *err, size_t size)
{
	jvmtiEnv *e = a->jvmti;
	jvmtiCapabilities pot, want;
	if ((*e)->GetPotentialCapabilities(e, &pot) != JVMTI_ERROR_NONE) {
		snprintf(err, size, "GetPotentialCapabilities failed");
		return -1;
	}
	agent_base_caps(&pot, &want);
	/* Retransforming is how a late agent gets the classes loaded before
	 * it; at start-up the hook and the VMInit catch-up see every class,
	 * and holding the capability would make HotSpot's compilers record
	 * redefinition dependencies for nothing
	 * (can_hotswap_or_post_breakpoint). */
	want.can_retransform_classes = a->late_attach && pot.can_retransform_classes;
	want.can_retransform_any_class =
		a->late_attach && pot.can_retransform_any_class;
	if (a->opts.truth) {
		if (!pot.can_generate_single_step_events) {
			snprintf(err, size, "truth mode needs SingleStep, which "
				 "only an agent loaded at start-up can have "
				 "(-agentpath)");
			return -1;
		}
		want.can_generate_single_step_events = 1;
		want.can_generate_method_entry_events = 1;
		want.can_generate_method_exit_events = 1;
		want.can_generate_exception_events = 1;
		want.can_generate_breakpoint_events = a->opts.truth_from[0] != 0;
	}
	jvmtiError rc = (*e)->AddCapabilities(e, &want);
	if (rc != JVMTI_ERROR_NONE) {
		snprintf(err, size, "AddCapabilities failed (JVMTI error %d)",
			 (int)rc);
		return -1;
	}
	return 0;
}

static void stop_session(struct agent *a, const char *why);

/* The earliest event after the code cache exists; compiles can be
 * posted before it, though (module system set-up), and before VMInit. */
static void JNICALL on_vm_start(jvmtiEnv *e, JNIEnv *jni)
{
	(void)e;
	(void)jni;
	struct agent *a = agent_get();
	if (a && !a->stopped)
		nml_prepare(a, "VMStart");
}

static void JNICALL on_vm_init(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)e;
	struct agent *a = agent_get();
	if (!a || a->stopped)
		return;
	interp_record(a);
	threads_record_all(a, jni);
	threads_record(a, jni, t, JPB_THREAD_START, 1);
	/* Before truth starts: the catch-up runs Java code (resources). */
	classes_attach(a, jni);
	/* At VMInit, not earlier: SingleStep enabled in the OnLoad phase
	 * posts nothing (HotSpot does not put the threads in
	 * interpreter-only mode then). */
	if (a->opts.truth && truth_start(a) != 0)
		aq_note(&a->q, JPB_NOTE_ERROR,
			"truth: cannot enable the JVMTI events: no truth");
}

static void JNICALL on_vm_death(jvmtiEnv *e, JNIEnv *jni)
{
	(void)e;
	(void)jni;
	struct agent *a = agent_get();
	if (a)
		stop_session(a, "VM death");
}

static void JNICALL on_thread_start(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)e;
	struct agent *a = agent_get();
	if (a && !a->stopped)
		threads_record(a, jni, t, JPB_THREAD_START, 1);
}

static void JNICALL on_thread_end(jvmtiEnv *e, JNIEnv *jni, jthread t)
{
	(void)e;
	struct agent *a = agent_get();
	if (!a || a->stopped)
		return;
	if (a->opts.truth)
		truth_thread_end(a);
	threads_record(a, jni, t, JPB_THREAD_END, 1);
}

static int enable_events(struct agent *a, char *err, size_t size)
{
	jvmtiEnv *e = a->jvmti;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMStart = on_vm_start;
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.ClassFileLoadHook = classes_on_load;
	cb.ClassPrepare = classes_on_prepare;
	cb.CompiledMethodLoad = jit_on_load;
	cb.CompiledMethodUnload = jit_on_unload;
	cb.DynamicCodeGenerated = jit_on_dynamic;
	if (a->opts.truth)
		truth_callbacks(a, &cb);
	jvmtiError rc = (*e)->SetEventCallbacks(e, &cb, (jint)sizeof(cb));
	for (size_t i = 0; rc == JVMTI_ERROR_NONE && i < AGENT_N_BASE_EVENTS;
	     i++) {
		jvmtiEvent ev = agent_base_events[i];
		if (a->late_attach && (ev == JVMTI_EVENT_VM_INIT ||
				       ev == JVMTI_EVENT_VM_START))
			continue;
		rc = (*e)->SetEventNotificationMode(e, JVMTI_ENABLE, ev, NULL);
	}
	if (rc != JVMTI_ERROR_NONE) {
		snprintf(err, size, "enabling JVMTI events failed (error %d)",
			 (int)rc);
		return -1;
	}
	return 0;
}

static void disable_events(struct agent *a)
{
	jvmtiEnv *e = a->jvmti;
	for (size_t i = 0; i < AGENT_N_BASE_EVENTS; i++)
		(*e)->SetEventNotificationMode(e, JVMTI_DISABLE,
					       agent_base_events[i], NULL);
	if (a->opts.truth)
		truth_stop_events(a);
}

/* The callbacks' CPU: only some are timed (jit.c), the rest alike. */
static double jit_ms(const struct agent *a)
{
	uint64_t timed = __atomic_load_n(&a->n_jit_timed, __ATOMIC_RELAXED);
	uint64_t all = __atomic_load_n(&a->n_nmethods, __ATOMIC_RELAXED);
	return timed ? a->jit_ns / 1e6 * ((double)all / (double)timed) : 0;
}

static void put_summary(struct agent *a, const char *why)
{
	char cvm[1024];
	cvm_stats_str(&a->cvm, cvm, sizeof(cvm));
	class_pending_flush(a);
	aq_note(&a->q, JPB_NOTE_INFO,
		"agent stops (%s): %llu classes, %llu without class file, "
		"%llu hidden classes rebuilt at ClassPrepare (%.1f ms of CPU "
		"with those not rebuilt; %s), "
		"%llu compiled methods (%.1f ms of CPU in their callbacks), "
		"%llu code blobs; callbacks' CPU scaled from the %llu timed "
		"(%.1f ms)", why,
		(unsigned long long)a->n_classes,
		(unsigned long long)a->n_class_fail,
		(unsigned long long)a->n_hidden_rebuilt, a->hidden_ns / 1e6,
		cvm, (unsigned long long)a->n_nmethods, jit_ms(a),
		(unsigned long long)a->n_blobs,
		(unsigned long long)a->n_jit_timed, a->jit_ns / 1e6);
}

/* The writer thread saw the recorder's stop file.  Only flags may be
 * touched here: this thread is not attached to the JVM. */
static int on_stop_file(void)
{
	struct agent *a = agent_get();
	if (!a)
		return 0;
	if (a->opts.truth)
		truth_flush_all(a);
	put_summary(a, "stop requested");
	__atomic_store_n(&a->stopped, 1, __ATOMIC_RELEASE);
	return 0;
}

static void stop_session(struct agent *a, const char *why)
{
	pthread_mutex_lock(&a->stop_lock);
	if (a->finished) {
		pthread_mutex_unlock(&a->stop_lock);
		return;
	}
	a->finished = 1;
	if (!a->stopped) {
		if (a->opts.truth)
			truth_flush_all(a);
		put_summary(a, why);
	}
	__atomic_store_n(&a->stopped, 1, __ATOMIC_RELEASE);
	int err = aq_finish(&a->q);
	if (err)
		agent_log("%s: recording incomplete: %s", a->opts.out,
			  a->q.errmsg[0] ? a->q.errmsg : jpb_errstr(err));
	pthread_mutex_unlock(&a->stop_lock);
}

/* Release a session that failed to start; nothing of it is live. */
static void abandon(struct agent *a)
{
	if (a->jvmti)
		(*a->jvmti)->DisposeEnvironment(a->jvmti);
	if (a->q.bundle)
		jpb_bundle_free(a->q.bundle);
	if (a->published)
		return; /* a callback may still hold it */
	hset_free(a->methods);
	hset_free(a->class_names);
	free(a);
}

static int open_bundle(struct agent *a, char *err, size_t size)
{
	struct jpb_bundle *b = NULL;
	int rc = jpb_bundle_create(&b, a->opts.out);
	if (rc) {
		snprintf(err, size, "%s: cannot create bundle: %s", a->opts.out,
			 jpb_errstr(rc));
		return -1;
	}
	a->q.bundle = b;
	if (a->opts.max_kb)
		a->q.max_bytes = (uint64_t)a->opts.max_kb << 10;
	snprintf(a->q.stop_file, sizeof(a->q.stop_file), "%s/agent.stop",
		 a->opts.out);
	snprintf(a->q.done_file, sizeof(a->q.done_file), "%s/agent.done",
		 a->opts.out);
	unlink(a->q.stop_file);
	unlink(a->q.done_file);
	a->q.on_stop_request = on_stop_file;
	if (aq_start(&a->q, b, a->opts.truth, err, size) != 0)
		return -1;
	return 0;
}

/* Each phase of a late attach is timed and reported in one note, so a
 * slow attach says where its time went. */
static void replay(struct agent *a, JNIEnv *jni)
{
	jvmtiEnv *e = a->jvmti;
	uint64_t t[5];
	t[0] = agent_now();
	interp_record(a);
	threads_record_all(a, jni);
	t[1] = agent_now();
	jit_set_replaying(1);
	if ((*e)->GenerateEvents(e, JVMTI_EVENT_DYNAMIC_CODE_GENERATED) !=
	    JVMTI_ERROR_NONE)
		aq_note(&a->q, JPB_NOTE_WARN, "GenerateEvents(dynamic code) failed");
	t[2] = agent_now();
	if ((*e)->GenerateEvents(e, JVMTI_EVENT_COMPILED_METHOD_LOAD) !=
	    JVMTI_ERROR_NONE)
		aq_note(&a->q, JPB_NOTE_WARN,
			"GenerateEvents(compiled methods) failed");
	t[3] = agent_now();
	jit_set_replaying(0);
	if (!a->debug_nonsafepoints)
		aq_note(&a->q, JPB_NOTE_WARN,
			"methods compiled before attach have coarse pc maps "
			"(flag JPB_NM_F_COARSE); run the JVM with "
			"-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints "
			"for full precision");
	classes_attach(a, jni);
	t[4] = agent_now();
	aq_note(&a->q, JPB_NOTE_INFO,
		"attach phases: interpreter+threads %.1f ms, dynamic code "
		"%.1f ms, compiled methods %.1f ms, classes %.1f ms",
		(t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6, (t[3] - t[2]) / 1e6,
		(t[4] - t[3]) / 1e6);
}

static int read_debug_nonsafepoints(void)
{
	uint64_t addr;
	uint8_t v = 0;
	if (vms_flag_addr("DebugNonSafepoints", &addr) != 0 ||
	    vms_read(addr, &v, 1) != 0)
		return 0;
	return v != 0;
}

/* The bundle the live session writes, or NULL.  Exported so that a copy
 * of this library loaded from another path (the dynamic linker makes that
 * a separate instance with its own g_agent) still finds the session. */
EXPORT const char *jpbpf_agent_active_out(void);
const char *jpbpf_agent_active_out(void)
{
	struct agent *cur = agent_get();
	return cur && !cur->stopped ? cur->opts.out : NULL;
}

struct other_copy {
	const char *self; /* our file name */
	char out[4096];
};

static int find_other_copy(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct other_copy *o = arg;
	const char *n = info->dlpi_name;
	if (!n || !*n || !strcmp(n, o->self))
		return 0;
	void *h = dlopen(n, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	const char *(*fn)(void) =
		(const char *(*)(void))dlsym(h, "jpbpf_agent_active_out");
	const char *out = fn ? fn() : NULL;
	if (out)
		snprintf(o->out, sizeof(o->out), "%s", out);
	dlclose(h);
	return out != NULL;
}

/* Out directory of a live session in another copy of the library. */
static int other_copy_out(char *out, size_t size)
{
	Dl_info self;
	struct other_copy o = { NULL, "" };
	if (!dladdr((void *)jpbpf_agent_active_out, &self) || !self.dli_fname)
		return 0;
	o.self = self.dli_fname;
	if (!dl_iterate_phdr(find_other_copy, &o))
		return 0;
	snprintf(out, size, "%s", o.out);
	return 1;
}

/* Another session of this library is live.  A second load (a new
 * jvmtiEnv would add its callbacks to the old ones) must not record
 * twice: the same bundle reuses the session (1), another is refused (-1). */
static int already_running(const char *options)
{
	struct agent *cur = agent_get();
	char live[4096];
	if (cur && !cur->stopped)
		snprintf(live, sizeof(live), "%s", cur->opts.out);
	else if (!other_copy_out(live, sizeof(live)))
		return 0;
	struct agent_opts o;
	char err[256];
	if (agent_parse_options(&o, options, err, sizeof(err)) == 0 &&
	    strcmp(o.out, live) == 0) {
		agent_log("already recording to %s: session reused", live);
		return 1;
	}
	agent_log("already recording to %s: refusing a second session (%s)",
		  live, options ? options : "");
	return -1;
}

/* A's JVMTI environment.  HotSpot hands one out only in the OnLoad and
 * live phases (else JNI_EDETACHED), but its Signal Dispatcher and attach
 * listener start before the live phase: an attach early in start-up
 * (agent_badinput: always, on one loaded CPU) arrives in the start
 * phase, so a late attach waits for the live phase, up to 10 s. */
static int get_jvmti(struct agent *a)
{
	const struct timespec step = { 0, 10 * 1000 * 1000 };
	for (int i = 0;; i++) {
		jint rc = (*a->vm)->GetEnv(a->vm, (void **)&a->jvmti,
					   JVMTI_VERSION_1_2);
		if (rc == JNI_OK)
			return 0;
		if (rc != JNI_EDETACHED || !a->late_attach || i == 1000)
			return -1;
		nanosleep(&step, NULL);
	}
}

/* Everything a session needs before any event can reach it.  On failure
 * ERR says why and the caller abandons A. */
static int session_prepare(struct agent *a, char *options, char *err,
			   size_t size)
{
	pthread_mutex_init(&a->stop_lock, NULL);
	pid_facts(a);
	vms_init();
	if (agent_parse_options(&a->opts, options, err, size) != 0)
		return -1;
	if (get_jvmti(a) != 0) {
		a->jvmti = NULL;
		snprintf(err, size, "JVMTI 1.2 not available");
		return -1;
	}
	if (add_capabilities(a, err, size) != 0)
		return -1;
	a->methods = hset_new();
	a->class_names = hset_new();
	a->pending = class_pending_new();
	if (!a->methods || !a->class_names || !a->pending ||
	    (a->opts.truth && truth_init(a) != 0)) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	if (open_bundle(a, err, size) != 0)
		return -1;
	a->debug_nonsafepoints = read_debug_nonsafepoints();
	/* HotSpot's compilers record non-safepoint pcs while an agent listens
	 * to CompiledMethodLoad, unless the flag was set: set off, every map
	 * is coarse. */
	a->coarse_pcmaps = !a->debug_nonsafepoints &&
			   vms_flag_is_default("DebugNonSafepoints") == 0;
	return 0;
}

/* Make A the live session and turn its events on; a finished earlier
 * session is retired (its writer joined, its environment disposed) so
 * its callbacks stop.  Called with g_lock held. */
static int session_go_live(struct agent *a, char *err, size_t size)
{
	struct agent *old = g_agent;
	a->published = 1;
	__atomic_store_n(&g_agent, a, __ATOMIC_RELEASE);
	put_info(a);
	/* Before the events: compiles may be posted at once.  At start-up
	 * the code cache does not exist yet; on_vm_start does it. */
	if (a->late_attach)
		nml_prepare(a, "attach");
	if (enable_events(a, err, size) != 0) {
		__atomic_store_n(&g_agent, old, __ATOMIC_RELEASE);
		disable_events(a);
		aq_note(&a->q, JPB_NOTE_ERROR, "%s", err);
		a->stopped = 1;
		aq_finish(&a->q);
		return -1;
	}
	if (old) {
		stop_session(old, "replaced");
		if (old->jvmti)
			(*old->jvmti)->DisposeEnvironment(old->jvmti);
	}
	return 0;
}

static jint start(JavaVM *vm, char *options, int late)
{
	char err[512] = "";
	pthread_mutex_lock(&g_lock);
	int running = already_running(options);
	if (running) {
		pthread_mutex_unlock(&g_lock);
		return running > 0 ? JNI_OK : JNI_ERR;
	}
	struct agent *a = calloc(1, sizeof(*a));
	if (!a) {
		pthread_mutex_unlock(&g_lock);
		agent_log("out of memory");
		return JNI_ERR;
	}
	a->vm = vm;
	a->late_attach = late;
	if (session_prepare(a, options, err, sizeof(err)) != 0 ||
	    session_go_live(a, err, sizeof(err)) != 0) {
		pthread_mutex_unlock(&g_lock);
		agent_log("not started: %s", err);
		abandon(a);
		return JNI_ERR;
	}
	pthread_mutex_unlock(&g_lock);
	if (late) {
		JNIEnv *jni = NULL;
		if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
			jni = NULL;
		replay(a, jni);
	}
	return JNI_OK;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options,
					   void *reserved)
{
	(void)reserved;
	return start(vm, options, 0);
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options,
					     void *reserved)
{
	(void)reserved;
	return start(vm, options, 1);
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	struct agent *a = agent_get();
	if (a)
		stop_session(a, "unload");
}
