/* SPDX-License-Identifier: MIT */
/*
 * A class table over many parsed class files, and call-site resolution.
 *
 * Classes are keyed by internal name and defining loader (an opaque id, 0
 * for the bootstrap loader).  A name is looked up first under the asking
 * loader, then the bootstrap loader, then under any loader: the agent
 * reports the defining loader, not the initiating one, so this is the
 * delegation order of the common case.
 *
 * Call sites (JVMS §6.5 invoke*, §5.4.3.3-4 resolution, §5.4.6 selection):
 *  - invokestatic: the resolved method, exactly;
 *  - invokespecial: the resolved method, or for a super call the method
 *    found from the caller's direct superclass, exactly;
 *  - invokevirtual/invokeinterface: for every loaded concrete subtype of
 *    the symbolic class, the method selection would pick; duplicates
 *    removed.  Private and final targets, receivers of a final class and
 *    signature-polymorphic methods (MethodHandle.invoke*, VarHandle) give
 *    the one target, flagged JHIER_T_EXACT;
 *  - invokedynamic: the lambda's implementation method when the bootstrap
 *    is LambdaMetafactory (flag JHIER_T_INDIRECT: generated frames run in
 *    between); other bootstraps give no candidates.
 * Not thread-safe, queries included: they link classes lazily and mark
 * visited classes.
 *
 * Package-private overriding is not checked: a same-name method in a
 * subclass is taken to override.  The trace narrows the candidates.
 */
#ifndef JPBPF_JAVA_HIERARCHY_H
#define JPBPF_JAVA_HIERARCHY_H

#include <stddef.h>
#include <stdint.h>

#include "java/classfile.h"

struct jhier;

/* A method with its declaring class. */
struct jhier_method {
	const struct jcf *cls;
	const struct jcf_method *m;
	uint64_t loader;
	unsigned flags; /* JHIER_T_* */
};

enum {
	JHIER_T_EXACT = 1u << 0,    /* the only possible target */
	JHIER_T_INDIRECT = 1u << 1, /* reached through generated frames */
};

int jhier_alloc(struct jhier **out);
void jhier_free(struct jhier *h);

/* Add CF (the table takes ownership, also on error) as defined by LOADER.
 * Returns 1 and frees CF if the same name and loader are already present
 * (a retransformed class keeps its first bytes), 0 when added. */
int jhier_add(struct jhier *h, struct jcf *cf, uint64_t loader);

size_t jhier_class_count(const struct jhier *h);
const struct jcf *jhier_class_at(const struct jhier *h, size_t i,
				 uint64_t *loader);
/* NAME as seen from LOADER (see above), or NULL. */
const struct jcf *jhier_class(const struct jhier *h, const char *name,
			      uint64_t loader);

/* Is SUB (seen from LOADER) SUPER or a subclass or implementor of it?  An
 * unloaded class on the way makes the answer 0. */
int jhier_is_subtype(struct jhier *h, const char *sub, const char *super,
		     uint64_t loader);

/* Method resolution (JVMS §5.4.3.3/4) of NAME DESC in class CLS: CLS and
 * its superclasses, then the maximally specific superinterface methods
 * (a non-abstract one preferred).  java_err_not_found if absent. */
int jhier_resolve(struct jhier *h, const char *cls, const char *name,
		  const char *desc, uint64_t loader, struct jhier_method *out);

/* Candidate callees of the invoke at instruction operand CP_INDEX of kind
 * KIND (enum jbc_kind) in class CALLER (defined by LOADER).  Writes up to
 * MAX entries to OUT and returns how many candidates there are (may be
 * more than MAX), or a negative java_error.  0 candidates is a valid
 * answer: e.g. no concrete receiver class is loaded. */
int jhier_call_targets(struct jhier *h, const struct jcf *caller,
		       uint64_t loader, unsigned kind, unsigned cp_index,
		       struct jhier_method *out, size_t max);

#endif /* JPBPF_JAVA_HIERARCHY_H */
