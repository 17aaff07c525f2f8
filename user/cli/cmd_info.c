// SPDX-License-Identifier: MIT
/* jpbpf info DIR [--json]: what a bundle holds.  The text view is rendered
 * from the same JSON object as --json, so the two never disagree. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "info/info.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf info DIR [--json]\n"
	      "Show what bundle DIR holds: streams, record counts, threads,\n"
	      "time span, damage, and per-domain sections (docs/FORMAT.md).\n"
	      "      --json   one JSON object\n",
	      f);
}

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

static void print_streams(json_t *streams)
{
	const char *name;
	json_t *s;
	printf("streams:\n  %-20s %12s %14s  %s\n", "name", "records", "bytes",
	       "status");
	json_object_foreach(streams, name, s) {
		json_t *trunc = json_object_get(s, "truncated_at");
		printf("  %-20s %12" JSON_INTEGER_FORMAT " %14" JSON_INTEGER_FORMAT "  %s\n",
		       name, json_integer_value(json_object_get(s, "records")),
		       json_integer_value(json_object_get(s, "bytes")),
		       json_is_integer(trunc) || json_object_get(s, "error")
			       ? str_or(s, "error", "damaged")
			       : "ok");
		const char *type;
		json_t *n;
		json_object_foreach(json_object_get(s, "types"), type, n)
			printf("  %-20s %12" JSON_INTEGER_FORMAT "   %s\n", "",
			       json_integer_value(n), type);
	}
}

static void print_threads(json_t *threads)
{
	size_t i;
	json_t *t;
	printf("threads: %zu\n", json_array_size(threads));
	json_array_foreach(threads, i, t)
		printf("  tid %-8" JSON_INTEGER_FORMAT " nstid %-8" JSON_INTEGER_FORMAT " %s\n",
		       json_integer_value(json_object_get(t, "tid")),
		       json_integer_value(json_object_get(t, "nstid")),
		       str_or(t, "name", "?"));
}

/* Sections print as "section.key: value", one scalar per line. */
static void print_flat(const char *prefix, json_t *v)
{
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			char p[256];
			snprintf(p, sizeof(p), "%s.%s", prefix, k);
			print_flat(p, x);
		}
		return;
	}
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	printf("%s: %s\n", prefix, text ? text : "?");
	free(text);
}

static void print_text(const char *dir, json_t *o)
{
	json_t *meta = json_object_get(o, "meta");
	printf("bundle: %s\nformat: %" JSON_INTEGER_FORMAT "\n", dir,
	       json_integer_value(json_object_get(o, "format_version")));
	if (json_is_object(meta))
		printf("recorded by: jpbpf %s on %s (kernel %s)\n",
		       str_or(meta, "tool_version", "?"), str_or(meta, "host", "?"),
		       str_or(meta, "kernel", "?"));
	else
		printf("meta.json: %s\n", str_or(o, "meta_error", "missing"));
	printf("time span: %.6f s\n",
	       (double)json_integer_value(json_object_get(o, "time_span_ns")) / 1e9);
	print_streams(json_object_get(o, "streams"));
	print_threads(json_object_get(o, "threads"));
	const char *k;
	json_t *v;
	static const char *const core[] = { "format_version", "meta", "meta_error",
					    "streams", "threads", "time_span_ns",
					    "start_ns", "end_ns", NULL };
	json_object_foreach(o, k, v) {
		int is_core = 0;
		for (size_t i = 0; core[i]; i++)
			is_core |= strcmp(k, core[i]) == 0;
		if (!is_core)
			print_flat(k, v);
	}
}

/* Damage is reported on stderr too, so scripts that read only stdout
 * (or only the exit code of a later step) are not misled silently. */
static void warn_damage(json_t *o)
{
	const char *name;
	json_t *s;
	json_object_foreach(json_object_get(o, "streams"), name, s) {
		const char *e = json_string_value(json_object_get(s, "error"));
		if (e)
			cli_err("warning: %s", e);
	}
	const char *me = json_string_value(json_object_get(o, "meta_error"));
	if (me)
		cli_err("warning: %s", me);
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, as_json = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'J') {
			as_json = 1;
		} else if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		} else {
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	json_t *o;
	char errmsg[1024];
	if (info_summarize(argv[optind], &o, errmsg, sizeof(errmsg)) != 0) {
		cli_err("%s", errmsg);
		return CLI_FAIL;
	}
	warn_damage(o);
	if (as_json) {
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		print_text(argv[optind], o);
	}
	json_decref(o);
	return fflush(stdout) == 0 ? CLI_OK : CLI_FAIL;
}
