// SPDX-License-Identifier: MIT
/* The summary as text (summary_print), from its JSON form. */
#include <stdlib.h>
#include <string.h>

#include "export/summary.h"

static json_int_t geti(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static double getf(json_t *o, const char *k)
{
	return json_real_value(json_object_get(o, k));
}

static const char *gets(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "?";
}

static void hot_by_events(FILE *f, json_t *s)
{
	size_t i;
	json_t *m;
	fprintf(f, "\nhot methods by bytecodes\n%12s %7s %12s %15s  %s\n",
		"bytecodes", "share", "recovered", "covered/length", "method");
	json_array_foreach(json_object_get(s, "methods"), i, m) {
		char cov[40] = "";
		json_t *len = json_object_get(m, "code_length");
		if (json_is_integer(len))
			snprintf(cov, sizeof(cov), "%" JSON_INTEGER_FORMAT "/%"
				 JSON_INTEGER_FORMAT, geti(m, "covered"),
				 json_integer_value(len));
		else if (json_object_get(m, "covered"))
			snprintf(cov, sizeof(cov), "%" JSON_INTEGER_FORMAT "/?",
				 geti(m, "covered"));
		fprintf(f, "%12" JSON_INTEGER_FORMAT " %6.2f%% %12" JSON_INTEGER_FORMAT
			" %15s  %s\n", geti(m, "events"), 100 * getf(m, "share"),
			geti(m, "recovered"), cov, gets(m, "method"));
	}
}

static void hot_by_time(FILE *f, json_t *s)
{
	size_t i;
	json_t *m;
	fprintf(f, "\nhot methods by time (exclusive, from the events' timestamps)\n"
		"%14s %7s  %s\n", "time (us)", "share", "method");
	json_array_foreach(json_object_get(s, "methods_by_time"), i, m)
		fprintf(f, "%14.3f %6.2f%%  %s\n", (double)geti(m, "time_ns") / 1e3,
			100 * getf(m, "time_share"), gets(m, "method"));
}

static int by_covered(const void *a, const void *b)
{
	json_int_t x = geti(*(json_t *const *)a, "covered"),
		   y = geti(*(json_t *const *)b, "covered");
	return x < y ? 1 : x > y ? -1 : 0;
}

static void coverage(FILE *f, json_t *s, size_t top)
{
	json_t *cl = json_object_get(json_object_get(s, "coverage"), "classes");
	size_t n = json_array_size(cl), i;
	json_t **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < n; i++)
		v[i] = json_array_get(cl, i);
	qsort(v, n, sizeof(*v), by_covered);
	fprintf(f, "\ncoverage by class (%zu classes ran; top %zu by bytecodes "
		"covered)\n%17s %7s %8s %15s  %s\n", n, n < top ? n : top,
		"covered/length", "", "branches", "both/one/none", "class");
	for (i = 0; i < n && i < top; i++) {
		json_t *c = v[i];
		json_int_t len = geti(c, "code_length"), cov = geti(c, "covered");
		char l[24] = "?", pct[16] = "", br[16] = "?", dirs[48];
		if (json_is_integer(json_object_get(c, "code_length"))) {
			snprintf(l, sizeof(l), "%" JSON_INTEGER_FORMAT, len);
			snprintf(pct, sizeof(pct), "%.1f%%",
				 len ? 100.0 * (double)cov / (double)len : 0.0);
		}
		if (json_is_integer(json_object_get(c, "branches")))
			snprintf(br, sizeof(br), "%" JSON_INTEGER_FORMAT,
				 geti(c, "branches"));
		snprintf(dirs, sizeof(dirs), "%" JSON_INTEGER_FORMAT "/%"
			 JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
			 geti(c, "branches_both"), geti(c, "branches_one"),
			 geti(c, "branches_none"));
		fprintf(f, "%8" JSON_INTEGER_FORMAT "/%-8s %7s %8s %15s  %s\n", cov,
			l, pct, br, dirs, gets(c, "class"));
	}
	free(v);
}

static void loss(FILE *f, json_t *s)
{
	json_t *l = json_object_get(s, "loss"), *w;
	size_t i;
	fprintf(f, "\ndata loss and recovery\n  %" JSON_INTEGER_FORMAT
		" gaps in the trace, %.3f us lost; %" JSON_INTEGER_FORMAT
		" events recovered into gaps, %" JSON_INTEGER_FORMAT
		" at unknown positions; %" JSON_INTEGER_FORMAT " resyncs\n",
		geti(l, "gaps"), (double)geti(l, "lost_ns") / 1e3,
		geti(l, "recovered"), geti(l, "unknown"), geti(l, "resyncs"));
	json_t *wl = json_object_get(l, "writer_losses");
	if (!json_array_size(wl))
		fputs("  no writer reported lost records\n", f);
	json_array_foreach(wl, i, w)
		fprintf(f, "  %s lost %" JSON_INTEGER_FORMAT " %s\n",
			gets(w, "stream"), geti(w, "count"), gets(w, "what"));
}

void summary_print(FILE *f, json_t *s)
{
	json_int_t ev = geti(s, "events");
	fprintf(f, "%" JSON_INTEGER_FORMAT " bytecodes in %" JSON_INTEGER_FORMAT
		" threads: %" JSON_INTEGER_FORMAT " observed, %" JSON_INTEGER_FORMAT
		" recovered, %" JSON_INTEGER_FORMAT " at unknown positions; %.3f ms\n",
		ev, geti(s, "threads"), geti(s, "observed"), geti(s, "recovered"),
		geti(s, "unknown"), (double)geti(s, "time_ns") / 1e6);
	hot_by_events(f, s);
	hot_by_time(f, s);
	coverage(f, s, json_array_size(json_object_get(s, "methods")));
	loss(f, s);
}
