/* SPDX-License-Identifier: MIT */
/*
 * The threads a report can select: those with a reconstructed flow
 * (flow/tidN) or decoded events (decoded/tidN), named by the bundle's `thread` records (the agent's Java
 * name, else the kernel's comm), matched by host tid or, where the agent
 * only knew the namespace tid, by nstid.
 */
#ifndef JPBPF_EXPORT_MODEL_THREADS_H
#define JPBPF_EXPORT_MODEL_THREADS_H

#include <stddef.h>
#include <stdint.h>

struct jpb_bundle;
struct xthreads;

struct xthread {
	uint32_t tid;     /* host tid: the N of flow/tidN */
	uint32_t nstid;   /* 0 if unknown */
	const char *name; /* Java name from the agent, else comm; "" if none */
	const char *comm; /* the kernel's name (sched stream), "" if none */
	const char *former; /* earlier Java names, each ending in '\n' (the
			     * main thread ends as "DestroyJavaVM") */
	int has_flow;    /* flow/tidN exists */
	int has_decoded; /* decoded/tidN exists */
};

int xthreads_load(struct jpb_bundle *b, struct xthreads **out);
void xthreads_free(struct xthreads *t);

size_t xthreads_count(const struct xthreads *t);
/* Sorted by tid. */
const struct xthread *xthreads_at(const struct xthreads *t, size_t i);
/* The thread TID, or NULL. */
const struct xthread *xthreads_find(const struct xthreads *t, uint32_t tid);

/* SEL is a tid or a thread name (a Java name it had, or its comm).  0 with *TID set; or jpb_err_not_found
 * (no such thread with a flow or decoded events) / jpb_err_invalid (a name several
 * threads share), with a one-line message listing the candidates. */
int xthreads_select(const struct xthreads *t, const char *sel, uint32_t *tid,
		    char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_MODEL_THREADS_H */
