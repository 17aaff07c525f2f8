/* SPDX-License-Identifier: MIT */
/*
 * Exact expected output for the flow's unit tests: reconstruct a script
 * of decoded events and compare every flow event, method, bci, status
 * and number of candidates, with the list wanted.  Header-only, for
 * cmocka tests (include <cmocka.h> first).
 */
#ifndef JPBPF_TESTS_FLOW_EXPECT_H
#define JPBPF_TESTS_FLOW_EXPECT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "event_script.h"
#include "flow/flow.h"

struct flow_want {
	const char *method; /* "Class.name" */
	int32_t bci;
	uint8_t status;
	uint16_t ncand;
};

/* Fail unless flow F's events OUT[0..N) are exactly W[0..NW) (MAX_STATES,
 * the flow's cap, only names the run in the message). */
static inline void flow_expect_events(const struct flow *f, const struct jpb_flow_event *out,
				      size_t n, unsigned max_states,
				      const struct flow_want *w, size_t nw)
{
	for (size_t i = 0; i < n && i < nw; i++) {
		struct flow_method_info m = flow_method(f, out[i].method);
		char got[160];
		snprintf(got, sizeof(got), "%s.%s", m.name ? m.class_name : "?", m.name ? m.name : "?");
		if (strcmp(got, w[i].method) || out[i].bci != w[i].bci ||
		    out[i].status != w[i].status || out[i].ncand != w[i].ncand)
			fail_msg("max_states %u, event %zu: got %s bci %d %s/%u, want %s bci %d %s/%u",
				 max_states, i, got, out[i].bci,
				 jpb_flow_status_name(out[i].status), out[i].ncand, w[i].method,
				 w[i].bci, jpb_flow_status_name(w[i].status), w[i].ncand);
	}
	assert_int_equal(n, nw);
}

/* Reconstruct S over program P with at most MAX_STATES states per step
 * (codelets FIRST_CODELET on described by DESC, a NULL-terminated list,
 * e.g. "method entry point (kind = zerolocals)") and fail unless the
 * flow is exactly W.  SUM (may be NULL) gets the thread's counts. */
static inline void flow_expect_exact_desc(struct jprog *p, const struct event_script *s,
					  unsigned max_states, unsigned first_codelet,
					  const char *const *desc, struct flow_summary *sum,
					  const struct flow_want *w, size_t nw)
{
	struct flow_opts o = { .max_states = max_states };
	struct flow *f;
	assert_int_equal(flow_alloc(&f, p, &o), 0);
	for (unsigned k = 0; desc[k]; k++)
		assert_int_equal(flow_set_codelet(f, first_codelet + k, desc[k]), 0);
	const struct jpb_flow_event *out;
	size_t n;
	assert_int_equal(flow_thread(f, s->ev, s->n, &out, &n, sum), 0);
	flow_expect_events(f, out, n, max_states, w, nw);
	flow_free(f);
}

/* As flow_expect_exact_desc, ENTRY_CODELET the zerolocals method entry. */
static inline void flow_expect_exact(struct jprog *p, const struct event_script *s,
				     unsigned max_states, unsigned entry_codelet,
				     const struct flow_want *w, size_t nw)
{
	static const char *const desc[] = { "zerolocals", NULL };
	flow_expect_exact_desc(p, s, max_states, entry_codelet, desc, NULL, w, nw);
}

#endif
