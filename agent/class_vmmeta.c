// SPDX-License-Identifier: MIT
/*
 * Exception tables, max_stack and bootstrap specifiers from HotSpot's
 * metadata (class_vmmeta.h).
 *
 * A jmethodID is a pointer to a slot holding the Method* (JNIMethodBlock,
 * JDK 17 and 25); Method::_constMethod leads to the ConstMethod: its
 * fixed fields, then the bytecodes, then inlined tables.  Those after the
 * line numbers are found from the end (ConstMethod::_constMethod_size
 * words): annotation pointers last, before them a u2 generic signature
 * index, then the method parameters, the checked exceptions and the
 * exception table, each an array followed by its u2 length, each present
 * only if its flag is set (constMethod.cpp's *_length_addr functions and
 * the Serviceability Agent's ConstMethod.java, the same on 17 and 25).
 * VMStructs give the field offsets, the flag bits (ConstMethod::_has_*
 * on 17, ConstMethodFlags::_misc_has_* on 25), the element types' sizes
 * and fields, and HeapWordSize; it is silent on the tables' order, which
 * is therefore fixed here, and on the annotation pointers' size (a
 * pointer).
 *
 * ConstantPool::_operands is an Array<u2>: first, per bootstrap
 * specifier, its offset in the array as two u2 (low, high); then each
 * specifier: method handle index, argument count, arguments
 * (constantPool.hpp; ConstantPool::_indy_*_offset in VMStructs).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_vmmeta.h"
#include "vmstructs.h"

#define MAX_HDR 256          /* sizeof(ConstMethod): 48 on 17, 56 on 25 */
#define MAX_CM (1u << 22)    /* a ConstMethod's size: code < 64 KiB */
#define MAX_OPERANDS (1 << 20)

struct fld {
	uint64_t off, size; /* size 0: absent */
};

static struct {
	int ok, ops_ok;
	uint64_t m_const;  /* Method::_constMethod */
	uint64_t hdr;      /* sizeof(ConstMethod): the code follows */
	struct fld constants, size, flags, code_size, name, sig, max_stack,
		max_locals;
	uint32_t f_exc, f_checked, f_generic, f_params, f_annot;
	int32_t word;
	uint64_t exc_size, chk_size, par_size;
	struct fld e_start, e_end, e_handler, e_catch;
	uint64_t cp_length, cp_operands, arr_len, arr_data;
	int32_t bsm_off, argc_off, argv_off;
} L;
static pthread_once_t l_once = PTHREAD_ONCE_INIT;

static const char *const why_strs[CVM_WHY_COUNT] = {
	[CVM_OK] = "ok",
	[CVM_NO_LAYOUT] = "VMStructs lack a needed entry",
	[CVM_UNREADABLE] = "VM memory unreadable",
	[CVM_MISMATCH] = "metadata disagrees with JVMTI",
	[CVM_RANGE] = "size or table out of range",
	[CVM_ENTRY] = "entry outside the code or the constant pool",
	[CVM_PARSE] = "class file with them does not parse",
	[CVM_NOMEM] = "out of memory",
	[CVM_NO_POOL] = "no method leads to the constant pool",
};

const char *cvm_whystr(int why)
{
	return why >= 0 && why < CVM_WHY_COUNT ? why_strs[why] : "?";
}

static int field(const char *type, const char *name, struct fld *f)
{
	if (vms_field_info(type, name, &f->off, &f->size) != 0 ||
	    f->size > 8 || f->off + f->size > MAX_HDR)
		f->size = 0;
	return f->size ? 0 : -1;
}

/* A ConstMethod flag bit: named on 17, in ConstMethodFlags on 25. */
static uint32_t flag_bit(const char *has)
{
	char a[96], b[96];
	int32_t v;
	snprintf(a, sizeof(a), "ConstMethod::_has_%s", has);
	snprintf(b, sizeof(b), "ConstMethodFlags::_misc_has_%s", has);
	if (vms_int_constant(a, &v) != 0 && vms_int_constant(b, &v) != 0)
		return 0;
	return v > 0 && !(v & (v - 1)) ? (uint32_t)v : 0;
}

static int load_elements(void)
{
	const char *e = "ExceptionTableElement";
	return vms_type_size(e, &L.exc_size) != 0 ||
	       vms_type_size("CheckedExceptionElement", &L.chk_size) != 0 ||
	       vms_type_size("MethodParametersElement", &L.par_size) != 0 ||
	       vms_field_info(e, "start_pc", &L.e_start.off, &L.e_start.size) ||
	       vms_field_info(e, "end_pc", &L.e_end.off, &L.e_end.size) ||
	       vms_field_info(e, "handler_pc", &L.e_handler.off,
			      &L.e_handler.size) ||
	       vms_field_info(e, "catch_type_index", &L.e_catch.off,
			      &L.e_catch.size) ||
	       L.exc_size > 64 ? -1 : 0;
}

static int load_method(void)
{
	const char *c = "ConstMethod";
	uint32_t annot[4] = { flag_bit("method_annotations"),
			      flag_bit("parameter_annotations"),
			      flag_bit("type_annotations"),
			      flag_bit("default_annotations") };
	L.f_exc = flag_bit("exception_table");
	L.f_checked = flag_bit("checked_exceptions");
	L.f_generic = flag_bit("generic_signature");
	L.f_params = flag_bit("method_parameters");
	for (int i = 0; i < 4; i++) {
		if (!annot[i])
			return -1;
		L.f_annot |= annot[i];
	}
	if (field(c, "_flags", &L.flags) != 0 &&
	    field(c, "_flags._flags", &L.flags) != 0)
		return -1;
	return vms_field_offset("Method", "_constMethod", &L.m_const) != 0 ||
	       vms_type_size(c, &L.hdr) != 0 || L.hdr > MAX_HDR ||
	       field(c, "_constants", &L.constants) ||
	       field(c, "_constMethod_size", &L.size) ||
	       field(c, "_code_size", &L.code_size) ||
	       field(c, "_name_index", &L.name) ||
	       field(c, "_signature_index", &L.sig) ||
	       field(c, "_max_stack", &L.max_stack) ||
	       field(c, "_max_locals", &L.max_locals) ||
	       vms_int_constant("HeapWordSize", &L.word) != 0 ||
	       L.word <= 0 || L.constants.size != sizeof(void *) ||
	       !L.f_exc || !L.f_checked || !L.f_generic || !L.f_params
		       ? -1
		       : load_elements();
}

static int load_operands(void)
{
	uint64_t sz;
	/* Array<u2>'s length is not named; every Array<T> has it first,
	 * as Array<int> shows. */
	return vms_field_offset("ConstantPool", "_length", &L.cp_length) ||
	       vms_field_offset("ConstantPool", "_operands", &L.cp_operands) ||
	       vms_field_offset("Array<int>", "_length", &L.arr_len) ||
	       vms_field_offset("Array<u2>", "_data", &L.arr_data) ||
	       vms_type_size("Array<u2>", &sz) ||
	       vms_int_constant("ConstantPool::_indy_bsm_offset", &L.bsm_off) ||
	       vms_int_constant("ConstantPool::_indy_argc_offset",
				&L.argc_off) ||
	       vms_int_constant("ConstantPool::_indy_argv_offset",
				&L.argv_off) ||
	       L.bsm_off != 0 || L.argc_off != 1 || L.argv_off != 2
		       ? -1
		       : 0;
}

static void init_once(void)
{
	if (vms_init() != 0)
		return;
	L.ok = load_method() == 0;
	L.ops_ok = load_operands() == 0;
}

static uint64_t get(const uint8_t *p, struct fld f)
{
	uint64_t v = 0;
	memcpy(&v, p + f.off, f.size); /* little-endian host */
	return v;
}

static unsigned popcount(uint32_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/* Step AT back over the table whose u2 length is at AT (elements of
 * ELEM bytes before it): AT is then the next table's length. */
static int skip_table(const uint8_t *t, int64_t *at, uint64_t elem)
{
	uint16_t len;
	if (*at < 0)
		return -1;
	memcpy(&len, t + *at, 2);
	*at -= (int64_t)(len * elem) + 2;
	return 0;
}

/* The exception table in T, the N bytes after the bytecodes. */
static int exc_table(const uint8_t *t, size_t n, uint32_t flags,
		     uint32_t code_len, struct cvm_method *out)
{
	int64_t at = (int64_t)n - (int64_t)(popcount(flags & L.f_annot) *
					    sizeof(void *)) - 2;
	uint16_t len;
	if (flags & L.f_generic)
		at -= 2;
	if (((flags & L.f_params) && skip_table(t, &at, L.par_size)) ||
	    ((flags & L.f_checked) && skip_table(t, &at, L.chk_size)) ||
	    at < 0)
		return CVM_RANGE;
	memcpy(&len, t + at, 2);
	int64_t start = at - (int64_t)(len * L.exc_size);
	if (!len || start < 0)
		return CVM_RANGE;
	out->exc = calloc(len, sizeof(*out->exc));
	if (!out->exc)
		return CVM_NOMEM;
	out->nexc = len;
	for (uint16_t i = 0; i < len; i++) {
		const uint8_t *e = t + start + i * L.exc_size;
		struct cvm_exc *x = &out->exc[i];
		x->start_pc = (uint16_t)get(e, L.e_start);
		x->end_pc = (uint16_t)get(e, L.e_end);
		x->handler_pc = (uint16_t)get(e, L.e_handler);
		x->catch_type = (uint16_t)get(e, L.e_catch);
		if (x->start_pc >= x->end_pc || x->end_pc > code_len ||
		    x->handler_pc >= code_len)
			return CVM_ENTRY;
	}
	return CVM_OK;
}

static int read_method(const void *m, uint32_t code_len, uint32_t max_locals,
		       struct cvm_method *out)
{
	uint64_t method, cm;
	uint8_t h[MAX_HDR];
	pthread_once(&l_once, init_once);
	if (!L.ok)
		return CVM_NO_LAYOUT;
	if (vms_read_u64((uint64_t)(uintptr_t)m, &method) != 0 ||
	    vms_read_u64(method + L.m_const, &cm) != 0 ||
	    vms_read(cm, h, L.hdr) != 0)
		return CVM_UNREADABLE;
	uint64_t total = get(h, L.size) * (uint64_t)L.word;
	uint64_t code = get(h, L.code_size);
	uint32_t flags = (uint32_t)get(h, L.flags);
	if (code != code_len || get(h, L.max_locals) != max_locals)
		return CVM_MISMATCH;
	if (total > MAX_CM || total < L.hdr + code)
		return CVM_RANGE;
	out->pool = get(h, L.constants);
	out->name_index = (uint16_t)get(h, L.name);
	out->sig_index = (uint16_t)get(h, L.sig);
	out->max_stack = (uint16_t)get(h, L.max_stack);
	if (!(flags & L.f_exc))
		return CVM_OK;
	size_t n = total - L.hdr - code;
	uint8_t *t = malloc(n ? n : 1);
	if (!t)
		return CVM_NOMEM;
	int why = vms_read(cm + L.hdr + code, t, n) != 0
			  ? CVM_UNREADABLE
			  : exc_table(t, n, flags, code_len, out);
	free(t);
	return why;
}

int cvm_method_read(const void *m, uint32_t code_len, uint32_t max_locals,
		    struct cvm_method *out)
{
	memset(out, 0, sizeof(*out));
	int why = read_method(m, code_len, max_locals, out);
	if (why != CVM_OK)
		cvm_method_fini(out);
	return why;
}

void cvm_method_fini(struct cvm_method *m)
{
	free(m->exc);
	m->exc = NULL;
	m->nexc = 0;
}

int cvm_operands_read(uint64_t pool, uint32_t count, uint16_t **ops,
		      uint32_t *len)
{
	int32_t n, k;
	uint64_t arr;
	*ops = NULL;
	*len = 0;
	pthread_once(&l_once, init_once);
	if (!L.ops_ok)
		return CVM_NO_LAYOUT;
	if (vms_read_i32(pool + L.cp_length, &n) != 0 ||
	    vms_read_u64(pool + L.cp_operands, &arr) != 0)
		return CVM_UNREADABLE;
	if (n < 0 || (uint32_t)n != count)
		return CVM_MISMATCH;
	if (!arr)
		return CVM_OK;
	if (vms_read_i32(arr + L.arr_len, &k) != 0)
		return CVM_UNREADABLE;
	if (k < 0 || k > MAX_OPERANDS)
		return CVM_RANGE;
	if (!k)
		return CVM_OK;
	uint16_t *v = malloc((size_t)k * 2);
	if (!v)
		return CVM_NOMEM;
	if (vms_read(arr + L.arr_data, v, (size_t)k * 2) != 0) {
		free(v);
		return CVM_UNREADABLE;
	}
	*ops = v;
	*len = (uint32_t)k;
	return CVM_OK;
}

void cvm_count(uint64_t *counter)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

static size_t list_why(char *buf, size_t size, const uint64_t *n)
{
	size_t off = 0;
	for (int i = CVM_OK + 1; i < CVM_WHY_COUNT && off < size; i++) {
		uint64_t v = __atomic_load_n(&n[i], __ATOMIC_RELAXED);
		if (v)
			off += (size_t)snprintf(buf + off, size - off, "%s%s %llu",
						off ? ", " : "", why_strs[i],
						(unsigned long long)v);
	}
	if (!off)
		off = (size_t)snprintf(buf, size, "none");
	return off;
}

void cvm_stats_str(const struct cvm_stats *s, char *buf, size_t size)
{
	char fb[256], bf[256];
	uint64_t nfb = 0, nbf = 0;
	for (int i = CVM_OK + 1; i < CVM_WHY_COUNT; i++) {
		nfb += __atomic_load_n(&s->fallback[i], __ATOMIC_RELAXED);
		nbf += __atomic_load_n(&s->bootstrap_fail[i], __ATOMIC_RELAXED);
	}
	list_why(fb, sizeof(fb), s->fallback);
	list_why(bf, sizeof(bf), s->bootstrap_fail);
	snprintf(buf, size, "%llu rebuilt methods with exception tables and "
		 "max_stack from HotSpot's metadata, %llu without (%s); %llu "
		 "rebuilt classes with BootstrapMethods, %llu not (%s)",
		 (unsigned long long)__atomic_load_n(&s->methods,
						     __ATOMIC_RELAXED),
		 (unsigned long long)nfb, fb,
		 (unsigned long long)__atomic_load_n(&s->bootstrap,
						     __ATOMIC_RELAXED),
		 (unsigned long long)nbf, bf);
}
