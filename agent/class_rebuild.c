// SPDX-License-Identifier: MIT
/*
 * A class file rebuilt from what JVMTI tells about a loaded class, for the
 * classes a late attach cannot read back from their loader (docs/AGENT.md,
 * "Late attach"): reflection accessors, dynamic proxies and other classes
 * defined from bytes made at run time; and for hidden classes (lambda
 * proxies, LambdaForms), which the ClassFileLoadHook never sees and no
 * retransform reaches, at start-up and after attach.  Unlike
 * RetransformClasses it needs no safepoint: every call below reads the
 * class under its own locks.
 *
 * What JVMTI gives is what the loaded class runs: the constant pool in
 * class-file form (GetConstantPool), each method's bytecodes with their
 * original constant pool indices (GetBytecodes), max_locals, the line
 * numbers, modifiers, super class, interfaces and fields.  What it does
 * not give, the exception tables, max_stack and the BootstrapMethods
 * attribute, is read from HotSpot's metadata (class_vmmeta.c) and
 * checked against the pool; a method whose tables do not check out is
 * written as before (no exception table, max_stack 65535) and counted, a
 * class needing BootstrapMethods that cannot be read is not rebuilt.
 * Every other attribute is left out (JPB_CLASS_F_REBUILT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "class_vmmeta.h"
#include "java/classfile.h"

const char *class_rebuild_strs[RB_COUNT] = {
	[RB_OK] = "ok",
	[RB_NOMEM] = "out of memory",
	[RB_JVMTI] = "a JVMTI call failed",
	[RB_CPOOL] = "constant pool unreadable",
	[RB_BOOTSTRAP] = ("needs BootstrapMethods, unreadable from "
			  "HotSpot's metadata"),
	[RB_LIMIT] = "too large for a class file",
	[RB_PARSE] = "rebuilt class file does not parse",
};

/* A big-endian writer over a jpb_buf; OOM is sticky and checked once at
 * the end. */
struct cfw {
	struct jpb_buf b;
	int oom;
};

static void w_put(struct cfw *w, const void *src, size_t n)
{
	if (!w->oom && jpb_buf_put(&w->b, src, n))
		w->oom = 1;
}

static void w_u1(struct cfw *w, unsigned v)
{
	uint8_t b = (uint8_t)v;
	w_put(w, &b, 1);
}

static void w_u2(struct cfw *w, unsigned v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	w_put(w, b, 2);
}

static void w_u4(struct cfw *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };
	w_put(w, b, 4);
}

/* Patch a u4 written earlier at OFF (attribute lengths). */
static void w_set_u4(struct cfw *w, size_t off, uint32_t v)
{
	if (w->oom)
		return;
	w->b.data[off] = (uint8_t)(v >> 24);
	w->b.data[off + 1] = (uint8_t)(v >> 16);
	w->b.data[off + 2] = (uint8_t)(v >> 8);
	w->b.data[off + 3] = (uint8_t)v;
}

/* The JVM's constant pool plus the entries appended for names it lacks. */
struct cpool {
	const uint8_t *b;
	size_t size;
	uint32_t count;  /* the JVM's, entries 1..count-1 */
	uint32_t *off;   /* offset of entry i's tag in B; 0 for none */
	struct cfw extra;
	uint32_t next;   /* index of the next appended entry */
	int bootstrap;   /* has Dynamic or InvokeDynamic entries */
};

static int cp_scan(struct cpool *cp)
{
	size_t pos = 0;
	cp->off = calloc(cp->count ? cp->count : 1, sizeof(*cp->off));
	if (!cp->off)
		return RB_NOMEM;
	for (uint32_t i = 1; i < cp->count; i++) {
		if (pos >= cp->size)
			return RB_CPOOL;
		uint8_t tag = cp->b[pos];
		int n = jcf_cp_entry_size(tag);
		if (n < 0 && pos + 3 <= cp->size)
			n = 2 + (cp->b[pos + 1] << 8 | cp->b[pos + 2]);
		if (n <= 0 || pos + 1 + (size_t)n > cp->size)
			return RB_CPOOL;
		cp->off[i] = (uint32_t)pos;
		cp->bootstrap |= tag == JCF_CONSTANT_Dynamic ||
				 tag == JCF_CONSTANT_InvokeDynamic;
		i += tag == JCF_CONSTANT_Long || tag == JCF_CONSTANT_Double;
		pos += 1 + (size_t)n;
	}
	cp->next = cp->count;
	return pos == cp->size ? RB_OK : RB_CPOOL;
}

static int cp_tag(const struct cpool *cp, uint32_t i)
{
	return i && i < cp->count && cp->off[i] ? cp->b[cp->off[i]] : 0;
}

static unsigned cp_u2(const struct cpool *cp, uint32_t i, size_t at)
{
	const uint8_t *p = cp->b + cp->off[i] + at;
	return (unsigned)(p[0] << 8 | p[1]);
}

static int utf8_is(const struct cpool *cp, uint32_t i, const char *s,
		   size_t len)
{
	return cp_tag(cp, i) == JCF_CONSTANT_Utf8 && cp_u2(cp, i, 1) == len &&
	       !memcmp(cp->b + cp->off[i] + 3, s, len);
}

static uint32_t cp_append(struct cpool *cp)
{
	return cp->next < 65535 ? cp->next++ : 0;
}

/* The index of a Utf8 entry S, appended if the JVM's pool has none. */
static uint32_t cp_utf8(struct cpool *cp, const char *s)
{
	size_t len = strlen(s);
	for (uint32_t i = 1; i < cp->count; i++)
		if (utf8_is(cp, i, s, len))
			return i;
	uint32_t i = len <= 65535 ? cp_append(cp) : 0;
	if (i) {
		w_u1(&cp->extra, JCF_CONSTANT_Utf8);
		w_u2(&cp->extra, (unsigned)len);
		w_put(&cp->extra, s, len);
	}
	return i;
}

/* The index of a Class entry naming NAME, appended if missing. */
static uint32_t cp_class(struct cpool *cp, const char *name)
{
	size_t len = strlen(name);
	for (uint32_t i = 1; i < cp->count; i++)
		if (cp_tag(cp, i) == JCF_CONSTANT_Class &&
		    utf8_is(cp, cp_u2(cp, i, 1), name, len))
			return i;
	uint32_t u = cp_utf8(cp, name), i = u ? cp_append(cp) : 0;
	if (i) {
		w_u1(&cp->extra, JCF_CONSTANT_Class);
		w_u2(&cp->extra, u);
	}
	return i;
}

/* A hidden class's JVMTI name has a '.' before its address
 * ("Foo$$Lambda.0x0800c01234"), where the name its constant pool holds
 * has a '+' (HotSpot's internal name; its logs print a '/').  The
 * rebuilt file names itself as the jvm_method records name it, so the
 * program model finds its methods, and its own field and method
 * references keep pointing at this_class.  Rewrites that Utf8 entry in
 * place (same length); POOL is our copy. */
static void cp_hidden_name(struct cpool *cp, uint8_t *pool, const char *name,
			   size_t len)
{
	const char *dot = memchr(name, '.', len);
	if (!dot)
		return; /* '.' is not allowed in other internal names */
	size_t at = (size_t)(dot - name);
	for (uint32_t i = 1; i < cp->count; i++) {
		if (cp_tag(cp, i) != JCF_CONSTANT_Utf8 || cp_u2(cp, i, 1) != len)
			continue;
		uint8_t *s = pool + cp->off[i] + 3;
		if ((s[at] == '+' || s[at] == '/') && !memcmp(s, name, at) &&
		    !memcmp(s + at + 1, dot + 1, len - at - 1))
			s[at] = '.';
	}
}

struct rebuild {
	jvmtiEnv *e;
	JNIEnv *jni;
	jclass k;
	struct cpool cp;
	struct cfw body;
	uint32_t code_name, lines_name;
	int err;
	int use_vm;    /* read tables from HotSpot's metadata */
	uint64_t pool; /* the methods' ConstantPool, 0 until one is read */
	int pool_why;  /* why no pool is known: enum cvm_why */
	int bsm_why;   /* why no BootstrapMethods were written */
	uint64_t vm_methods, fallback[CVM_WHY_COUNT];
};

static void fail(struct rebuild *r, int err)
{
	if (!r->err)
		r->err = err;
}

static int ok(struct rebuild *r, jvmtiError e)
{
	if (e != JVMTI_ERROR_NONE)
		fail(r, RB_JVMTI);
	return e == JVMTI_ERROR_NONE;
}

static void dealloc(struct rebuild *r, void *p)
{
	if (p)
		(*r->e)->Deallocate(r->e, (unsigned char *)p);
}

static void put_index(struct rebuild *r, uint32_t i)
{
	if (!i)
		fail(r, RB_LIMIT);
	w_u2(&r->body, i);
}

/* A Class entry for class K (a local reference), by its signature. */
static void put_class_of(struct rebuild *r, jclass k)
{
	char *sig = NULL;
	size_t len;
	if (!ok(r, (*r->e)->GetClassSignature(r->e, k, &sig, NULL)))
		return;
	const char *name = classes_sig_name(sig, &len);
	if (name) {
		sig[len + 1] = 0; /* drop the ';' */
		put_index(r, cp_class(&r->cp, name));
	} else {
		fail(r, RB_JVMTI);
	}
	dealloc(r, sig);
}

static void put_header(struct rebuild *r, const char *name, jint mods)
{
	JNIEnv *jni = r->jni;
	jclass super = (*jni)->GetSuperclass(jni, r->k);
	/* Class modifiers of an inner class are its InnerClasses flags:
	 * keep only those a class file's access_flags may hold. */
	w_u2(&r->body, ((unsigned)mods & 0x7611) |
			       (mods & JCF_ACC_INTERFACE ? 0 : 0x20));
	put_index(r, cp_class(&r->cp, name));
	if (super)
		put_class_of(r, super);
	else if (strcmp(name, "java/lang/Object") != 0)
		put_index(r, cp_class(&r->cp, "java/lang/Object")); /* interface */
	else
		w_u2(&r->body, 0);
	jint n = 0;
	jclass *ifs = NULL;
	if (!ok(r, (*r->e)->GetImplementedInterfaces(r->e, r->k, &n, &ifs)))
		return;
	w_u2(&r->body, (unsigned)n);
	for (jint i = 0; i < n; i++)
		put_class_of(r, ifs[i]);
	dealloc(r, ifs);
}

static void put_fields(struct rebuild *r)
{
	jint n = 0;
	jfieldID *fs = NULL;
	if (!ok(r, (*r->e)->GetClassFields(r->e, r->k, &n, &fs)))
		return;
	w_u2(&r->body, (unsigned)n);
	for (jint i = 0; i < n && !r->err; i++) {
		char *name = NULL, *sig = NULL;
		jint mods = 0;
		if (ok(r, (*r->e)->GetFieldName(r->e, r->k, fs[i], &name, &sig,
						NULL)) &&
		    ok(r, (*r->e)->GetFieldModifiers(r->e, r->k, fs[i], &mods))) {
			w_u2(&r->body, (unsigned)mods & 0x50df);
			put_index(r, cp_utf8(&r->cp, name));
			put_index(r, cp_utf8(&r->cp, sig));
			w_u2(&r->body, 0);
		}
		dealloc(r, name);
		dealloc(r, sig);
	}
	dealloc(r, fs);
}

static void put_lines(struct rebuild *r, jmethodID m, jint code_len)
{
	jint n = 0, k = 0;
	jvmtiLineNumberEntry *t = NULL;
	if ((*r->e)->GetLineNumberTable(r->e, m, &n, &t) != JVMTI_ERROR_NONE)
		n = 0; /* absent: compiled without -g:lines */
	for (jint i = 0; i < n; i++)
		k += t[i].start_location >= 0 && t[i].start_location < code_len &&
		     t[i].line_number >= 0 && t[i].line_number <= 65535;
	w_u2(&r->body, k ? 1 : 0);
	if (k) {
		w_u2(&r->body, r->lines_name);
		w_u4(&r->body, 2 + 4 * (uint32_t)k);
		w_u2(&r->body, (unsigned)k);
	}
	for (jint i = 0; i < n && k; i++)
		if (t[i].start_location >= 0 && t[i].start_location < code_len &&
		    t[i].line_number >= 0 && t[i].line_number <= 65535) {
			w_u2(&r->body, (unsigned)t[i].start_location);
			w_u2(&r->body, (unsigned)t[i].line_number);
		}
	dealloc(r, t);
}

/* CVM_OK if the tables read for M (NAME, SIG) belong to this class
 * and its pool: same pool as the other methods, name and descriptor
 * indices naming M, catch types Class entries. */
static int vm_check(struct rebuild *r, const struct cvm_method *v,
		    const char *name, const char *sig)
{
	if (r->pool && v->pool != r->pool)
		return CVM_MISMATCH;
	if (!utf8_is(&r->cp, v->name_index, name, strlen(name)) ||
	    !utf8_is(&r->cp, v->sig_index, sig, strlen(sig)))
		return CVM_MISMATCH;
	for (unsigned i = 0; i < v->nexc; i++)
		if (v->exc[i].catch_type &&
		    cp_tag(&r->cp, v->exc[i].catch_type) != JCF_CONSTANT_Class)
			return CVM_ENTRY;
	return CVM_OK;
}

/* M's exception table and max_stack from HotSpot's metadata into *V;
 * CVM_OK, else V is empty and the reason counted. */
static int vm_tables(struct rebuild *r, jmethodID m, const char *name,
		     const char *sig, jint len, jint locals,
		     struct cvm_method *v)
{
	int why = cvm_method_read(m, (uint32_t)len, (uint32_t)locals, v);
	if (why == CVM_OK)
		why = vm_check(r, v, name, sig);
	if (why != CVM_OK) {
		cvm_method_fini(v);
		r->fallback[why]++;
		if (!r->pool)
			r->pool_why = why;
		return why;
	}
	r->pool = v->pool;
	r->vm_methods++;
	return CVM_OK;
}

/* The Code attribute, with the exception table and max_stack HotSpot's
 * metadata give; without them (none, max_stack 65535) if unreadable. */
static void put_code(struct rebuild *r, jmethodID m, const char *name,
		     const char *sig)
{
	jint locals = 0, len = 0;
	unsigned char *code = NULL;
	struct cvm_method v = { 0 };
	if (!ok(r, (*r->e)->GetMaxLocals(r->e, m, &locals)) ||
	    !ok(r, (*r->e)->GetBytecodes(r->e, m, &len, &code)))
		return;
	if (len <= 0 || len > 65535)
		fail(r, RB_LIMIT);
	int vm = r->use_vm && !r->err &&
		 vm_tables(r, m, name, sig, len, locals, &v) == CVM_OK;
	w_u2(&r->body, 1);
	w_u2(&r->body, r->code_name);
	size_t at = r->body.b.len;
	w_u4(&r->body, 0);
	w_u2(&r->body, vm ? v.max_stack : 65535);
	w_u2(&r->body, (unsigned)locals);
	w_u4(&r->body, (uint32_t)len);
	w_put(&r->body, code, (size_t)len);
	w_u2(&r->body, v.nexc);
	for (unsigned i = 0; i < v.nexc; i++) {
		w_u2(&r->body, v.exc[i].start_pc);
		w_u2(&r->body, v.exc[i].end_pc);
		w_u2(&r->body, v.exc[i].handler_pc);
		w_u2(&r->body, v.exc[i].catch_type);
	}
	put_lines(r, m, len);
	w_set_u4(&r->body, at, (uint32_t)(r->body.b.len - at - 4));
	cvm_method_fini(&v);
	dealloc(r, code);
}

static void put_method(struct rebuild *r, jmethodID m)
{
	char *name = NULL, *sig = NULL;
	jint mods = 0;
	if (ok(r, (*r->e)->GetMethodName(r->e, m, &name, &sig, NULL)) &&
	    ok(r, (*r->e)->GetMethodModifiers(r->e, m, &mods))) {
		w_u2(&r->body, (unsigned)mods & 0x1dff);
		put_index(r, cp_utf8(&r->cp, name));
		put_index(r, cp_utf8(&r->cp, sig));
		if (mods & (JCF_ACC_NATIVE | JCF_ACC_ABSTRACT))
			w_u2(&r->body, 0);
		else
			put_code(r, m, name, sig);
	}
	dealloc(r, name);
	dealloc(r, sig);
}

static void put_methods(struct rebuild *r)
{
	jint n = 0;
	jmethodID *ms = NULL;
	if (!ok(r, (*r->e)->GetClassMethods(r->e, r->k, &n, &ms)))
		return;
	w_u2(&r->body, (unsigned)n);
	for (jint i = 0; i < n && !r->err; i++)
		put_method(r, ms[i]);
	dealloc(r, ms);
}

/* Loadable constants (JVMS 4.4): what a bootstrap argument may name. */
static int loadable(int tag)
{
	switch (tag) {
	case JCF_CONSTANT_Integer: case JCF_CONSTANT_Float:
	case JCF_CONSTANT_Long: case JCF_CONSTANT_Double:
	case JCF_CONSTANT_Class: case JCF_CONSTANT_String:
	case JCF_CONSTANT_MethodHandle: case JCF_CONSTANT_MethodType:
	case JCF_CONSTANT_Dynamic:
		return 1;
	}
	return 0;
}

/* The BootstrapMethods attribute's body from HotSpot's operands OPS (LEN
 * u2: the specifiers' offsets as low/high u2 pairs, then the specifiers)
 * into W.  CVM_OK, else why not: each specifier must lie in the array,
 * name a MethodHandle and loadable arguments, and every (Invoke)Dynamic
 * entry one of the specifiers. */
static int bsm_body(const struct cpool *cp, const uint16_t *ops, uint32_t len,
		    struct cfw *w)
{
	uint32_t first = len >= 2 ? ops[0] | (uint32_t)ops[1] << 16 : 0;
	uint32_t n = first / 2;
	if (first < 2 || first % 2 || first > len || n > 65535)
		return CVM_RANGE;
	w_u2(w, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = ops[2 * i] | (uint32_t)ops[2 * i + 1] << 16;
		if (off < first || off >= len - 1 ||
		    off + 2 + (uint32_t)ops[off + 1] > len)
			return CVM_RANGE;
		if (cp_tag(cp, ops[off]) != JCF_CONSTANT_MethodHandle)
			return CVM_ENTRY;
		for (uint32_t a = 0; a < ops[off + 1]; a++)
			if (!loadable(cp_tag(cp, ops[off + 2 + a])))
				return CVM_ENTRY;
		for (uint32_t a = 0; a < 2u + ops[off + 1]; a++)
			w_u2(w, ops[off + a]);
	}
	for (uint32_t i = 1; i < cp->count; i++)
		if ((cp_tag(cp, i) == JCF_CONSTANT_Dynamic ||
		     cp_tag(cp, i) == JCF_CONSTANT_InvokeDynamic) &&
		    cp_u2(cp, i, 1) >= n)
			return CVM_ENTRY;
	return CVM_OK;
}

/* For a pool with (Invoke)Dynamic entries: the BootstrapMethods body
 * into W from the pool the methods run with, else RB_BOOTSTRAP. */
static void put_bootstrap(struct rebuild *r, struct cfw *w)
{
	uint16_t *ops = NULL;
	uint32_t len = 0;
	int why = !r->use_vm ? CVM_PARSE : !r->pool ? r->pool_why : CVM_OK;
	if (why == CVM_OK)
		why = cvm_operands_read(r->pool, r->cp.count, &ops, &len);
	if (why == CVM_OK)
		why = bsm_body(&r->cp, ops, len, w);
	free(ops);
	r->bsm_why = why;
	if (why != CVM_OK)
		fail(r, RB_BOOTSTRAP);
}

/* SourceFile if JVMTI names one; BootstrapMethods if the pool needs it. */
static void put_attributes(struct rebuild *r)
{
	struct cfw bsm = { 0 };
	char *src = NULL;
	if (r->cp.bootstrap)
		put_bootstrap(r, &bsm);
	if ((*r->e)->GetSourceFileName(r->e, r->k, &src) != JVMTI_ERROR_NONE)
		src = NULL;
	w_u2(&r->body, (src ? 1u : 0u) + (r->cp.bootstrap ? 1u : 0u));
	if (src) {
		put_index(r, cp_utf8(&r->cp, "SourceFile"));
		w_u4(&r->body, 2);
		put_index(r, cp_utf8(&r->cp, src));
	}
	if (r->cp.bootstrap) {
		put_index(r, cp_utf8(&r->cp, "BootstrapMethods"));
		w_u4(&r->body, (uint32_t)bsm.b.len);
		w_put(&r->body, bsm.b.data, bsm.b.len);
		r->body.oom |= bsm.oom;
	}
	jpb_buf_fini(&bsm.b);
	dealloc(r, src);
}

/* Magic, version, the pool with its appended entries, then the body. */
static int assemble(struct rebuild *r, jint minor, jint major, uint8_t **data,
		    size_t *size)
{
	struct cfw out = { 0 };
	w_u4(&out, 0xCAFEBABE);
	w_u2(&out, (unsigned)minor);
	w_u2(&out, (unsigned)major);
	w_u2(&out, r->cp.next);
	w_put(&out, r->cp.b, r->cp.size);
	w_put(&out, r->cp.extra.b.data, r->cp.extra.b.len);
	w_put(&out, r->body.b.data, r->body.b.len);
	if (out.oom || r->cp.extra.oom || r->body.oom) {
		jpb_buf_fini(&out.b);
		return RB_NOMEM;
	}
	struct jcf *cf = NULL;
	int rc = jcf_parse(&cf, out.b.data, out.b.len, NULL) == java_ok
			 ? RB_OK
			 : RB_PARSE;
	jcf_free(cf);
	if (rc != RB_OK) {
		jpb_buf_fini(&out.b);
		return rc;
	}
	*data = out.b.data;
	*size = out.b.len;
	return RB_OK;
}

static void build(struct rebuild *r, const char *name, uint8_t **data,
		  size_t *size)
{
	jint minor = 0, major = 0, mods = 0, count = 0, bytes = 0;
	unsigned char *pool = NULL;
	if (!ok(r, (*r->e)->GetClassVersionNumbers(r->e, r->k, &minor, &major)) ||
	    !ok(r, (*r->e)->GetClassModifiers(r->e, r->k, &mods)) ||
	    !ok(r, (*r->e)->GetConstantPool(r->e, r->k, &count, &bytes, &pool)))
		return;
	r->cp.b = pool;
	r->cp.size = (size_t)bytes;
	r->cp.count = (uint32_t)count;
	fail(r, cp_scan(&r->cp));
	if (!r->err)
		cp_hidden_name(&r->cp, pool, name, strlen(name));
	if (!r->err) {
		r->code_name = cp_utf8(&r->cp, "Code");
		r->lines_name = cp_utf8(&r->cp, "LineNumberTable");
		put_header(r, name, mods);
	}
	if (!r->err)
		put_fields(r);
	if (!r->err)
		put_methods(r);
	if (!r->err)
		put_attributes(r);
	if (!r->err && (!r->code_name || !r->lines_name))
		fail(r, RB_LIMIT);
	if (!r->err)
		fail(r, assemble(r, minor, major, data, size));
	dealloc(r, pool);
}

/* One try at rebuilding R's class, in its own local frame. */
static int attempt(struct rebuild *r, const char *name, uint8_t **data,
		   size_t *size)
{
	if ((*r->jni)->PushLocalFrame(r->jni, 16) != 0)
		return RB_JVMTI;
	build(r, name, data, size);
	(*r->jni)->PopLocalFrame(r->jni, NULL);
	free(r->cp.off);
	jpb_buf_fini(&r->cp.extra.b);
	jpb_buf_fini(&r->body.b);
	return r->err;
}

static void add_stats(struct cvm_stats *st, const struct rebuild *r)
{
	if (r->err == RB_BOOTSTRAP)
		cvm_count(&st->bootstrap_fail[r->bsm_why]);
	if (r->err != RB_OK)
		return;
	__atomic_add_fetch(&st->methods, r->vm_methods, __ATOMIC_RELAXED);
	for (int i = CVM_OK + 1; i < CVM_WHY_COUNT; i++)
		__atomic_add_fetch(&st->fallback[i], r->fallback[i],
				   __ATOMIC_RELAXED);
	if (r->cp.bootstrap)
		cvm_count(&st->bootstrap);
}

int class_rebuild(jvmtiEnv *e, JNIEnv *jni, jclass k, const char *name,
		  size_t len, struct cvm_stats *st, uint8_t **data,
		  size_t *size)
{
	struct rebuild r = { .e = e, .jni = jni, .k = k, .use_vm = 1,
			     .pool_why = CVM_NO_POOL };
	char *own = strndup(name, len);
	*data = NULL;
	if (!own)
		return RB_NOMEM;
	if (!jni) {
		free(own);
		return RB_JVMTI;
	}
	int rc = attempt(&r, own, data, size);
	if (rc == RB_PARSE && (r.vm_methods || r.cp.bootstrap)) {
		/* Tables that pass our checks but not the parser's: write
		 * the class as JVMTI alone gives it. */
		uint64_t vm = r.vm_methods;
		r = (struct rebuild){ .e = e, .jni = jni, .k = k };
		r.fallback[CVM_PARSE] = vm;
		rc = attempt(&r, own, data, size);
	}
	if (st)
		add_stats(st, &r);
	free(own);
	return rc;
}

int class_rebuild_put(struct agent *a, JNIEnv *jni, jclass k, const char *sig,
		      uint64_t loader, const char *why)
{
	size_t len, size = 0;
	uint8_t *data = NULL;
	const char *name = classes_sig_name(sig, &len);
	int rc = name ? class_rebuild(a->jvmti, jni, k, name, len, &a->cvm,
				      &data, &size)
		      : RB_JVMTI;
	if (rc == RB_OK) {
		classes_put(a, JPB_CLASS_F_REBUILT, loader, name, len, data,
			    size);
	} else {
		char reason[256];
		snprintf(reason, sizeof(reason), "%s; not rebuilt: %s", why,
			 class_rebuild_strs[rc]);
		classes_put_missing(a, jni, k, sig, reason);
	}
	free(data);
	return rc;
}
