/* SPDX-License-Identifier: MIT */
/*
 * The state of the flow tests that run a script of decoded events
 * (event_script.h) over javac-compiled classes (java_fixture.h): the
 * program and the script, made and freed the same way by each.
 */
#ifndef JPBPF_TESTS_FLOW_SCRIPT_FIXTURE_H
#define JPBPF_TESTS_FLOW_SCRIPT_FIXTURE_H

#include <stdlib.h>

#include "event_script.h"
#include "java_fixture.h"

struct script_fx {
	struct jprog *p;
	struct event_script s;
};

/* SRC's classes CLS[0..N) loaded in order, with an empty script; NULL
 * when there is no javac (the group's cases skip). */
static inline struct script_fx *script_fx_new(const char *src,
					      const char *const *cls, size_t n)
{
	struct jprog *p = java_fixture_program(src, cls, n);
	if (!p)
		return NULL;
	struct script_fx *x = calloc(1, sizeof(*x));
	if (!x)
		abort();
	x->p = p;
	return x;
}

/* A cmocka group teardown for a struct script_fx state (or NULL). */
static inline int script_fx_teardown(void **state)
{
	struct script_fx *x = *state;
	if (x) {
		jprog_free(x->p);
		script_fini(&x->s);
		free(x);
	}
	return 0;
}

#endif
