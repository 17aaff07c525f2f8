// SPDX-License-Identifier: MIT
/* jpbpf report: exports of the reconstructed flows.  Formats that are not
 * built yet say so and exit 2 instead of printing anything. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bundle.h"
#include "cli.h"
#include "export/calls/export.h"
#include "export/flow/export.h"
#include "export/model/threads.h"
#include "export/raw.h"
#include "export/summary.h"
#include "progress.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf report DIR --format F [--thread TID|NAME] [-o FILE]\n"
	      "Export the reconstructed flows of bundle DIR (run 'jpbpf decode' first).\n"
	      "  -f, --format F     summary (hot methods by executed bytecodes);\n"
	      "                     cct (calling-context tree), calls (call trace),\n"
	      "                     contexts (context ids per bytecode), folded\n"
	      "                     (collapsed stacks), perfetto (Chrome trace JSON);\n"
	      "                     flow (bytecode-level flow per thread), raw (the\n"
	      "                     decoder's events, for debugging);\n"
	      "                     all (the usual set, into DIR/exports/)\n"
	      "  -t, --thread T     only thread T: a host tid or a thread name\n"
	      "      --full         flow: every bytecode (default: straight-line ranges)\n"
	      "  -q, --quiet        no progress bar\n"
	      "  -n, --top N        methods listed by summary (default 20);\n"
	      "                     cct: children shown per context (default all)\n"
	      "      --min-share P  cct: hide contexts under P% of the bytecodes\n"
	      "      --fold-recursion  cct, folded: fold recursive calls\n"
	      "      --weight W     folded: bytecodes (default) or time\n"
	      "      --expand ID    contexts: print the stack of context ID\n"
	      "  -o, --output FILE  write to FILE (default: stdout)\n"
	      "      --json         JSON output\n",
	      f);
}

struct report_args {
	const char *dir, *format, *output, *thread;
	int full, quiet;
	struct summary_opts so;
	int json;
	struct calls_opts co;
};

/* The options of the call-structure exports; 0 or -1 (said why). */
static int parse_calls_opt(int c, const char *arg, struct calls_opts *o)
{
	unsigned long long v;
	char *end;
	switch (c) {
	case 'R':
		o->fold_recursion = 1;
		return 0;
	case 'S':
		o->min_share = strtod(arg, &end);
		if (*arg && !*end && o->min_share >= 0 && o->min_share <= 100)
			return 0;
		cli_err("--min-share: expected a percentage, got '%s'", arg);
		return -1;
	case 'W':
		o->weight_time = strcmp(arg, "time") == 0;
		if (o->weight_time || strcmp(arg, "bytecodes") == 0)
			return 0;
		cli_err("--weight: expected 'bytecodes' or 'time', got '%s'", arg);
		return -1;
	default:
		if (!cli_parse_u64("--expand", arg, &v) && v < 0xffffffffu) {
			o->expand = (int64_t)v;
			return 0;
		}
		cli_err("--expand: expected a context id, got '%s'", arg);
		return -1;
	}
}

static int parse(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "thread", required_argument, NULL, 't' },
		{ "top", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "full", no_argument, NULL, 'F' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "fold-recursion", no_argument, NULL, 'R' },
		{ "min-share", required_argument, NULL, 'S' },
		{ "weight", required_argument, NULL, 'W' },
		{ "expand", required_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;
	optind = 1;
	a->co.expand = -1;
	while ((c = getopt_long(argc, argv, "f:t:n:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': a->format = optarg; break;
		case 'o': a->output = optarg; break;
		case 'J': a->json = 1; break;
		case 'F': a->full = 1; break;
		case 'q': a->quiet = 1; break;
		case 't': a->thread = optarg; break;
		case 'n':
			if (cli_parse_u64("--top", optarg, &v) || v == 0 ||
			    v > 0xffffffffu) {
				cli_err("--top: expected a positive number, got '%s'",
					optarg);
				return CLI_USAGE;
			}
			a->so.top = (uint32_t)v;
			break;
		case 'R':
		case 'S':
		case 'W':
		case 'X':
			if (parse_calls_opt(c, optarg, &a->co))
				return CLI_USAGE;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1 || !a->format) {
		if (optind == argc - 1)
			cli_err("report: --format is required");
		usage(stderr);
		return CLI_USAGE;
	}
	a->dir = argv[optind];
	return -1;
}

static FILE *open_output(const struct report_args *a)
{
	FILE *f = a->output ? fopen(a->output, "w") : stdout;
	if (!f)
		cli_err("%s: %s", a->output, strerror(errno));
	return f;
}

/* Close F and say what failed: the export (RC, ERR) first, since a write
 * error after a failed export would only repeat it.  Nonzero on failure. */
static int finish_output(const struct report_args *a, FILE *f, int rc,
			 const char *err)
{
	int bad = ferror(f) | (a->output ? fclose(f) : fflush(f));
	if (rc)
		cli_err("%s", err);
	else if (bad)
		cli_err("%s: write failed", a->output ? a->output : "stdout");
	return rc || bad;
}

static int write_summary(const struct report_args *a, json_t *s)
{
	FILE *f = open_output(a);
	if (!f)
		return CLI_FAIL;
	if (a->json) {
		json_dumpf(s, f, JSON_INDENT(2));
		fputc('\n', f);
	} else {
		summary_print(f, s);
	}
	return finish_output(a, f, 0, "") ? CLI_FAIL : CLI_OK;
}

/* --thread TID|NAME to a host tid (0: all threads), or an exit code. */
static int select_thread(struct jpb_bundle *b, const struct report_args *a,
			 uint32_t *tid)
{
	struct xthreads *t;
	char err[1024];
	*tid = 0;
	if (!a->thread)
		return CLI_OK;
	int rc = xthreads_load(b, &t);
	if (!rc)
		rc = xthreads_select(t, a->thread, tid, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s: %s", a->dir, jpb_errstr(rc));
	xthreads_free(t);
	if (rc)
		cli_err("%s: %s", a->dir, err);
	return rc ? CLI_FAIL : CLI_OK;
}

static int open_bundle(const struct report_args *a, struct jpb_bundle **b,
		       uint32_t *tid)
{
	int rc = jpb_bundle_open(b, a->dir);
	if (rc) {
		cli_err("%s: %s", a->dir, jpb_errstr(rc));
		return CLI_FAIL;
	}
	rc = select_thread(*b, a, tid);
	if (rc)
		jpb_bundle_free(*b);
	return rc;
}

static int report_summary(const struct report_args *a)
{
	struct jpb_bundle *b;
	char err[1024];
	json_t *s;
	struct summary_opts so = a->so;
	int rc = open_bundle(a, &b, &so.tid);
	if (rc)
		return rc;
	rc = summary_build(b, &so, &s, err, sizeof(err));
	jpb_bundle_free(b);
	if (rc) {
		cli_err("%s", err);
		return CLI_FAIL;
	}
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(s, "damaged"), i, d)
		cli_err("warning: %s", json_string_value(d));
	rc = write_summary(a, s);
	json_decref(s);
	return rc;
}

static int open_bundle_and_output(const struct report_args *a,
				  struct jpb_bundle **b, uint32_t *tid, FILE **f)
{
	int rc = open_bundle(a, b, tid);
	if (rc)
		return rc;
	*f = open_output(a);
	if (*f)
		return CLI_OK;
	jpb_bundle_free(*b);
	return CLI_FAIL;
}

/* flow and raw: streamed straight to the output, with a progress bar. */
static int report_stream(const struct report_args *a)
{
	struct jpb_bundle *b;
	uint32_t tid;
	char err[1024] = "";
	FILE *f;
	int rc = open_bundle_and_output(a, &b, &tid, &f);
	if (rc)
		return rc;
	struct progress *p = progress_alloc(stderr, a->format,
					    !a->quiet && progress_wanted(stderr));
	if (a->format[0] == 'f') {
		struct xflow_export_opts o = { a->json, a->full, tid,
					       progress_cb, p };
		rc = xflow_export(b, f, &o, err, sizeof(err));
	} else {
		struct xraw_opts o = { tid, progress_cb, p };
		rc = xraw_export(b, f, &o, err, sizeof(err));
	}
	progress_free(p);
	jpb_bundle_free(b);
	return finish_output(a, f, rc, err) ? CLI_FAIL : CLI_OK;
}

static void warn_damage(const char *msg)
{
	cli_err("warning: %s", msg);
}

/* cct, calls, contexts, folded, perfetto (export/calls/). */
static int report_calls(struct report_args *a, enum calls_format fmt)
{
	struct jpb_bundle *b;
	char err[1024] = "";
	if ((a->co.expand >= 0 && fmt != CALLS_CONTEXTS) ||
	    (a->co.weight_time && fmt != CALLS_FOLDED)) {
		cli_err("report: --%s does not apply to --format %s",
			a->co.expand >= 0 ? "expand" : "weight", a->format);
		return CLI_USAGE;
	}
	FILE *f;
	int rc = open_bundle_and_output(a, &b, &a->co.tid, &f);
	if (rc)
		return rc;
	a->co.top = a->so.top;
	a->co.json = a->json;
	a->co.warn = warn_damage;
	rc = calls_export(b, fmt, &a->co, f, err, sizeof(err));
	jpb_bundle_free(b);
	int failed = finish_output(a, f, rc, err);
	if (rc == jpb_err_invalid)
		return CLI_USAGE;
	return failed ? CLI_FAIL : CLI_OK;
}

static int dispatch(struct report_args *a)
{
	if (strcmp(a->format, "summary") == 0)
		return report_summary(a);
	if (strcmp(a->format, "flow") == 0 || strcmp(a->format, "raw") == 0)
		return report_stream(a);
	enum calls_format cf = calls_format_parse(a->format);
	if (cf)
		return report_calls(a, cf);
	cli_err("report: unknown format '%s' (see 'jpbpf report --help')", a->format);
	return CLI_USAGE;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	memset(&a, 0, sizeof(a));
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (strcmp(a.format, "all") == 0) {
		if (a.output || a.thread || a.json) {
			cli_err("report: --format all writes DIR/exports/; "
				"-o, --thread and --json do not apply");
			return CLI_USAGE;
		}
		return cli_report_set(a.dir, a.quiet);
	}
	return dispatch(&a);
}

/* The set the one-shot run and the demo leave in DIR/exports/: what a
 * person opens first (summary, tree, flame graph, timeline) and what a
 * tool reads (JSON Lines). */
static const struct export_file {
	const char *format, *file;
	int json;
} usual_set[] = {
	{ "summary", "summary.txt", 0 },   { "summary", "summary.json", 1 },
	{ "cct", "cct.txt", 0 },           { "cct", "cct.json", 1 },
	{ "calls", "calls.jsonl", 1 },     { "flow", "flow.txt", 0 },
	{ "folded", "folded.txt", 0 },     { "perfetto", "perfetto.json", 0 },
};

int cli_report_set(const char *dir, int quiet)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/exports", dir);
	if (mkdir(path, 0755) && errno != EEXIST) {
		cli_err("%s: %s", path, strerror(errno));
		return CLI_FAIL;
	}
	for (size_t i = 0; i < sizeof(usual_set) / sizeof(usual_set[0]); i++) {
		const struct export_file *e = &usual_set[i];
		struct report_args a;
		memset(&a, 0, sizeof(a));
		a.co.expand = -1;
		a.dir = dir;
		a.format = e->format;
		a.json = e->json;
		a.quiet = quiet;
		snprintf(path, sizeof(path), "%s/exports/%s", dir, e->file);
		a.output = path;
		int rc = dispatch(&a);
		if (rc != CLI_OK)
			return rc;
	}
	if (!quiet)
		fprintf(stderr, "jpbpf: exports in %s/exports/ (summary, cct, "
			"calls, flow, folded, perfetto)\n", dir);
	return CLI_OK;
}
