// SPDX-License-Identifier: MIT
/* report --format summary on a hand-made flow with known counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "bundle.h"
#include "export/summary.h"
#include "records.h"
#include "records_flow.h"

static char dir[256];

static void put_method(struct jpb_writer *w, struct jpb_buf *sc, uint32_t idx,
		       const char *cls, const char *name, const char *sig)
{
	struct jpb_rec_flow_method m = { idx, 0, 1000 + idx, jpb_str_c(cls),
					 jpb_str_c(name), jpb_str_c(sig) };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_FLOW_METHOD),
					    1, &m, sc), 0);
}

/* N events of METHOD with STATUS, appended to the packed array in B. */
static void add_events(struct jpb_buf *b, uint32_t method, uint8_t status,
		       unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t p[JPB_FLOW_EVENT_SIZE];
		struct jpb_flow_event e = { method, (int32_t)i, 0x10, status, 1, 0, i };
		jpb_flow_event_put(p, &e);
		assert_int_equal(jpb_buf_put(b, p, sizeof(p)), 0);
	}
}

static void put_thread(struct jpb_bundle *bd, uint32_t tid, struct jpb_buf *ev)
{
	char name[32];
	struct jpb_writer *w;
	struct jpb_buf sc = { 0 };
	snprintf(name, sizeof(name), "flow/tid%u", tid);
	assert_int_equal(jpb_writer_open(bd, name, &w), 0);
	struct jpb_rec_flow_events r = { tid, 0, 0,
					 { ev->data, (uint32_t)ev->len } };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_FLOW_EVENTS),
					    2, &r, &sc), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_buf_fini(&sc);
}

/* Thread 7: Foo.a 30 decoded + 5 recovered, Foo.b 10 certain, 3 unknown.
 * Thread 8: Foo.b 40 chosen, bar.Baz.c 1 decoded. */
static int setup(void **state)
{
	(void)state;
	struct jpb_bundle *b;
	struct jpb_writer *w;
	struct jpb_buf sc = { 0 }, t7 = { 0 }, t8 = { 0 };
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/summary.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || jpb_bundle_create(&b, dir))
		return -1;
	jpb_writer_open(b, "flow/methods", &w);
	put_method(w, &sc, 1, "LFoo;", "a", "()V");
	put_method(w, &sc, 2, "LFoo;", "b", "(I)I");
	put_method(w, &sc, 3, "Lbar/Baz;", "c", "()J");
	jpb_writer_close(w);
	add_events(&t7, 1, JPB_FLOW_DECODED, 30);
	add_events(&t7, 1, JPB_FLOW_RECOVERED, 5);
	add_events(&t7, 2, JPB_FLOW_CERTAIN, 10);
	add_events(&t7, 0, JPB_FLOW_UNKNOWN, 3);
	add_events(&t8, 2, JPB_FLOW_CHOSEN, 40);
	add_events(&t8, 3, JPB_FLOW_DECODED, 1);
	put_thread(b, 7, &t7);
	put_thread(b, 8, &t8);
	jpb_buf_fini(&sc);
	jpb_buf_fini(&t7);
	jpb_buf_fini(&t8);
	jpb_bundle_free(b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static json_t *build(const struct summary_opts *o, int expect_err)
{
	struct jpb_bundle *b;
	json_t *s = NULL;
	char err[256] = "";
	assert_int_equal(jpb_bundle_open(&b, dir), 0);
	int rc = summary_build(b, o, &s, err, sizeof(err));
	jpb_bundle_free(b);
	if (expect_err) {
		assert_int_not_equal(rc, 0);
		assert_true(strlen(err) > 0);
		return NULL;
	}
	assert_int_equal(rc, 0);
	return s;
}

static json_int_t num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static const char *mname(json_t *s, size_t i)
{
	return json_string_value(json_object_get(
		json_array_get(json_object_get(s, "methods"), i), "method"));
}

static void test_all_threads(void **state)
{
	(void)state;
	struct summary_opts o = { 0, 0 };
	json_t *s = build(&o, 0);
	assert_int_equal(num(s, "threads"), 2);
	assert_int_equal(num(s, "events"), 89);
	assert_int_equal(num(s, "observed"), 81);
	assert_int_equal(num(s, "recovered"), 5);
	assert_int_equal(num(s, "unknown"), 3);
	json_t *m = json_object_get(s, "methods");
	assert_int_equal(json_array_size(m), 3);
	/* Foo.b 50, Foo.a 35, bar.Baz.c 1 */
	assert_string_equal(mname(s, 0), "Foo.b(I)I");
	assert_int_equal(num(json_array_get(m, 0), "events"), 50);
	assert_string_equal(mname(s, 1), "Foo.a()V");
	assert_int_equal(num(json_array_get(m, 1), "recovered"), 5);
	assert_int_equal(num(json_array_get(m, 1), "observed"), 30);
	assert_string_equal(mname(s, 2), "bar.Baz.c()J");
	json_decref(s);
}

static void test_one_thread_and_top(void **state)
{
	(void)state;
	struct summary_opts o = { 7, 1 };
	json_t *s = build(&o, 0);
	assert_int_equal(num(s, "threads"), 1);
	assert_int_equal(num(s, "events"), 48);
	assert_int_equal(json_array_size(json_object_get(s, "methods")), 1);
	assert_string_equal(mname(s, 0), "Foo.a()V");
	json_decref(s);
	struct summary_opts none = { 9, 0 };
	build(&none, 1);
}

static void test_no_flow_is_an_error(void **state)
{
	(void)state;
	char empty[300];
	struct jpb_bundle *b;
	struct jpb_writer *w;
	json_t *s = NULL;
	char err[256] = "";
	snprintf(empty, sizeof(empty), "%s-noflow", dir);
	assert_int_equal(jpb_bundle_create(&b, empty), 0);
	assert_int_equal(jpb_writer_open(b, "sched", &w), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	struct summary_opts o = { 0, 0 };
	assert_int_not_equal(summary_build(b, &o, &s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "jpbpf decode"));
	jpb_bundle_free(b);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", empty);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_threads),
		cmocka_unit_test(test_one_thread_and_top),
		cmocka_unit_test(test_no_flow_is_an_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
