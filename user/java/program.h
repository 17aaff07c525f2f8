/* SPDX-License-Identifier: MIT */
/*
 * The program model of one recorded JVM: every class file the agent saw,
 * the class hierarchy over them, jmethodID -> method, and per-method CFGs
 * built lazily on first request and cached.
 *
 * Not thread-safe (queries fill caches); the CFGs it hands out are
 * read-only and may be shared.
 *
 * A class file that fails to parse does not fail the load: it is counted
 * (jprog_bad_classes) and the first failure's diagnostic is kept, since
 * one odd class must not hide the rest of the program.
 */
#ifndef JPBPF_JAVA_PROGRAM_H
#define JPBPF_JAVA_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "bundle.h"
#include "java/cfg.h"
#include "java/classfile.h"
#include "java/hierarchy.h"

struct jprog;

int jprog_alloc(struct jprog **out);
void jprog_free(struct jprog *p);

/* Parse and add one class file defined by LOADER.  Returns 0 when added,
 * 1 when a class of that name and loader was already there, or a negative
 * java_error (then DIAG says why, and the class is counted as bad). */
int jprog_add_class(struct jprog *p, const uint8_t *data, size_t len,
		    uint64_t loader, struct java_diag *diag);

/* Register jmethodID ID as NAME SIG in the class with descriptor CLASS_SIG
 * ("Ljava/lang/String;"), as the agent's method records say. */
int jprog_add_method_id(struct jprog *p, uint64_t id, const char *class_sig,
			const char *name, const char *sig);

/* Add every JPB_REC_JVM_CLASS and JPB_REC_JVM_METHOD record of the "jvm"
 * stream of B.  Returns the number of classes added, or a negative
 * jpb_error if the stream cannot be read at all (the message goes to
 * DIAG).  A record that fails its checksum is skipped and the load goes
 * on; a damaged tail (a bad length, a truncated record) ends it after the
 * intact records.  Either way DIAG says what was lost while the return
 * is not negative (msg empty when nothing was).  Class files that fail
 * to parse are counted in jprog_bad_classes, not in DIAG. */
int jprog_load_bundle(struct jprog *p, struct jpb_bundle *b,
		      struct java_diag *diag);

/* jprog_load_bundle, handing each record of the stream (of any type, the
 * program's own after it took them) to VISIT(ARG, REC) too, so that a
 * caller needing other records reads the stream once.  A negative return
 * from VISIT (a jpb_error) ends the load with it, named in DIAG. */
typedef int (*jprog_visit_fn)(void *arg, const struct jpb_record *rec);
int jprog_load_bundle_visit(struct jprog *p, struct jpb_bundle *b,
			    struct java_diag *diag, jprog_visit_fn visit, void *arg);

struct jhier *jprog_hier(struct jprog *p);
size_t jprog_bad_classes(const struct jprog *p);
/* The first bad class's diagnostic, or NULL if none. */
const struct java_diag *jprog_first_bad(const struct jprog *p);

/* The method registered for jmethodID ID, resolved against the loaded
 * classes.  java_err_not_found if unknown or its class is missing. */
int jprog_method_by_id(struct jprog *p, uint64_t id, struct jhier_method *out);

/* The CFG of M (declared in a class of P), built on first use.  The CFG
 * belongs to P.  java_err_no_code for abstract and native methods. */
int jprog_cfg(struct jprog *p, const struct jcf_method *m,
	      const struct jcfg **out, struct java_diag *diag);
/* 1 if jprog_cfg would give M a CFG, else 0 (or a negative java_error),
 * answered without building the CFG where the code checks out. */
int jprog_has_cfg(struct jprog *p, const struct jcf_method *m);

/* Candidates of the invoke at instruction index INSN of M's CFG, where M
 * is declared in CLS (defined by LOADER); see jhier_call_targets.  Computed
 * on first use and cached until the next class is added; *OUT points into
 * the cache.  Returns the count, or java_err_invalid if INSN is not an
 * invoke. */
int jprog_call_targets(struct jprog *p, const struct jcf *cls,
		       uint64_t loader, const struct jcf_method *m,
		       uint32_t insn, const struct jhier_method **out);

#endif /* JPBPF_JAVA_PROGRAM_H */
