// SPDX-License-Identifier: MIT
/* `jpbpf info`: the summary library and the command itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "bundle.h"
#include "info/info.h"
#include "records.h"

static char dir[256];

static void put_thread(struct jpb_writer *w, struct jpb_buf *scratch,
		       uint64_t t, uint32_t tid, uint32_t nstid, const char *name)
{
	struct jpb_rec_thread th = { tid, nstid, 100, JPB_THREAD_START,
				     jpb_str_c(name) };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_THREAD),
					    t, &th, scratch), 0);
}

/* A bundle with meta.json, two intact streams and one truncated one. */
static int make_bundle(void **state)
{
	(void)state;
	struct jpb_bundle *b;
	struct jpb_writer *w;
	struct jpb_buf scratch = { 0 };
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/info.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || jpb_bundle_create(&b, dir))
		return -1;
	json_t *meta = jpb_meta_new_base();
	jpb_meta_save(b, meta);
	json_decref(meta);

	jpb_writer_open(b, "jvm", &w);
	put_thread(w, &scratch, 5000, 0, 7, "main");
	put_thread(w, &scratch, 5500, 0, 8, "worker-1");
	jpb_writer_close(w);

	jpb_writer_open(b, "sched", &w);
	put_thread(w, &scratch, 1000, 4107, 7, NULL); /* host tid for nstid 7 */
	put_thread(w, &scratch, 9000, 4200, 0, "kworker-ish");
	jpb_writer_close(w);

	jpb_writer_open(b, "pt/cpu0", &w);
	for (int i = 0; i < 4; i++)
		jpb_writer_put(w, 0x7f00, 2000 + (uint64_t)i, "0123456789", 10);
	jpb_writer_close(w);
	jpb_buf_fini(&scratch);
	jpb_bundle_free(b);

	char path[512];
	snprintf(path, sizeof(path), "%s/pt/cpu0.jpb", dir);
	/* Cut the last record in half: 16 + 3 * 40 + 20. */
	return truncate(path, 16 + 3 * 40 + 20);
}

static int remove_bundle(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static json_t *find_thread(json_t *threads, json_int_t tid, json_int_t nstid)
{
	size_t i;
	json_t *t;
	json_array_foreach(threads, i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid &&
		    json_integer_value(json_object_get(t, "nstid")) == nstid)
			return t;
	return NULL;
}

static void check_summary(json_t *o)
{
	assert_int_equal(json_integer_value(json_object_get(o, "format_version")),
			 JPB_FORMAT_MAJOR);
	json_t *streams = json_object_get(o, "streams");
	assert_int_equal(json_object_size(streams), 3);
	json_t *pt = json_object_get(streams, "pt/cpu0");
	assert_int_equal(json_integer_value(json_object_get(pt, "records")), 3);
	assert_int_equal(json_integer_value(json_object_get(pt, "truncated_at")),
			 16 + 3 * 40);
	assert_int_equal(json_integer_value(json_object_get(pt, "bytes")),
			 16 + 3 * 40 + 20);
	json_t *jvm = json_object_get(streams, "jvm");
	assert_true(json_is_null(json_object_get(jvm, "truncated_at")));
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(jvm, "types"), "thread")), 2);

	/* nstid 7 seen by the agent and the kernel is one thread. */
	json_t *threads = json_object_get(o, "threads");
	assert_int_equal(json_array_size(threads), 3);
	json_t *main_thread = find_thread(threads, 4107, 7);
	assert_non_null(main_thread);
	assert_string_equal(json_string_value(json_object_get(main_thread, "name")),
			    "main");
	assert_non_null(find_thread(threads, 0, 8));
	assert_non_null(find_thread(threads, 4200, 0));
	assert_int_equal(json_integer_value(json_object_get(o, "time_span_ns")),
			 9000 - 1000);
}

static void test_summary_library(void **state)
{
	(void)state;
	json_t *o;
	char err[256];
	assert_int_equal(info_summarize(dir, &o, err, sizeof(err)), 0);
	check_summary(o);
	json_decref(o);
	assert_int_not_equal(info_summarize("/nonexistent", &o, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "no such directory"));
}

/* Runs `$JPBPF info ARGS`, returns its exit status and stdout. */
static int run_info(const char *args, char *out, size_t size, char *err,
		    size_t esize)
{
	const char *jpbpf = getenv("JPBPF");
	char cmd[1024], outp[300], errp[300];
	snprintf(outp, sizeof(outp), "%s.out", dir);
	snprintf(errp, sizeof(errp), "%s.err", dir);
	snprintf(cmd, sizeof(cmd), "%s info %s >%s 2>%s", jpbpf ? jpbpf : "build/jpbpf",
		 args, outp, errp);
	int st = system(cmd);
	FILE *f = fopen(outp, "r");
	size_t n = f ? fread(out, 1, size - 1, f) : 0;
	out[n] = '\0';
	if (f)
		fclose(f);
	f = fopen(errp, "r");
	n = f ? fread(err, 1, esize - 1, f) : 0;
	err[n] = '\0';
	if (f)
		fclose(f);
	unlink(outp);
	unlink(errp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_command_json(void **state)
{
	(void)state;
	static char out[1 << 16], err[4096];
	char args[400];
	json_error_t jerr;
	snprintf(args, sizeof(args), "--json %s", dir);
	assert_int_equal(run_info(args, out, sizeof(out), err, sizeof(err)), 0);
	json_t *o = json_loads(out, 0, &jerr);
	assert_non_null(o);
	check_summary(o);
	json_decref(o);
	/* The damage is also said on stderr, with stream and offset. */
	assert_non_null(strstr(err, "pt/cpu0: record at offset 136 truncated"));
}

static void test_command_text_and_errors(void **state)
{
	(void)state;
	static char out[1 << 16], err[4096];
	assert_int_equal(run_info(dir, out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "threads: 3"));
	assert_non_null(strstr(out, "worker-1"));
	assert_int_equal(run_info("/nonexistent", out, sizeof(out), err, sizeof(err)), 1);
	assert_non_null(strstr(err, "no such directory"));
	assert_int_equal(run_info("", out, sizeof(out), err, sizeof(err)), 2);
	assert_int_equal(run_info("--bogus x", out, sizeof(out), err, sizeof(err)), 2);
	assert_int_equal(run_info("--help", out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "Usage: jpbpf info"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_library),
		cmocka_unit_test(test_command_json),
		cmocka_unit_test(test_command_text_and_errors),
	};
	return cmocka_run_group_tests(tests, make_bundle, remove_bundle);
}
