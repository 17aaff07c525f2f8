// SPDX-License-Identifier: MIT
/* jpbpf report: exports of the reconstructed flows.  Formats that are not
 * built yet say so and exit 2 instead of printing anything. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "cli.h"
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
	      "                     flow, cct, calls, contexts, folded, perfetto:\n"
	      "                     not implemented yet\n"
	      "                     flow (bytecode-level flow per thread), raw (the\n"
	      "                     decoder's events, for debugging)\n"
	      "  -t, --thread T     only thread T: a host tid or a thread name\n"
	      "      --full         flow: every bytecode (default: straight-line ranges)\n"
	      "  -q, --quiet        no progress bar\n"
	      "  -n, --top N        methods listed by summary (default 20)\n"
	      "  -o, --output FILE  write to FILE (default: stdout)\n"
	      "      --json         JSON output\n",
	      f);
}

struct report_args {
	const char *dir, *format, *output, *thread;
	int full, quiet;
	struct summary_opts so;
	int json;
};

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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;
	optind = 1;
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

static int write_summary(const struct report_args *a, json_t *s)
{
	FILE *f = a->output ? fopen(a->output, "w") : stdout;
	if (!f) {
		cli_err("%s: %s", a->output, strerror(errno));
		return CLI_FAIL;
	}
	if (a->json) {
		json_dumpf(s, f, JSON_INDENT(2));
		fputc('\n', f);
	} else {
		summary_print(f, s);
	}
	int bad = ferror(f) | (a->output ? fclose(f) : fflush(f));
	if (bad) {
		cli_err("%s: write failed", a->output ? a->output : "stdout");
		return CLI_FAIL;
	}
	return CLI_OK;
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

/* flow and raw: streamed straight to the output, with a progress bar. */
static int report_stream(const struct report_args *a)
{
	struct jpb_bundle *b;
	uint32_t tid;
	char err[1024] = "";
	int rc = open_bundle(a, &b, &tid);
	if (rc)
		return rc;
	FILE *f = a->output ? fopen(a->output, "w") : stdout;
	if (!f) {
		cli_err("%s: %s", a->output, strerror(errno));
		jpb_bundle_free(b);
		return CLI_FAIL;
	}
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
	int bad = ferror(f) | (a->output ? fclose(f) : fflush(f));
	if (rc)
		cli_err("%s", err);
	else if (bad)
		cli_err("%s: write failed", a->output ? a->output : "stdout");
	return rc || bad ? CLI_FAIL : CLI_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	memset(&a, 0, sizeof(a));
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (strcmp(a.format, "summary") == 0)
		return report_summary(&a);
	if (strcmp(a.format, "flow") == 0 || strcmp(a.format, "raw") == 0)
		return report_stream(&a);
	static const char *const later[] = { "cct", "calls", "contexts",
					     "folded", "perfetto", NULL };
	for (size_t i = 0; later[i]; i++)
		if (strcmp(a.format, later[i]) == 0)
			return cli_not_implemented(a.format);
	cli_err("report: unknown format '%s' (see 'jpbpf report --help')", a.format);
	return CLI_USAGE;
}
