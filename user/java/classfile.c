// SPDX-License-Identifier: MIT
/* Class file parser (JVMS §4).  Reads through a cursor whose error is
 * sticky: the first failure records its offset and every later read
 * returns zeros, so the structure walkers check once per structure. */
#include "java/classfile.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle/codec.h"
#include "java/bytecodes.h"

/* The constant pool starts after magic, versions and its count. */
#define CP_START 10

/* A jcf keeps two parts of the class file: the constant pool's bytes
 * (names are most of a class) and the methods' code; the rest (fields,
 * other attributes, StackMapTables: about a third of jython's class
 * bytes) is parsed and dropped. */
/* Where an arena's end was, to go back to. */
struct arena_mark {
	struct chunk *top;
	size_t used;
	size_t taken; /* jcf_arena_size */
};

struct jcf {
	/* its arena when jcf_parse made one for it alone, else NULL */
	struct jcf_arena *own;
	struct jcf_arena *arena;
	struct arena_mark start; /* the arena's end before this class */
	char *pool;    /* file bytes [CP_START, end of pool), see keep_pool */
	uint8_t *code; /* every method's code, in method order */
	/* Every method's exception and line tables, in method order: two
	 * blocks, not two per method (place_tables); gathered in the
	 * arena's scratch tables while the class is parsed. */
	struct jcf_exc *exc_tab;
	size_t exc_count;
	struct jcf_line *line_tab;
	size_t line_count;
	unsigned major, minor;
	uint16_t access;
	uint16_t this_idx, super_idx;
	uint16_t ncp;
	uint16_t ndynamic; /* Dynamic and InvokeDynamic entries */
	struct jcf_cpe *cp;
	uint8_t *tags; /* per entry, after cp: apart, an entry is 8 bytes */
	uint16_t nifaces;
	uint16_t *ifaces;
	uint16_t nmethods;
	struct jcf_method *methods;
	uint32_t *name_hash; /* per method, after them: jcf_method_find
			     * compares these first */
	uint64_t name_bits;  /* bit hash % 64 of every method name: most
			      * classes of a chain lack the name asked for */
	/* a class of NAME_TAB_MIN methods or more: their indices + 1 by name
	 * hash (linear probing, 0 empty; name_mask + 1 slots, after
	 * name_hash), so that a lookup does not scan them all */
	uint16_t *name_tab;
	uint32_t name_mask;
	uint16_t source_idx;
	uint16_t nbsm;
	struct jcf_bootstrap *bsm;
	uint16_t *bsm_args;
};

struct cursor {
	const uint8_t *p;
	size_t len, pos;
	int err;
	struct java_diag *diag;
	struct jcf_arena *arena;
};

/* ---- arena -------------------------------------------------------------- */

/* A chunk's room follows its header; 16 bytes keep it aligned. */
struct chunk {
	struct chunk *prev;
	size_t size;
};

/* Chunks start small, for a class parsed alone, and grow to CHUNK_MAX. */
#define CHUNK_MIN (4u << 10)
#define CHUNK_MAX (256u << 10)

struct jcf_arena {
	struct chunk *top; /* the chunk allocated from, NULL before any */
	size_t used;       /* bytes of top's room taken */
	size_t taken;      /* in all chunks, alignment included */
	size_t next_size;
	const struct jcf *last; /* the class parsed last, while its room is
				 * the arena's end (jcf_free gives it back) */
	/* A class's tables as they are read, before place_tables copies
	 * them out: reused by every class, so they grow a few times in
	 * all, not a few times a class. */
	struct jcf_exc *exc;
	size_t exc_cap;
	struct jcf_line *lines;
	size_t lines_cap;
};

int jcf_arena_alloc(struct jcf_arena **out)
{
	if (!out)
		return java_err_invalid;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return java_err_nomem;
	(*out)->next_size = CHUNK_MIN;
	return java_ok;
}

static struct arena_mark arena_mark(const struct jcf_arena *a)
{
	return (struct arena_mark){ a->top, a->used, a->taken };
}

/* Free the chunks taken since M, and its room after M. */
static void arena_reset(struct jcf_arena *a, struct arena_mark m)
{
	while (a->top != m.top) {
		struct chunk *prev = a->top->prev;
		free(a->top);
		a->top = prev;
	}
	a->used = m.used;
	a->taken = m.taken;
}

size_t jcf_arena_size(const struct jcf_arena *a)
{
	return a->taken;
}

void jcf_arena_free(struct jcf_arena *a)
{
	if (!a)
		return;
	arena_reset(a, (struct arena_mark){ NULL, 0, 0 });
	free(a->exc);
	free(a->lines);
	free(a);
}

/* N bytes, 8-aligned.  Under ASan each block is a chunk of its own, so
 * that its bounds are checked as a malloc's are. */
static void *arena_take(struct jcf_arena *a, size_t n)
{
	size_t at = (a->used + 7) & ~(size_t)7;
#ifdef __SANITIZE_ADDRESS__
	at = SIZE_MAX;
#endif
	if (!a->top || at > a->top->size || n > a->top->size - at) {
		size_t size = n > a->next_size ? n : a->next_size;
#ifdef __SANITIZE_ADDRESS__
		size = n;
#endif
		if (size > SIZE_MAX - sizeof(struct chunk))
			return NULL;
		struct chunk *c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->prev = a->top;
		c->size = size;
		a->top = c;
		if (a->next_size < CHUNK_MAX)
			a->next_size *= 2;
		at = a->used = 0;
	}
	a->taken += at + n - a->used;
	a->used = at + n;
	return (char *)(a->top + 1) + at;
}

static const char *const errstr[] = {
	[0] = "success",
	[1] = "out of memory",
	[2] = "invalid argument",
	[3] = "class file truncated",
	[4] = "not a class file (bad magic)",
	[5] = "unsupported class file version",
	[6] = "bad constant pool entry",
	[7] = "corrupt class file",
	[8] = "invalid bytecode",
	[9] = "not found",
	[10] = "method has no code",
};

const char *java_errstr(int err)
{
	unsigned i = err < 0 ? (unsigned)-err : (unsigned)err;
	if (i >= sizeof(errstr) / sizeof(errstr[0]))
		return "unknown error";
	return errstr[i];
}

/* Record the first failure only; the first one is the cause. */
__attribute__((format(printf, 4, 5)))
static int fail(struct cursor *c, int err, size_t off, const char *fmt, ...)
{
	if (c->err)
		return c->err;
	c->err = err;
	if (c->diag) {
		va_list ap;
		int n;
		c->diag->err = err;
		c->diag->offset = off;
		n = snprintf(c->diag->msg, sizeof(c->diag->msg),
			     "class file: offset %zu: ", off);
		va_start(ap, fmt);
		if (n > 0 && (size_t)n < sizeof(c->diag->msg))
			vsnprintf(c->diag->msg + n, sizeof(c->diag->msg) - n,
				  fmt, ap);
		va_end(ap);
	}
	return err;
}

static int truncated(struct cursor *c, size_t n, const char *what)
{
	fail(c, java_err_truncated, c->pos, "%s needs %zu bytes, %zu left",
	     what, n, c->len - c->pos);
	return 0;
}

/* The readers are inline, the failure is not: a class file is 1.5 M u2
 * reads in jython, and each was a call. */
static inline int need(struct cursor *c, size_t n, const char *what)
{
	if (c->err)
		return 0;
	if (n > c->len - c->pos)
		return truncated(c, n, what);
	return 1;
}

static inline uint8_t u1(struct cursor *c, const char *what)
{
	if (!need(c, 1, what))
		return 0;
	return c->p[c->pos++];
}

static inline uint16_t u2(struct cursor *c, const char *what)
{
	if (!need(c, 2, what))
		return 0;
	uint16_t v = (uint16_t)(c->p[c->pos] << 8 | c->p[c->pos + 1]);
	c->pos += 2;
	return v;
}

static inline uint32_t u4(struct cursor *c, const char *what)
{
	if (!need(c, 4, what))
		return 0;
	const uint8_t *p = c->p + c->pos;
	c->pos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void skip(struct cursor *c, size_t n, const char *what)
{
	if (need(c, n, what))
		c->pos += n;
}

/* ---- constant pool ------------------------------------------------------ */

/* The first byte of S[0, N) that modified UTF-8 forbids (see
 * forbidden_bytes), or N. */
static size_t utf8_bad_byte(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] && s[i] < 0xf0)
		i++;
	return i;
}

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Sixteen bytes as one value (GCC's and clang's vector extension: SSE2
 * on x86-64, plain code elsewhere). */
typedef uint8_t bytes16 __attribute__((vector_size(16)));

/* 0xff where a byte of V is one modified UTF-8 forbids: NUL (which would
 * also cut our C string short) or 0xF0-0xFF, in one compare: less one,
 * both are 0xEF-0xFF and no other byte is. */
static inline bytes16 forbidden_bytes(bytes16 v)
{
	return (bytes16)((bytes16)(v - 1) >= 0xef);
}

/* The bytes of the text S[0, N) that modified UTF-8 forbids, as 0xff
 * lanes.  Names are most of a class file, so sixteen bytes are checked
 * at once.  The last sixteen end at the text's end: they overlap the
 * ones before or, for a shorter text, start in its length field and the
 * entries before (the caller sees that sixteen bytes of the class file
 * end there), and the lanes that are not the text's are masked off. */
static inline bytes16 utf8_forbidden(const uint8_t *s, size_t n)
{
	/* Loaded at r, the lanes of a window's last r bytes. */
	static const uint8_t last[32] = { [16] = 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff };
	bytes16 v, mask, bad = { 0 };
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		memcpy(&v, s + i, 16);
		bad |= forbidden_bytes(v);
	}
	if (i < n) {
		memcpy(&v, s + n - 16, 16);
		memcpy(&mask, last + (n - i), 16);
		bad |= forbidden_bytes(v) & mask;
	}
	return bad;
}

/* The N bytes of a Utf8 text at the cursor, byte by byte (read_entries
 * has the fast check). */
static void read_utf8_text(struct cursor *c, size_t n)
{
	if (!need(c, n, "Utf8 bytes"))
		return;
	const uint8_t *s = c->p + c->pos;
	size_t bad = utf8_bad_byte(s, n);
	if (bad < n) {
		fail(c, java_err_bad_cpool, c->pos + bad,
		     "Utf8 byte 0x%02x not allowed", s[bad]);
		return;
	}
	c->pos += n;
}

/* Bytes after the tag by tag, 0 for none (see jcf_cp_entry_size); a
 * slot for every byte, so that read_entries looks a tag up unchecked. */
static const int8_t entry_size[256] = {
	[JCF_CONSTANT_Utf8] = -1,
	[JCF_CONSTANT_Class] = 2, [JCF_CONSTANT_String] = 2,
	[JCF_CONSTANT_MethodType] = 2, [JCF_CONSTANT_Module] = 2,
	[JCF_CONSTANT_Package] = 2,
	[JCF_CONSTANT_MethodHandle] = 3,
	[JCF_CONSTANT_Long] = 8, [JCF_CONSTANT_Double] = 8,
	[JCF_CONSTANT_Integer] = 4, [JCF_CONSTANT_Float] = 4,
	[JCF_CONSTANT_Fieldref] = 4, [JCF_CONSTANT_Methodref] = 4,
	[JCF_CONSTANT_InterfaceMethodref] = 4,
	[JCF_CONSTANT_NameAndType] = 4,
	[JCF_CONSTANT_Dynamic] = 4, [JCF_CONSTANT_InvokeDynamic] = 4,
};

static inline int cpe_size(unsigned tag)
{
	return tag < sizeof(entry_size) ? entry_size[tag] : 0;
}

int jcf_cp_entry_size(unsigned tag)
{
	return cpe_size(tag);
}

/* A Utf8 or number entry whose tag is AT bytes into the pool (see
 * struct jcf_cpe): the pool's offset in the entry's two fields, as
 * such an entry has no indices.  Four bytes an entry, not eight. */
static inline struct jcf_cpe at_entry(size_t at)
{
	struct jcf_cpe e;
	uint32_t v = (uint32_t)at;
	memcpy(&e, &v, sizeof(e));
	return e;
}

static inline uint32_t entry_at(const struct jcf_cpe *e)
{
	uint32_t v;
	memcpy(&v, e, sizeof(v));
	return v;
}

/* Read one entry, field by field, each read checked (read_entries has
 * the fast walk); returns the number of slots it takes (2 for Long and
 * Double), 0 on error. */
static int read_cpe(struct cursor *c, struct jcf *cf, unsigned i)
{
	struct jcf_cpe *e = &cf->cp[i];
	size_t off = c->pos;
	*e = at_entry(off - CP_START); /* kept by a Utf8 and a number */
	uint8_t tag = u1(c, "constant pool tag");
	cf->tags[i] = tag;
	switch (cpe_size(tag)) {
	case -1:
		read_utf8_text(c, u2(c, "Utf8 length"));
		return 1;
	case 2:
		e->a = u2(c, "constant index");
		e->b = 0;
		return 1;
	case 3:
		e->a = u1(c, "reference kind");
		e->b = u2(c, "reference index");
		return 1;
	case 4:
		if (tag == JCF_CONSTANT_Dynamic ||
		    tag == JCF_CONSTANT_InvokeDynamic)
			cf->ndynamic++;
		/* Numbers stay in the class bytes (jcf_cp_value). */
		if (tag == JCF_CONSTANT_Integer || tag == JCF_CONSTANT_Float) {
			skip(c, 4, "constant");
		} else {
			e->a = u2(c, "constant index");
			e->b = u2(c, "constant index");
		}
		return 1;
	case 8:
		skip(c, 8, "constant");
		return 2;
	}
	if (!c->err)
		fail(c, java_err_bad_cpool, off,
		     "constant pool entry %u: unknown tag %u", i, tag);
	return 0;
}

/* tags[0] is 0 (read_cpool), so index 0 needs no test of its own. */
static int cp_tag(const struct jcf *cf, unsigned idx)
{
	return idx < cf->ncp ? cf->tags[idx] : 0;
}

/* The pool's copy of the entry IDX after its tag, for a Utf8 or a
 * number. */
static const char *after_tag(const struct jcf *cf, unsigned idx)
{
	return cf->pool + entry_at(&cf->cp[idx]) + 1;
}

/* The length of the Utf8 IDX, before its text in the pool's copy. */
static unsigned utf8_len(const struct jcf *cf, unsigned idx)
{
	return be16((const uint8_t *)after_tag(cf, idx));
}

/* The file offset of the entry I, for a message: entries other than a
 * Utf8 or a number do not keep theirs, so the pool's copy is walked up
 * to it (its tag bytes may be NULs by then: cf->tags has them). */
static size_t entry_offset(const struct jcf *cf, unsigned i)
{
	size_t at = 0;
	for (unsigned j = 1; j < i; j++) {
		int size = cpe_size(cf->tags[j]);
		if (size < 0)
			at += 3 + (size_t)be16((const uint8_t *)cf->pool + at + 1);
		else
			at += size ? 1 + (size_t)size : 0; /* 0: after a Long */
	}
	return CP_START + at;
}

/* The NUL-terminated text of the Utf8 entry IDX, after its tag and
 * length (see keep_pool). */
static const char *utf8_at(const struct jcf *cf, unsigned idx)
{
	return after_tag(cf, idx) + 2;
}

/* Does the reference from entry I (field a or b) point at tag WANT? */
static int check_ref(struct cursor *c, const struct jcf *cf, unsigned i,
		     unsigned idx, int want)
{
	if (cp_tag(cf, idx) == want)
		return 1;
	fail(c, java_err_bad_cpool, entry_offset(cf, i),
	     "constant pool entry %u (tag %u) refers to #%u (tag %d), "
	     "expected tag %d", i, cf->tags[i], idx, cp_tag(cf, idx), want);
	return 0;
}

static int check_method_handle(struct cursor *c, const struct jcf *cf,
			       unsigned i)
{
	const struct jcf_cpe *e = &cf->cp[i];
	int t = cp_tag(cf, e->b);
	int ok;
	switch (e->a) {
	case 1: case 2: case 3: case 4: /* getField .. putStatic */
		ok = t == JCF_CONSTANT_Fieldref;
		break;
	case 5: case 8: /* invokeVirtual, newInvokeSpecial */
		ok = t == JCF_CONSTANT_Methodref;
		break;
	case 6: case 7: /* invokeStatic, invokeSpecial (interface ok >= 52) */
		ok = t == JCF_CONSTANT_Methodref ||
		     (t == JCF_CONSTANT_InterfaceMethodref && cf->major >= 52);
		break;
	case 9:
		ok = t == JCF_CONSTANT_InterfaceMethodref;
		break;
	default:
		fail(c, java_err_bad_cpool, entry_offset(cf, i),
		     "constant pool entry %u: MethodHandle kind %u", i, e->a);
		return 0;
	}
	if (!ok)
		fail(c, java_err_bad_cpool, entry_offset(cf, i),
		     "constant pool entry %u: MethodHandle kind %u refers to "
		     "#%u (tag %d)", i, e->a, e->b, t);
	return ok;
}

static int check_cpe(struct cursor *c, const struct jcf *cf, unsigned i)
{
	const struct jcf_cpe *e = &cf->cp[i];
	switch (cf->tags[i]) {
	case JCF_CONSTANT_Class:
	case JCF_CONSTANT_String:
	case JCF_CONSTANT_MethodType:
	case JCF_CONSTANT_Module:
	case JCF_CONSTANT_Package:
		return check_ref(c, cf, i, e->a, JCF_CONSTANT_Utf8);
	case JCF_CONSTANT_Fieldref:
	case JCF_CONSTANT_Methodref:
	case JCF_CONSTANT_InterfaceMethodref:
		return check_ref(c, cf, i, e->a, JCF_CONSTANT_Class) &&
		       check_ref(c, cf, i, e->b, JCF_CONSTANT_NameAndType);
	case JCF_CONSTANT_NameAndType:
		return check_ref(c, cf, i, e->a, JCF_CONSTANT_Utf8) &&
		       check_ref(c, cf, i, e->b, JCF_CONSTANT_Utf8);
	case JCF_CONSTANT_Dynamic:
	case JCF_CONSTANT_InvokeDynamic:
		/* The bootstrap index is checked once BootstrapMethods is
		 * read. */
		return check_ref(c, cf, i, e->b, JCF_CONSTANT_NameAndType);
	case JCF_CONSTANT_MethodHandle:
		return check_method_handle(c, cf, i);
	default:
		return 1;
	}
}

/* The tag each tag's entries must find at their a and b (check_cpe's
 * rules, MethodHandle's kinds aside), 0 where the field is no index. */
static const uint8_t ref_a[JCF_CONSTANT_Package + 1] = {
	[JCF_CONSTANT_Class] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_String] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_MethodType] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_Module] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_Package] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_Fieldref] = JCF_CONSTANT_Class,
	[JCF_CONSTANT_Methodref] = JCF_CONSTANT_Class,
	[JCF_CONSTANT_InterfaceMethodref] = JCF_CONSTANT_Class,
	[JCF_CONSTANT_NameAndType] = JCF_CONSTANT_Utf8,
};
static const uint8_t ref_b[JCF_CONSTANT_Package + 1] = {
	[JCF_CONSTANT_Fieldref] = JCF_CONSTANT_NameAndType,
	[JCF_CONSTANT_Methodref] = JCF_CONSTANT_NameAndType,
	[JCF_CONSTANT_InterfaceMethodref] = JCF_CONSTANT_NameAndType,
	[JCF_CONSTANT_NameAndType] = JCF_CONSTANT_Utf8,
	[JCF_CONSTANT_Dynamic] = JCF_CONSTANT_NameAndType,
	[JCF_CONSTANT_InvokeDynamic] = JCF_CONSTANT_NameAndType,
};

/* Copy the pool's bytes, which end at the cursor, and check its
 * references, in one walk of the entries: through the tables for most,
 * check_cpe for an entry they fail (for its message) and for a
 * MethodHandle.  Each Utf8 text of the copy becomes a C string in
 * place: its NUL goes on the next entry's tag byte, which the copy does
 * not need (tags are in cf->tags), or on the spare byte after the pool.
 * The walk keeps the arrays in locals: the NUL's store would otherwise
 * reload them at every entry. */
static void keep_pool(struct cursor *c, struct jcf *cf)
{
	if (c->err)
		return;
	size_t n = c->pos - CP_START;
	char *pool = cf->pool = arena_take(c->arena, n + 1);
	if (!pool) {
		fail(c, java_err_nomem, c->pos, "constant pool bytes");
		return;
	}
	memcpy(pool, c->p + CP_START, n);
	const struct jcf_cpe *cp = cf->cp;
	const uint8_t *tags = cf->tags; /* tags[0] is 0, like cp_tag's */
	unsigned ncp = cf->ncp;
	for (unsigned i = 1; i < ncp; i++) {
		unsigned t = tags[i], a = cp[i].a, b = cp[i].b;
		if (t == JCF_CONSTANT_Utf8) {
			size_t at = entry_at(&cp[i]);
			pool[at + 3 + be16((const uint8_t *)pool + at + 1)] = 0;
			continue;
		}
		if ((ref_a[t] && (a < ncp ? tags[a] : 0) != ref_a[t]) ||
		    (ref_b[t] && (b < ncp ? tags[b] : 0) != ref_b[t]) ||
		    t == JCF_CONSTANT_MethodHandle) {
			if (!check_cpe(c, cf, i))
				return;
		}
	}
}

/* The entries read one by one with read_cpe: for a pool read_entries
 * does not take, and the message of its first failure. */
static void read_entries_checked(struct cursor *c, struct jcf *cf)
{
	for (unsigned i = 1; i < cf->ncp && !c->err;) {
		size_t off = c->pos;
		int n = read_cpe(c, cf, i);
		if (n == 2 && i + 1 >= cf->ncp)
			fail(c, java_err_bad_cpool, off,
			     "constant pool entry %u: 8-byte constant in the "
			     "last slot", i);
		else if (n == 2) { /* the slot after a Long or Double */
			cf->cp[i + 1] = (struct jcf_cpe){ 0 };
			cf->tags[i + 1] = 0;
		}
		i += n ? (unsigned)n : 1;
	}
}

/* One entry other than a Utf8, of SIZE bytes after its tag (2, 3, 4 or
 * 8), from P, AT bytes into the pool. */
static inline struct jcf_cpe fixed_entry(unsigned tag, int size,
					 const uint8_t *p, size_t at)
{
	if (size == 3)
		return (struct jcf_cpe){ p[1], be16(p + 2) };
	if (size == 2)
		return (struct jcf_cpe){ be16(p + 1), 0 };
	if (size == 4 && tag != JCF_CONSTANT_Integer &&
	    tag != JCF_CONSTANT_Float)
		return (struct jcf_cpe){ be16(p + 1), be16(p + 3) };
	return at_entry(at); /* numbers stay in the class bytes */
}

/* The pool's entries from the bytes, with the cursor in locals: entries
 * are half of a class file's reads.  Utf8 texts are checked into one
 * accumulator, looked at once at the end.  Returns 0, having kept
 * nothing, where anything is amiss (an entry within 9 bytes of the end,
 * an unknown tag, a text past the end or at the file's start, a
 * forbidden byte, a Long last): read_entries_checked reads that pool
 * again, for the message. */
static int read_entries(struct cursor *c, struct jcf *cf)
{
	struct jcf_cpe *cp = cf->cp;
	uint8_t *tags = cf->tags;
	const uint8_t *bytes = c->p;
	size_t pos = c->pos, len = c->len;
	unsigned ncp = cf->ncp, ndynamic = 0;
	bytes16 bad = { 0 };
	for (unsigned i = 1; i < ncp; i++) {
		const uint8_t *p = bytes + pos;
		if (len - pos < 9)
			return 0;
		unsigned tag = p[0];
		int size = entry_size[tag];
		if (!size)
			return 0;
		tags[i] = (uint8_t)tag;
		if (size < 0) {
			size_t n = be16(p + 1);
			cp[i] = at_entry(pos - CP_START);
			pos += 3;
			if (n > len - pos || pos + n < 16)
				return 0;
			bad |= utf8_forbidden(bytes + pos, n);
			pos += n;
			continue;
		}
		cp[i] = fixed_entry(tag, size, p, pos - CP_START);
		ndynamic += tag == JCF_CONSTANT_Dynamic ||
			    tag == JCF_CONSTANT_InvokeDynamic;
		pos += 1 + (size_t)size;
		if (size == 8) { /* and the unusable slot after it */
			if (++i >= ncp)
				return 0;
			cp[i] = (struct jcf_cpe){ 0 };
			tags[i] = 0;
		}
	}
	uint64_t w[2];
	memcpy(w, &bad, sizeof(w));
	if (w[0] | w[1])
		return 0;
	c->pos = pos;
	cf->ndynamic = (uint16_t)ndynamic;
	return 1;
}

static void read_cpool(struct cursor *c, struct jcf *cf)
{
	cf->ncp = u2(c, "constant_pool_count");
	if (c->err)
		return;
	if (cf->ncp == 0) {
		fail(c, java_err_corrupt, c->pos - 2, "constant_pool_count 0");
		return;
	}
	/* One block: the entries, then their tags; each entry is written
	 * as it is read (an unusable slot as zeros), not cleared first. */
	cf->cp = arena_take(c->arena,
			    cf->ncp * (sizeof(*cf->cp) + sizeof(*cf->tags)));
	if (!cf->cp) {
		fail(c, java_err_nomem, c->pos, "constant pool");
		return;
	}
	cf->tags = (uint8_t *)(cf->cp + cf->ncp);
	cf->cp[0] = (struct jcf_cpe){ 0 };
	cf->tags[0] = 0;
	if (!read_entries(c, cf))
		read_entries_checked(c, cf);
	keep_pool(c, cf);
}

/* ---- attributes, methods ------------------------------------------------ */

/* Is IDX, read at OFF, a Class (or 0 if ZERO_OK)?  Else the failure. */
static int class_ok(struct cursor *c, const struct jcf *cf, uint16_t idx,
		    int zero_ok, size_t off, const char *what)
{
	if ((idx == 0 && zero_ok) || cp_tag(cf, idx) == JCF_CONSTANT_Class)
		return 1;
	fail(c, java_err_bad_cpool, off, "%s #%u is not a Class", what, idx);
	return 0;
}

/* The class index at the cursor: 0 allowed only if ZERO_OK. */
static uint16_t class_index(struct cursor *c, const struct jcf *cf,
			    int zero_ok, const char *what)
{
	size_t off = c->pos;
	uint16_t idx = u2(c, what);
	if (!c->err)
		class_ok(c, cf, idx, zero_ok, off, what);
	return idx;
}

static uint16_t utf8_index(struct cursor *c, const struct jcf *cf,
			   const char *what)
{
	size_t off = c->pos;
	uint16_t idx = u2(c, what);
	if (!c->err && cp_tag(cf, idx) != JCF_CONSTANT_Utf8)
		fail(c, java_err_bad_cpool, off, "%s #%u is not a Utf8", what,
		     idx);
	return idx;
}

/* An attribute's header at the cursor: its name (a Utf8 index), and its
 * length in *ALEN.  Read from the bytes where all six are there and the
 * name is a Utf8; else field by field, for the message.  Inline by force:
 * as a call (GCC's choice) it cost 40 instructions per attribute. */
static inline __attribute__((always_inline)) uint16_t
attr_header(struct cursor *c, const struct jcf *cf, uint32_t *alen)
{
	const uint8_t *p = c->p + c->pos;
	if (!c->err && c->len - c->pos >= 6 &&
	    cp_tag(cf, be16(p)) == JCF_CONSTANT_Utf8) {
		*alen = (uint32_t)jbc_be32(p + 2);
		c->pos += 6;
		return be16(p);
	}
	uint16_t name = utf8_index(c, cf, "attribute_name_index");
	*alen = u4(c, "attribute_length");
	return name;
}

/* A method's access flags, name, descriptor and attribute count, read as
 * attr_header reads. */
static uint16_t method_header(struct cursor *c, const struct jcf *cf,
			      struct jcf_method *m)
{
	const uint8_t *p = c->p + c->pos;
	if (!c->err && c->len - c->pos >= 8 &&
	    cp_tag(cf, be16(p + 2)) == JCF_CONSTANT_Utf8 &&
	    cp_tag(cf, be16(p + 4)) == JCF_CONSTANT_Utf8) {
		m->access_flags = be16(p);
		m->name = utf8_at(cf, be16(p + 2));
		m->descriptor = utf8_at(cf, be16(p + 4));
		c->pos += 8;
		return be16(p + 6);
	}
	m->access_flags = u2(c, "method access_flags");
	m->name = jcf_cp_utf8(cf, utf8_index(c, cf, "method name_index"));
	m->descriptor = jcf_cp_utf8(cf, utf8_index(c, cf,
						   "method descriptor_index"));
	return u2(c, "method attributes_count");
}

static int cmp_line(const void *a, const void *b)
{
	const struct jcf_line *x = a, *y = b;
	return (x->start_pc > y->start_pc) - (x->start_pc < y->start_pc);
}

/* javac writes most tables in code order; glibc's qsort is a merge sort
 * (stable), so leaving a sorted table alone gives the same order. */
static int lines_sorted(const struct jcf_line *l, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (l[i - 1].start_pc > l[i].start_pc)
			return 0;
	return 1;
}

/* Append a LineNumberTable to M's lines, which end cf->line_tab (the
 * arena's scratch table).  Its length is checked once, so the entries
 * are read from the bytes. */
static void read_lines(struct cursor *c, struct jcf *cf, struct jcf_method *m,
		       size_t end)
{
	uint16_t n = u2(c, "line_number_table_length");
	if (!need(c, (size_t)n * 4, "line_number_table") ||
	    c->pos + (size_t)n * 4 != end) {
		if (!c->err)
			fail(c, java_err_corrupt, c->pos,
			     "LineNumberTable length mismatch");
		return;
	}
	if (!n)
		return;
	size_t at = cf->line_count + m->nlines;
	/* room for the last, at + n - 1 */
	struct jcf_arena *a = c->arena;
	if (at + n > a->lines_cap && /* a call only to grow */
	    jpb_grow((void **)&a->lines, &a->lines_cap, at + n - 1,
		     sizeof(*a->lines))) {
		fail(c, java_err_nomem, c->pos, "line numbers");
		return;
	}
	struct jcf_line *l = (cf->line_tab = a->lines) + at;
	const uint8_t *p = c->p + c->pos;
	for (unsigned i = 0; i < n; i++, p += 4) {
		l[i].start_pc = be16(p);
		l[i].line = be16(p + 2);
		if (l[i].start_pc >= m->code_length) {
			fail(c, java_err_corrupt, (size_t)(p - c->p),
			     "line number start_pc %u beyond code length %u",
			     l[i].start_pc, m->code_length);
			return;
		}
	}
	m->nlines += n;
	c->pos += (size_t)n * 4;
}

/* The exception table, read from the bytes once its length is checked. */
static void read_exc_table(struct cursor *c, struct jcf *cf,
			   struct jcf_method *m)
{
	m->nexc = u2(c, "exception_table_length");
	if (!need(c, (size_t)m->nexc * 8, "exception_table") || !m->nexc)
		return;
	struct jcf_arena *a = c->arena;
	if (jpb_grow((void **)&a->exc, &a->exc_cap,
		     cf->exc_count + m->nexc - 1, sizeof(*a->exc))) {
		fail(c, java_err_nomem, c->pos, "exception table");
		return;
	}
	struct jcf_exc *x = (cf->exc_tab = a->exc) + cf->exc_count;
	for (unsigned i = 0; i < m->nexc; i++, c->pos += 8) {
		const uint8_t *p = c->p + c->pos;
		x[i].start_pc = be16(p);
		x[i].end_pc = be16(p + 2);
		x[i].handler_pc = be16(p + 4);
		x[i].catch_type = be16(p + 6);
		if (!class_ok(c, cf, x[i].catch_type, 1, c->pos + 6,
			      "catch_type"))
			return;
		x[i].catch_class = jcf_cp_class_name(cf, x[i].catch_type);
		if (x[i].start_pc >= x[i].end_pc ||
		    x[i].end_pc > m->code_length ||
		    x[i].handler_pc >= m->code_length) {
			fail(c, java_err_corrupt, c->pos,
			     "exception table entry %u [%u,%u)->%u outside code "
			     "length %u", i, x[i].start_pc, x[i].end_pc,
			     x[i].handler_pc, m->code_length);
			return;
		}
	}
}

/* Is the Utf8 at IDX NAME, of LEN (under 256) bytes?  The lengths
 * differ for most attribute names: their bytes are compared first. */
static inline int attr_is(const struct jcf *cf, uint16_t idx,
			  const char *name, size_t len)
{
	const uint8_t *p = (const uint8_t *)after_tag(cf, idx);
	return p[1] == len && !p[0] && !memcmp(p + 2, name, len);
}
#define ATTR_IS(cf, idx, lit) attr_is(cf, idx, lit, sizeof(lit) - 1)

static void read_code(struct cursor *c, struct jcf *cf, struct jcf_method *m,
		      size_t end)
{
	size_t off = c->pos;

	m->max_stack = u2(c, "max_stack");
	m->max_locals = u2(c, "max_locals");
	m->code_length = u4(c, "code_length");
	if (!c->err && (m->code_length == 0 || m->code_length >= 65536))
		fail(c, java_err_corrupt, off + 4, "code_length %u",
		     m->code_length);
	if (!need(c, m->code_length, "code"))
		return;
	m->code_offset = (uint32_t)c->pos; /* keep_code copies it */
	c->pos += m->code_length;
	read_exc_table(c, cf, m);
	uint16_t nattr = u2(c, "Code attributes_count");
	for (unsigned i = 0; i < nattr && !c->err; i++) {
		uint32_t alen;
		uint16_t name = attr_header(c, cf, &alen);
		if (!need(c, alen, "attribute"))
			break;
		size_t aend = c->pos + alen;
		if (ATTR_IS(cf, name, "LineNumberTable"))
			read_lines(c, cf, m, aend);
		c->pos = aend;
	}
	if (c->err)
		return;
	if (m->nlines) {
		struct jcf_line *lines = cf->line_tab + cf->line_count;
		if (!lines_sorted(lines, m->nlines))
			qsort(lines, m->nlines, sizeof(*lines), cmp_line);
		cf->line_count += m->nlines;
	}
	cf->exc_count += m->nexc;
	if (!c->err && c->pos != end)
		fail(c, java_err_corrupt, c->pos, "Code attribute length "
		     "mismatch (ends at %zu, declared %zu)", c->pos, end);
}

static void read_method(struct cursor *c, struct jcf *cf,
			struct jcf_method *m)
{
	uint16_t nattr = method_header(c, cf, m);
	for (unsigned i = 0; i < nattr && !c->err; i++) {
		uint32_t alen;
		uint16_t name = attr_header(c, cf, &alen);
		size_t start = c->pos;
		if (!need(c, alen, "attribute"))
			break;
		if (ATTR_IS(cf, name, "Code")) {
			if (m->code_length) { /* never 0 once read */
				fail(c, java_err_corrupt, start,
				     "second Code attribute");
				break;
			}
			read_code(c, cf, m, start + alen);
		}
		c->pos = start + alen;
	}
	if (!c->err && m->name && m->descriptor && m->descriptor[0] != '(')
		fail(c, java_err_corrupt, c->pos,
		     "method %s descriptor %s is not a method descriptor",
		     m->name, m->descriptor);
}

static void skip_fields(struct cursor *c)
{
	uint16_t n = u2(c, "fields_count");
	for (unsigned i = 0; i < n && !c->err; i++) {
		skip(c, 6, "field_info");
		uint16_t nattr = u2(c, "field attributes_count");
		for (unsigned j = 0; j < nattr && !c->err; j++) {
			skip(c, 2, "attribute_name_index");
			skip(c, u4(c, "attribute_length"), "attribute");
		}
	}
}

/* The last 1-7 bytes of a name of N bytes, as one word. */
static inline uint64_t name_tail(const char *s, size_t n)
{
	uint32_t a, b;
	if (n >= 4) { /* two loads that may overlap */
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		return (uint64_t)a << 32 | b;
	}
	return (uint64_t)(uint8_t)s[0] << 16 | (uint64_t)(uint8_t)s[n / 2] << 8 |
	       (uint8_t)s[n - 1];
}

/* A name's hash, eight bytes at a time: lookups by name (the class
 * hierarchy asks for the same name in every class of a chain) compare
 * mostly hashes, not strings, and every method name of a class and
 * every class name the hierarchy looks up is hashed (a byte at a time,
 * that was 14 M instructions on jython).  The bits are the mix of
 * MurmurHash3's finaliser; the value stays within the process. */
static uint32_t name_hash_n(const char *s, size_t n)
{
	size_t i = 0;
	uint64_t h = n * 0x9e3779b97f4a7c15ull, w;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	if (i < n) {
		if (n >= 8)
			memcpy(&w, s + n - 8, 8);
		else
			w = name_tail(s, n);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static uint32_t name_hash(const char *s)
{
	return name_hash_n(s, strlen(s));
}

/* Classes with fewer methods are scanned (jython's classes of a chain
 * have 70 on average where a name's hash and bit match). */
#define NAME_TAB_MIN 16

/* The slots of the name table of a class of N methods, 0 for none: a
 * power of two, at least twice N. */
static size_t name_tab_size(unsigned n)
{
	size_t size = 2 * NAME_TAB_MIN;
	if (n < NAME_TAB_MIN)
		return 0;
	while (size < 2 * (size_t)n)
		size *= 2;
	return size;
}

/* Method I in the name table by its hash H: in method order along each
 * probe run, so that a lookup meets the first method of a name first,
 * as a scan does. */
static void name_tab_put(struct jcf *cf, unsigned i, uint32_t h)
{
	size_t j = h & cf->name_mask;
	while (cf->name_tab[j])
		j = (j + 1) & cf->name_mask;
	cf->name_tab[j] = (uint16_t)(i + 1);
}

static void hash_method_names(struct cursor *c, struct jcf *cf)
{
	if (c->err)
		return;
	for (unsigned i = 0; i < cf->nmethods; i++) {
		/* a name is a Utf8 of the pool's copy: its length is before
		 * it (no NUL in it, so strlen's) */
		const char *s = cf->methods[i].name;
		cf->name_hash[i] = name_hash_n(s, be16((const uint8_t *)s - 2));
		cf->name_bits |= 1ull << (cf->name_hash[i] & 63);
		if (cf->name_tab)
			name_tab_put(cf, i, cf->name_hash[i]);
	}
}

/* Copy every method's code into one block. */
static void keep_code(struct cursor *c, struct jcf *cf)
{
	size_t total = 0, at = 0;
	if (c->err)
		return;
	for (unsigned i = 0; i < cf->nmethods; i++)
		total += cf->methods[i].code_length;
	if (!total)
		return;
	cf->code = arena_take(c->arena, total);
	if (!cf->code) {
		fail(c, java_err_nomem, c->pos, "code");
		return;
	}
	for (unsigned i = 0; i < cf->nmethods; i++) {
		struct jcf_method *m = &cf->methods[i];
		if (!m->code_length)
			continue;
		memcpy(cf->code + at, c->p + m->code_offset, m->code_length);
		m->code = cf->code + at;
		at += m->code_length;
	}
}

/* Copy of the N elements of SIZE bytes at V into C's arena, or NULL
 * for none (or the failure). */
static void *keep_table(struct cursor *c, const void *v, size_t n, size_t size)
{
	if (!n)
		return NULL;
	void *copy = arena_take(c->arena, n * size);
	if (!copy) {
		fail(c, java_err_nomem, c->pos, "exception or line table");
		return NULL;
	}
	return memcpy(copy, v, n * size);
}

/* The tables are complete: copy them out of the arena's scratch tables
 * and point each method at its own run (they were appended in method
 * order). */
static void place_tables(struct cursor *c, struct jcf *cf)
{
	size_t exc_at = 0, line_at = 0;
	if (c->err)
		return;
	cf->exc_tab = keep_table(c, cf->exc_tab, cf->exc_count,
				 sizeof(*cf->exc_tab));
	cf->line_tab = keep_table(c, cf->line_tab, cf->line_count,
				  sizeof(*cf->line_tab));
	if (c->err)
		return;
	for (unsigned i = 0; i < cf->nmethods; i++) {
		struct jcf_method *m = &cf->methods[i];
		m->exc = m->nexc ? cf->exc_tab + exc_at : NULL;
		m->lines = m->nlines ? cf->line_tab + line_at : NULL;
		exc_at += m->nexc;
		line_at += m->nlines;
	}
}

static void read_methods(struct cursor *c, struct jcf *cf)
{
	cf->nmethods = u2(c, "methods_count");
	if (c->err || !cf->nmethods)
		return;
	/* One block: the methods, then their name hashes and name table;
	 * each method is cleared as it is read, not before. */
	size_t ntab = name_tab_size(cf->nmethods);
	cf->methods = arena_take(c->arena,
				 cf->nmethods * (sizeof(*cf->methods) +
						 sizeof(*cf->name_hash)) +
				 ntab * sizeof(*cf->name_tab));
	if (!cf->methods) {
		fail(c, java_err_nomem, c->pos, "methods");
		cf->nmethods = 0;
		return;
	}
	cf->name_hash = (uint32_t *)(cf->methods + cf->nmethods);
	if (ntab) {
		cf->name_tab = (uint16_t *)(cf->name_hash + cf->nmethods);
		cf->name_mask = (uint32_t)ntab - 1;
		memset(cf->name_tab, 0, ntab * sizeof(*cf->name_tab));
	}
	for (unsigned i = 0; i < cf->nmethods && !c->err; i++) {
		cf->methods[i] = (struct jcf_method){ .index = i };
		read_method(c, cf, &cf->methods[i]);
	}
	hash_method_names(c, cf);
	keep_code(c, cf);
	place_tables(c, cf);
}

static void read_bootstrap(struct cursor *c, struct jcf *cf, size_t end)
{
	if (cf->bsm) {
		fail(c, java_err_corrupt, c->pos,
		     "second BootstrapMethods attribute");
		return;
	}
	cf->nbsm = u2(c, "num_bootstrap_methods");
	if (!c->err && c->pos > end) {
		fail(c, java_err_corrupt, c->pos, "BootstrapMethods too short");
		return;
	}
	/* Each entry needs at least 4 bytes, and every argument 2; the
	 * attribute length bounds the argument total. */
	if (!need(c, (size_t)cf->nbsm * 4, "bootstrap_methods") || !cf->nbsm)
		return;
	cf->bsm = arena_take(c->arena, cf->nbsm * sizeof(*cf->bsm));
	cf->bsm_args = arena_take(c->arena, end - c->pos + 1);
	if (!cf->bsm || !cf->bsm_args) {
		fail(c, java_err_nomem, c->pos, "bootstrap methods");
		return;
	}
	memset(cf->bsm, 0, cf->nbsm * sizeof(*cf->bsm));
	uint16_t *args = cf->bsm_args;
	for (unsigned i = 0; i < cf->nbsm && !c->err; i++) {
		size_t off = c->pos;
		struct jcf_bootstrap *b = &cf->bsm[i];
		b->method_handle = u2(c, "bootstrap_method_ref");
		b->nargs = u2(c, "num_bootstrap_arguments");
		if (!c->err && cp_tag(cf, b->method_handle) !=
				       JCF_CONSTANT_MethodHandle)
			fail(c, java_err_bad_cpool, off, "bootstrap method %u: "
			     "#%u is not a MethodHandle", i, b->method_handle);
		if (!need(c, (size_t)b->nargs * 2, "bootstrap_arguments") ||
		    c->pos + (size_t)b->nargs * 2 > end) {
			fail(c, java_err_corrupt, c->pos,
			     "bootstrap method %u: arguments past attribute",
			     i);
			return;
		}
		b->args = args;
		for (unsigned j = 0; j < b->nargs; j++) {
			size_t aoff = c->pos;
			args[j] = u2(c, "bootstrap argument");
			if (!cp_tag(cf, args[j]) ||
			    cp_tag(cf, args[j]) == JCF_CONSTANT_Utf8 ||
			    cp_tag(cf, args[j]) == JCF_CONSTANT_NameAndType)
				fail(c, java_err_bad_cpool, aoff,
				     "bootstrap method %u argument %u: #%u is "
				     "not loadable", i, j, args[j]);
		}
		args += b->nargs;
	}
}

static void read_class_attrs(struct cursor *c, struct jcf *cf)
{
	uint16_t nattr = u2(c, "class attributes_count");
	for (unsigned i = 0; i < nattr && !c->err; i++) {
		uint32_t alen;
		uint16_t name = attr_header(c, cf, &alen);
		size_t start = c->pos;
		if (!need(c, alen, "attribute"))
			break;
		if (ATTR_IS(cf, name, "SourceFile")) {
			cf->source_idx = utf8_index(c, cf, "sourcefile_index");
		} else if (ATTR_IS(cf, name, "BootstrapMethods")) {
			read_bootstrap(c, cf, start + alen);
		}
		if (!c->err && c->pos > start + alen)
			fail(c, java_err_corrupt, start,
			     "attribute overruns its length %u", alen);
		c->pos = start + alen;
	}
}

/* Dynamic and InvokeDynamic name a bootstrap method by index; the table
 * comes after the constant pool, so the check waits until here. */
static void check_bsm_refs(struct cursor *c, const struct jcf *cf)
{
	if (!cf->ndynamic) /* most classes: no third walk of the pool */
		return;
	for (unsigned i = 1; i < cf->ncp && !c->err; i++) {
		const struct jcf_cpe *e = &cf->cp[i];
		if ((cf->tags[i] == JCF_CONSTANT_Dynamic ||
		     cf->tags[i] == JCF_CONSTANT_InvokeDynamic) &&
		    e->a >= cf->nbsm)
			fail(c, java_err_bad_cpool, entry_offset(cf, i),
			     "constant pool entry %u: bootstrap method %u of "
			     "%u", i, e->a, cf->nbsm);
	}
}

static void read_header(struct cursor *c, struct jcf *cf)
{
	if (u4(c, "magic") != 0xCAFEBABEu && !c->err) {
		fail(c, java_err_bad_magic, 0, "bad magic");
		return;
	}
	cf->minor = u2(c, "minor_version");
	cf->major = u2(c, "major_version");
	if (!c->err && (cf->major < 45 || cf->major > JCF_MAX_MAJOR))
		fail(c, java_err_bad_version, 6, "major version %u not in "
		     "45..%u", cf->major, JCF_MAX_MAJOR);
}

static void read_class(struct cursor *c, struct jcf *cf)
{
	read_header(c, cf);
	read_cpool(c, cf);
	cf->access = u2(c, "access_flags");
	cf->this_idx = class_index(c, cf, 0, "this_class");
	cf->super_idx = class_index(c, cf, 1, "super_class");
	cf->nifaces = u2(c, "interfaces_count");
	if (!need(c, (size_t)cf->nifaces * 2, "interfaces"))
		return;
	if (cf->nifaces) {
		cf->ifaces = arena_take(c->arena,
					cf->nifaces * sizeof(*cf->ifaces));
		if (!cf->ifaces) {
			fail(c, java_err_nomem, c->pos, "interfaces");
			return;
		}
	}
	for (unsigned i = 0; i < cf->nifaces; i++)
		cf->ifaces[i] = class_index(c, cf, 0, "interface");
	skip_fields(c);
	read_methods(c, cf);
	read_class_attrs(c, cf);
	check_bsm_refs(c, cf);
	if (!c->err && c->pos != c->len)
		fail(c, java_err_corrupt, c->pos, "%zu bytes after the class",
		     c->len - c->pos);
}

int jcf_parse_in(struct jcf_arena *a, struct jcf **out, const uint8_t *data,
		 size_t len, struct java_diag *diag)
{
	if (!a || !out || (!data && len))
		return java_err_invalid;
	*out = NULL;
	struct arena_mark m = arena_mark(a);
	struct jcf *cf = arena_take(a, sizeof(*cf));
	if (!cf)
		return java_err_nomem;
	*cf = (struct jcf){ .arena = a, .start = m };
	struct cursor c = { .p = data, .len = len, .diag = diag, .arena = a };
	read_class(&c, cf);
	if (c.err) {
		arena_reset(a, m);
		return c.err;
	}
	a->last = cf;
	*out = cf;
	return java_ok;
}

int jcf_parse(struct jcf **out, const uint8_t *data, size_t len,
	      struct java_diag *diag)
{
	struct jcf_arena *a;
	if (!out || (!data && len))
		return java_err_invalid;
	*out = NULL;
	int err = jcf_arena_alloc(&a);
	if (!err)
		err = jcf_parse_in(a, out, data, len, diag);
	if (err) {
		jcf_arena_free(a);
		return err;
	}
	(*out)->own = a;
	/* a class alone keeps no room for another's tables */
	free(a->exc);
	free(a->lines);
	a->exc = NULL;
	a->lines = NULL;
	a->exc_cap = a->lines_cap = 0;
	return java_ok;
}

void jcf_free(struct jcf *cf)
{
	if (!cf)
		return;
	struct jcf_arena *a = cf->arena;
	if (cf->own) {
		jcf_arena_free(cf->own);
	} else if (a->last == cf) { /* e.g. a class the hierarchy had */
		a->last = NULL;
		arena_reset(a, cf->start);
	}
}

/* ---- accessors ---------------------------------------------------------- */

void jcf_version(const struct jcf *cf, unsigned *major, unsigned *minor)
{
	*major = cf->major;
	*minor = cf->minor;
}

uint16_t jcf_access_flags(const struct jcf *cf) { return cf->access; }

const char *jcf_this_class(const struct jcf *cf)
{
	return jcf_cp_class_name(cf, cf->this_idx);
}

const char *jcf_super_class(const struct jcf *cf)
{
	return jcf_cp_class_name(cf, cf->super_idx);
}

unsigned jcf_interface_count(const struct jcf *cf) { return cf->nifaces; }

const char *jcf_interface(const struct jcf *cf, unsigned i)
{
	return i < cf->nifaces ? jcf_cp_class_name(cf, cf->ifaces[i]) : NULL;
}

const char *jcf_source_file(const struct jcf *cf)
{
	return jcf_cp_utf8(cf, cf->source_idx);
}

unsigned jcf_method_count(const struct jcf *cf) { return cf->nmethods; }

const struct jcf_method *jcf_method(const struct jcf *cf, unsigned i)
{
	return i < cf->nmethods ? &cf->methods[i] : NULL;
}

uint32_t jcf_name_hash(const char *name) { return name_hash(name); }

const struct jcf_method *jcf_method_find(const struct jcf *cf,
					 const char *name,
					 const char *descriptor)
{
	return jcf_method_find_hashed(cf, name, name_hash(name), descriptor);
}

uint64_t jcf_name_bits(const struct jcf *cf)
{
	return cf->name_bits;
}

/* Is method I NAME (of hash H) and DESCRIPTOR (any when NULL)? */
static inline int method_is(const struct jcf *cf, unsigned i,
			    const char *name, uint32_t h,
			    const char *descriptor)
{
	const struct jcf_method *m = &cf->methods[i];
	return cf->name_hash[i] == h && !strcmp(m->name, name) &&
	       (!descriptor || !strcmp(m->descriptor, descriptor));
}

const struct jcf_method *jcf_method_find_hashed(const struct jcf *cf,
						const char *name, uint32_t h,
						const char *descriptor)
{
	if (!(cf->name_bits >> (h & 63) & 1))
		return NULL;
	if (cf->name_tab) {
		for (size_t j = h & cf->name_mask; cf->name_tab[j];
		     j = (j + 1) & cf->name_mask) {
			unsigned i = cf->name_tab[j] - 1u;
			if (method_is(cf, i, name, h, descriptor))
				return &cf->methods[i];
		}
		return NULL;
	}
	for (unsigned i = 0; i < cf->nmethods; i++)
		if (method_is(cf, i, name, h, descriptor))
			return &cf->methods[i];
	return NULL;
}

int jcf_param_slots(const char *d, int is_static)
{
	if (!d || *d++ != '(')
		return -1;
	int n = is_static ? 0 : 1;
	while (*d && *d != ')') {
		int wide = *d == 'J' || *d == 'D';
		while (*d == '[')
			d++;
		if (*d == 'L') {
			d = strchr(d, ';');
			if (!d)
				return -1;
		} else if (!*d || !strchr("BCDFIJSZ", *d)) {
			return -1;
		}
		d++;
		n += wide ? 2 : 1; /* an array of long is one reference */
	}
	return *d == ')' ? n : -1;
}

int jcf_line_at(const struct jcf_method *m, uint32_t bci)
{
	size_t lo = 0, hi = m->nlines;
	/* The first entry with start_pc > bci; its predecessor covers bci. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->lines[mid].start_pc <= bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? m->lines[lo - 1].line : -1;
}

unsigned jcf_cp_count(const struct jcf *cf) { return cf->ncp; }

unsigned jcf_cp_tag(const struct jcf *cf, unsigned idx)
{
	return (unsigned)cp_tag(cf, idx);
}

const struct jcf_cpe *jcf_cp(const struct jcf *cf, unsigned idx)
{
	return idx < cf->ncp ? &cf->cp[idx] : NULL;
}

static uint64_t be_bytes(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

uint64_t jcf_cp_value(const struct jcf *cf, unsigned idx)
{
	switch (cp_tag(cf, idx)) {
	case JCF_CONSTANT_Integer:
	case JCF_CONSTANT_Float:
		return be_bytes((const uint8_t *)after_tag(cf, idx), 4);
	case JCF_CONSTANT_Long:
	case JCF_CONSTANT_Double:
		return be_bytes((const uint8_t *)after_tag(cf, idx), 8);
	case JCF_CONSTANT_Utf8:
		return utf8_len(cf, idx);
	}
	return 0;
}

const char *jcf_cp_utf8(const struct jcf *cf, unsigned idx)
{
	return cp_tag(cf, idx) == JCF_CONSTANT_Utf8 ? utf8_at(cf, idx) : NULL;
}

const char *jcf_cp_class_name(const struct jcf *cf, unsigned idx)
{
	if (cp_tag(cf, idx) != JCF_CONSTANT_Class)
		return NULL;
	return jcf_cp_utf8(cf, cf->cp[idx].a);
}

int jcf_cp_ref(const struct jcf *cf, unsigned idx, struct jcf_ref *ref)
{
	int t = cp_tag(cf, idx);
	const struct jcf_cpe *e = &cf->cp[idx];
	memset(ref, 0, sizeof(*ref));
	ref->bsm = -1;
	switch (t) {
	case JCF_CONSTANT_Fieldref:
	case JCF_CONSTANT_Methodref:
	case JCF_CONSTANT_InterfaceMethodref:
		ref->class_name = jcf_cp_class_name(cf, e->a);
		break;
	case JCF_CONSTANT_Dynamic:
	case JCF_CONSTANT_InvokeDynamic:
		ref->bsm = e->a;
		break;
	default:
		return java_err_bad_cpool;
	}
	/* Parsing checked that b is a NameAndType of two Utf8s. */
	const struct jcf_cpe *nt = &cf->cp[e->b];
	ref->tag = (uint8_t)t;
	ref->name = utf8_at(cf, nt->a);
	ref->descriptor = utf8_at(cf, nt->b);
	return java_ok;
}

unsigned jcf_bootstrap_count(const struct jcf *cf) { return cf->nbsm; }

const struct jcf_bootstrap *jcf_bootstrap(const struct jcf *cf, unsigned i)
{
	return i < cf->nbsm ? &cf->bsm[i] : NULL;
}

int jcf_lambda_impl(const struct jcf *cf, unsigned idx, struct jcf_ref *impl,
		    unsigned *kind)
{
	struct jcf_ref site, bsm;
	int err = jcf_cp_ref(cf, idx, &site);
	if (err || site.tag != JCF_CONSTANT_InvokeDynamic)
		return java_err_bad_cpool;
	const struct jcf_bootstrap *b = &cf->bsm[site.bsm];
	const struct jcf_cpe *mh = &cf->cp[b->method_handle];
	if (jcf_cp_ref(cf, mh->b, &bsm) ||
	    strcmp(bsm.class_name, "java/lang/invoke/LambdaMetafactory") ||
	    (strcmp(bsm.name, "metafactory") &&
	     strcmp(bsm.name, "altMetafactory")) ||
	    b->nargs < 3 || cp_tag(cf, b->args[1]) != JCF_CONSTANT_MethodHandle)
		return java_err_not_found;
	const struct jcf_cpe *impl_mh = &cf->cp[b->args[1]];
	if (kind)
		*kind = impl_mh->a;
	return jcf_cp_ref(cf, impl_mh->b, impl);
}
