/* SPDX-License-Identifier: MIT */
/*
 * The methods a bundle's flows name (flow/methods), with what exports
 * print about them: a readable name, the class, the source file and the
 * method's code (for source lines, code length and branch targets) from
 * the class files of the program model.  A method whose class file the
 * bundle lacks (a hidden class) keeps its name and has no code.
 */
#ifndef JPBPF_EXPORT_MODEL_METHODS_H
#define JPBPF_EXPORT_MODEL_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "java/classfile.h"

struct jpb_bundle;
struct xmethods;

struct xm_method {
	const char *name;       /* "java.lang.String.valueOf(I)Ljava/lang/String;" */
	const char *json_name;  /* the same as a quoted, escaped JSON string */
	const char *class_name; /* "java.lang.String" */
	const char *file;       /* SourceFile attribute, NULL if unknown */
	const struct jcf_method *code; /* NULL without class file or code */
	const struct jcf *cls;  /* the class file, NULL without */
};

/* An empty table (tests and the loader fill it with xmethods_add). */
int xmethods_alloc(struct xmethods **out);
void xmethods_free(struct xmethods *m);

/* Name flow method index IDX (1-based) from its class descriptor
 * ("Lpkg/Cls;"), method name and signature; CLS (its class file, whose
 * SourceFile names the file) and CODE may be NULL and must outlive M. */
int xmethods_add(struct xmethods *m, uint32_t idx, const char *class_sig,
		 const char *name, const char *sig, const struct jcf *cls,
		 const struct jcf_method *code);

/* Read flow/methods and the jvm stream's class files.  On failure a
 * jpb_error and a one-line reason in ERRMSG. */
int xmethods_load(struct jpb_bundle *b, struct xmethods **out, char *errmsg,
		  size_t size);

/* Index IDX, or NULL if the flows do not name it. */
const struct xm_method *xmethods_get(const struct xmethods *m, uint32_t idx);
/* One more than the largest index. */
uint32_t xmethods_limit(const struct xmethods *m);

/* Source line of BCI in M, or -1. */
int xm_line(const struct xm_method *m, int32_t bci);

#endif /* JPBPF_EXPORT_MODEL_METHODS_H */
