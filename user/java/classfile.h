/* SPDX-License-Identifier: MIT */
/*
 * Java class files (JVMS §4): the part the decoder's program model needs.
 *
 * Parsed: magic and version, the whole constant pool (every tag up to
 * Module/Package, cross-references checked), this/super/interfaces, the
 * methods with their Code attribute (code, exception table,
 * LineNumberTable), SourceFile and BootstrapMethods.  Fields and all other
 * attributes are skipped by length.  The jcf keeps its own copy of the
 * constant pool and the code, so the caller may free the input; every
 * pointer handed out lives as long as the jcf.
 *
 * Corrupt or truncated input gives a negative java_error and, when a
 * struct java_diag is passed, the file offset and a one-line message.  The
 * parser never reads outside the buffer it was given.
 */
#ifndef JPBPF_JAVA_CLASSFILE_H
#define JPBPF_JAVA_CLASSFILE_H

#include <stddef.h>
#include <stdint.h>

/* Error codes of the Java program model (classfile, cfg, hierarchy,
 * program). */
enum java_error {
	java_ok = 0,
	java_err_nomem = -1,
	java_err_invalid = -2,     /* bad argument */
	java_err_truncated = -3,   /* the class file ends inside a structure */
	java_err_bad_magic = -4,   /* not 0xCAFEBABE */
	java_err_bad_version = -5, /* major version outside 45..JCF_MAX_MAJOR */
	java_err_bad_cpool = -6,   /* bad constant pool tag or reference */
	java_err_corrupt = -7,     /* a structure is inconsistent */
	java_err_bad_code = -8,    /* undefined opcode, bad branch target */
	java_err_not_found = -9,
	java_err_no_code = -10,    /* abstract or native method */
};

/* A static English name for ERR. */
const char *java_errstr(int err);

/* Where and why an operation failed. */
struct java_diag {
	int err;       /* the enum java_error returned */
	size_t offset; /* byte offset in the class file, or bci for cfg */
	char msg[200]; /* one line, without a trailing newline */
};

/* Newest class file major version accepted (Java 26). */
#define JCF_MAX_MAJOR 70

enum jcf_cp_tag {
	JCF_CONSTANT_Utf8 = 1,
	JCF_CONSTANT_Integer = 3,
	JCF_CONSTANT_Float = 4,
	JCF_CONSTANT_Long = 5,
	JCF_CONSTANT_Double = 6,
	JCF_CONSTANT_Class = 7,
	JCF_CONSTANT_String = 8,
	JCF_CONSTANT_Fieldref = 9,
	JCF_CONSTANT_Methodref = 10,
	JCF_CONSTANT_InterfaceMethodref = 11,
	JCF_CONSTANT_NameAndType = 12,
	JCF_CONSTANT_MethodHandle = 15,
	JCF_CONSTANT_MethodType = 16,
	JCF_CONSTANT_Dynamic = 17,
	JCF_CONSTANT_InvokeDynamic = 18,
	JCF_CONSTANT_Module = 19,
	JCF_CONSTANT_Package = 20,
};

/* Bytes after the tag of a constant pool entry with TAG (JVMS 4.4): 2, 3,
 * 4 or 8; -1 for Utf8 (a u2 length and that many bytes); 0 for a tag
 * this parser does not know.  Shared with the agent, which scans the
 * pool JVMTI gives. */
int jcf_cp_entry_size(unsigned tag);

/* Access flags used by the model (JVMS Tables 4.1-B, 4.6-A). */
enum {
	JCF_ACC_PUBLIC = 0x0001,
	JCF_ACC_PRIVATE = 0x0002,
	JCF_ACC_STATIC = 0x0008,
	JCF_ACC_FINAL = 0x0010,
	JCF_ACC_SYNCHRONIZED = 0x0020,
	JCF_ACC_BRIDGE = 0x0040,
	JCF_ACC_VARARGS = 0x0080,
	JCF_ACC_NATIVE = 0x0100,
	JCF_ACC_INTERFACE = 0x0200,
	JCF_ACC_ABSTRACT = 0x0400,
	JCF_ACC_SYNTHETIC = 0x1000,
};

/* One constant pool entry; its tag is jcf_cp_tag's.  Meaning of a and b
 * by tag:
 *   Class, String, MethodType, Module, Package: a = Utf8 index, b = 0
 *   Fieldref, Methodref, InterfaceMethodref: a = Class, b = NameAndType
 *   NameAndType: a = name Utf8, b = descriptor Utf8
 *   MethodHandle: a = reference kind (1..9), b = the referenced *ref
 *   Dynamic, InvokeDynamic: a = bootstrap method index, b = NameAndType
 * Utf8, Integer, Float, Long, Double: a and b say where the jcf keeps
 * the entry's bytes; its text (and length) or raw bits are jcf_cp_utf8's
 * and jcf_cp_value's.  Four bytes: jython's classes have 565 k entries. */
struct jcf_cpe {
	uint16_t a, b;
};

/* A resolved symbolic reference: Fieldref/Methodref/InterfaceMethodref
 * (class set), or Dynamic/InvokeDynamic (class NULL, bsm set). */
struct jcf_ref {
	uint8_t tag;
	const char *class_name; /* internal form "java/lang/String" */
	const char *name;
	const char *descriptor;
	int bsm; /* bootstrap method index, -1 for member refs */
};

struct jcf_exc {
	uint16_t start_pc, end_pc; /* [start, end) */
	uint16_t handler_pc;
	uint16_t catch_type;       /* Class index, 0 = any (finally) */
	const char *catch_class;   /* its name, NULL for any */
};

struct jcf_line {
	uint16_t start_pc;
	uint16_t line;
};

/* Pointers first, then the numbers by size: 64 bytes, not 72 (jython
 * has 48 k methods). */
struct jcf_method {
	const char *name;
	const char *descriptor;
	/* Code attribute; code is NULL for abstract and native methods. */
	const uint8_t *code;
	const struct jcf_exc *exc; /* in class file order (= match order) */
	const struct jcf_line *lines; /* sorted by start_pc */
	uint32_t index; /* position in the class file's method table */
	uint32_t code_length;
	uint32_t code_offset; /* file offset of code[0] */
	uint32_t nlines;
	uint16_t access_flags;
	uint16_t max_stack, max_locals;
	uint16_t nexc;
};

struct jcf_bootstrap {
	uint16_t method_handle; /* CP index of a MethodHandle */
	uint16_t nargs;
	const uint16_t *args;   /* CP indices of loadable constants */
};

struct jcf;

/* The local-variable slots a method of DESCRIPTOR "(...)R" takes for its
 * parameters (2 for long and double, 1 for any other, an array of long
 * included), plus 1 for `this` unless IS_STATIC; -1 when DESCRIPTOR is not
 * a method descriptor. */
int jcf_param_slots(const char *descriptor, int is_static);

/* Parse LEN bytes at DATA.  On success *OUT owns a copy of the parts it
 * hands out; DATA is not kept. */
int jcf_parse(struct jcf **out, const uint8_t *data, size_t len,
	      struct java_diag *diag);
void jcf_free(struct jcf *cf);

/* Room for the parts of many class files: a program keeps thousands
 * (jython: 4 206 classes), and a block for each part cost a malloc at
 * the parse and a free at the end, ten a class.  An arena is freed
 * whole, with every jcf parsed into it. */
struct jcf_arena;
int jcf_arena_alloc(struct jcf_arena **out);
void jcf_arena_free(struct jcf_arena *a);
/* The bytes A's classes take. */
size_t jcf_arena_size(const struct jcf_arena *a);
/* jcf_parse with *OUT and its parts in A: they live until A is freed.
 * jcf_free(*OUT) gives their room back while *OUT is the last class
 * parsed into A, and does nothing after that.  A failed parse leaves
 * A as it was. */
int jcf_parse_in(struct jcf_arena *a, struct jcf **out, const uint8_t *data,
		 size_t len, struct java_diag *diag);

void jcf_version(const struct jcf *cf, unsigned *major, unsigned *minor);
uint16_t jcf_access_flags(const struct jcf *cf);
const char *jcf_this_class(const struct jcf *cf);
/* NULL for java/lang/Object (and module-info). */
const char *jcf_super_class(const struct jcf *cf);
unsigned jcf_interface_count(const struct jcf *cf);
const char *jcf_interface(const struct jcf *cf, unsigned i);
/* The SourceFile attribute, NULL if absent. */
const char *jcf_source_file(const struct jcf *cf);

unsigned jcf_method_count(const struct jcf *cf);
const struct jcf_method *jcf_method(const struct jcf *cf, unsigned i);
/* The method NAME with DESCRIPTOR declared in CF, or NULL. */
const struct jcf_method *jcf_method_find(const struct jcf *cf,
					 const char *name,
					 const char *descriptor);
/* The same with H = jcf_name_hash(NAME), for a caller that asks many
 * classes for one name. */
uint32_t jcf_name_hash(const char *name);
const struct jcf_method *jcf_method_find_hashed(const struct jcf *cf,
						const char *name, uint32_t h,
						const char *descriptor);
/* Bit H % 64 set for the hash H of each of CF's method names: without
 * it, jcf_method_find_hashed(CF, NAME, H, ...) is NULL. */
uint64_t jcf_name_bits(const struct jcf *cf);
/* Source line of BCI in M (the LineNumberTable entry with the greatest
 * start_pc <= bci), or -1 if M has none. */
int jcf_line_at(const struct jcf_method *m, uint32_t bci);

/* Constant pool: valid indices are 1 .. count-1 (tag 0 marks unusable
 * slots).  jcf_cp returns NULL for an index out of range. */
unsigned jcf_cp_count(const struct jcf *cf);
const struct jcf_cpe *jcf_cp(const struct jcf *cf, unsigned idx);
/* The enum jcf_cp_tag of entry IDX; 0 for index 0, the slot after a
 * Long/Double and an index out of range. */
unsigned jcf_cp_tag(const struct jcf *cf, unsigned idx);
/* The raw bits of the Integer, Float, Long or Double at IDX, the length
 * of the Utf8 at IDX; 0 for other tags. */
uint64_t jcf_cp_value(const struct jcf *cf, unsigned idx);
/* The Utf8 at IDX (modified UTF-8, NUL-terminated), or the name of the
 * Class at IDX; NULL if the tag differs. */
const char *jcf_cp_utf8(const struct jcf *cf, unsigned idx);
const char *jcf_cp_class_name(const struct jcf *cf, unsigned idx);
/* Fill REF from the member or (Invoke)Dynamic entry at IDX; the operand
 * of every invoke*, get/put* and ldc of a Dynamic. */
int jcf_cp_ref(const struct jcf *cf, unsigned idx, struct jcf_ref *ref);

unsigned jcf_bootstrap_count(const struct jcf *cf);
const struct jcf_bootstrap *jcf_bootstrap(const struct jcf *cf, unsigned i);

/* For an InvokeDynamic at IDX whose bootstrap is LambdaMetafactory's
 * metafactory or altMetafactory, fill IMPL with the implementation method
 * the lambda's generated class will call (static argument 1) and *KIND
 * with its reference kind.  java_err_not_found for other bootstraps. */
int jcf_lambda_impl(const struct jcf *cf, unsigned idx, struct jcf_ref *impl,
		    unsigned *kind);

#endif /* JPBPF_JAVA_CLASSFILE_H */
