/* SPDX-License-Identifier: MIT */
/*
 * Summaries of a bundle: what `jpbpf info` prints.
 *
 * The core summary (streams, threads, time span) is built here; each
 * writer's domain adds a section (jvm, sched, pt, truth...) by defining a
 * struct info_section and listing it in sections.c.
 */
#ifndef JPBPF_INFO_H
#define JPBPF_INFO_H

#include <jansson.h>

#include "bundle.h"

struct info_section {
	const char *name; /* key in the JSON object */
	/* Allocate per-run state; NULL on failure. */
	void *(*alloc)(void);
	/* Called for every intact record of every stream. */
	void (*record)(void *state, const char *stream,
		       const struct jpb_record *rec);
	/* The section's JSON object, or NULL when the bundle has nothing
	 * for it (the key is then left out). */
	json_t *(*finish)(void *state, json_t *meta);
	void (*free)(void *state);
};

/* The registered sections, NULL-terminated. */
extern const struct info_section *const info_sections[];

/* Summarise the bundle at DIR into a new JSON object (see docs/FORMAT.md,
 * "jpbpf info").  On failure returns a jpb_error and sets *errmsg to a
 * static or bundle-owned message. */
int info_summarize(const char *dir, json_t **out, char *errmsg, size_t size);

#endif /* JPBPF_INFO_H */
