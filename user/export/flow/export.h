/* SPDX-License-Identifier: MIT */
/*
 * `report --format flow` over a bundle: every thread's flow (or one
 * thread's) from flow/tidN through the formatter (format.h), batch by
 * batch, never the whole flow in memory.
 */
#ifndef JPBPF_EXPORT_FLOW_EXPORT_H
#define JPBPF_EXPORT_FLOW_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jpb_bundle;

struct xflow_export_opts {
	int json, full;
	uint32_t tid; /* 0: all threads */
	/* Called now and then with bytes of flow streams read so far and
	 * their total; may be NULL. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Write to OUT.  On failure a jpb_error and a one-line reason in ERRMSG;
 * damaged flow streams are exported up to the damage and each named in a
 * warning on stderr. */
int xflow_export(struct jpb_bundle *b, FILE *out,
		 const struct xflow_export_opts *o, char *errmsg, size_t size);

#endif /* JPBPF_EXPORT_FLOW_EXPORT_H */
