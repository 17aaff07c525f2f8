/* SPDX-License-Identifier: MIT */
/*
 * A tiny class file assembler for the Java program model's unit tests:
 * hand-made classes with exactly the constant pool entries, methods,
 * exception tables and attributes a test needs.  Aborts on misuse; the
 * output is malloc'ed.
 */
#ifndef JPBPF_TEST_JCLASS_BUILD_H
#define JPBPF_TEST_JCLASS_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct jb_buf {
	uint8_t *p;
	size_t n, cap;
};

struct jb {
	struct jb_buf cp, ifaces, methods, attrs;
	uint16_t ncp, nifaces, nmethods, nattrs;
	uint16_t access, this_idx, super_idx;
	uint16_t major;
};

struct jb_exc {
	uint16_t start, end, handler;
	const char *type; /* NULL = any */
};

static inline void jb_put(struct jb_buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static inline void jb_u1(struct jb_buf *b, unsigned v)
{
	uint8_t x = (uint8_t)v;
	jb_put(b, &x, 1);
}

static inline void jb_u2(struct jb_buf *b, unsigned v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	jb_put(b, x, 2);
}

static inline void jb_u4(struct jb_buf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };
	jb_put(b, x, 4);
}

/* Append raw constant pool bytes taking SLOTS slots; returns the index. */
static inline uint16_t jb_cp_raw(struct jb *j, const void *p, size_t n,
				 unsigned slots)
{
	uint16_t idx = (uint16_t)(j->ncp + 1);
	jb_put(&j->cp, p, n);
	j->ncp = (uint16_t)(j->ncp + slots);
	return idx;
}

static inline uint16_t jb_utf8(struct jb *j, const char *s)
{
	struct jb_buf b = { 0 };
	jb_u1(&b, 1);
	jb_u2(&b, (unsigned)strlen(s));
	jb_put(&b, s, strlen(s));
	uint16_t idx = jb_cp_raw(j, b.p, b.n, 1);
	free(b.p);
	return idx;
}

/* An entry of TAG with one or two u2 operands (B < 0: one). */
static inline uint16_t jb_cp2(struct jb *j, unsigned tag, unsigned a, int b)
{
	uint8_t x[5] = { (uint8_t)tag, (uint8_t)(a >> 8), (uint8_t)a,
			 (uint8_t)(b >> 8), (uint8_t)b };
	return jb_cp_raw(j, x, b < 0 ? 3 : 5, 1);
}

static inline uint16_t jb_class(struct jb *j, const char *name)
{
	return jb_cp2(j, 7, jb_utf8(j, name), -1);
}

static inline uint16_t jb_nat(struct jb *j, const char *name,
			      const char *desc)
{
	uint16_t n = jb_utf8(j, name), d = jb_utf8(j, desc);
	return jb_cp2(j, 12, n, d);
}

/* Fieldref (9), Methodref (10) or InterfaceMethodref (11). */
static inline uint16_t jb_ref(struct jb *j, unsigned tag, const char *cls,
			      const char *name, const char *desc)
{
	uint16_t c = jb_class(j, cls), nt = jb_nat(j, name, desc);
	return jb_cp2(j, tag, c, nt);
}

static inline uint16_t jb_method_handle(struct jb *j, unsigned kind,
					unsigned ref)
{
	uint8_t x[4] = { 15, (uint8_t)kind, (uint8_t)(ref >> 8),
			 (uint8_t)ref };
	return jb_cp_raw(j, x, 4, 1);
}

static inline void jb_init(struct jb *j, const char *name, const char *super,
			   unsigned access)
{
	memset(j, 0, sizeof(*j));
	j->major = 61;
	j->access = (uint16_t)access;
	j->this_idx = jb_class(j, name);
	j->super_idx = super ? jb_class(j, super) : 0;
}

static inline void jb_iface(struct jb *j, const char *name)
{
	jb_u2(&j->ifaces, jb_class(j, name));
	j->nifaces++;
}

/* A method; CODE NULL gives no Code attribute (abstract/native).  LINES
 * holds NLINES (start_pc, line) pairs. */
static inline void jb_method(struct jb *j, unsigned access, const char *name,
			     const char *desc, const uint8_t *code,
			     size_t code_len, const struct jb_exc *exc,
			     unsigned nexc, const uint16_t *lines,
			     unsigned nlines)
{
	struct jb_buf *m = &j->methods;
	uint16_t n = jb_utf8(j, name), d = jb_utf8(j, desc);
	jb_u2(m, access);
	jb_u2(m, n);
	jb_u2(m, d);
	jb_u2(m, code ? 1 : 0);
	j->nmethods++;
	if (!code)
		return;
	uint16_t code_name = jb_utf8(j, "Code");
	uint16_t lnt_name = nlines ? jb_utf8(j, "LineNumberTable") : 0;
	uint16_t types[16];
	for (unsigned i = 0; i < nexc && i < 16; i++)
		types[i] = exc[i].type ? jb_class(j, exc[i].type) : 0;
	uint32_t lnt_len = nlines ? 8 + 4 * nlines : 0;
	jb_u2(m, code_name);
	jb_u4(m, (uint32_t)(12 + code_len + 8 * nexc + lnt_len));
	jb_u2(m, 8);  /* max_stack */
	jb_u2(m, 8);  /* max_locals */
	jb_u4(m, (uint32_t)code_len);
	jb_put(m, code, code_len);
	jb_u2(m, nexc);
	for (unsigned i = 0; i < nexc; i++) {
		jb_u2(m, exc[i].start);
		jb_u2(m, exc[i].end);
		jb_u2(m, exc[i].handler);
		jb_u2(m, i < 16 ? types[i] : 0);
	}
	jb_u2(m, nlines ? 1 : 0);
	if (nlines) {
		jb_u2(m, lnt_name);
		jb_u4(m, 2 + 4 * nlines);
		jb_u2(m, nlines);
		for (unsigned i = 0; i < 2 * nlines; i++)
			jb_u2(m, lines[i]);
	}
}

/* A class attribute with raw contents. */
static inline void jb_attr(struct jb *j, const char *name, const void *p,
			   size_t n)
{
	jb_u2(&j->attrs, jb_utf8(j, name));
	jb_u4(&j->attrs, (uint32_t)n);
	jb_put(&j->attrs, p, n);
	j->nattrs++;
}

static inline uint8_t *jb_finish(struct jb *j, size_t *len)
{
	struct jb_buf o = { 0 };
	jb_u4(&o, 0xCAFEBABEu);
	jb_u2(&o, 0);
	jb_u2(&o, j->major);
	jb_u2(&o, j->ncp + 1u);
	jb_put(&o, j->cp.p, j->cp.n);
	jb_u2(&o, j->access);
	jb_u2(&o, j->this_idx);
	jb_u2(&o, j->super_idx);
	jb_u2(&o, j->nifaces);
	jb_put(&o, j->ifaces.p, j->ifaces.n);
	jb_u2(&o, 0); /* fields */
	jb_u2(&o, j->nmethods);
	jb_put(&o, j->methods.p, j->methods.n);
	jb_u2(&o, j->nattrs);
	jb_put(&o, j->attrs.p, j->attrs.n);
	free(j->cp.p);
	free(j->ifaces.p);
	free(j->methods.p);
	free(j->attrs.p);
	memset(j, 0, sizeof(*j));
	*len = o.n;
	return o.p;
}

#endif /* JPBPF_TEST_JCLASS_BUILD_H */
