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
#include "export/summary.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf report DIR --format F [--thread TID] [-o FILE]\n"
	      "Export the reconstructed flows of bundle DIR (run 'jpbpf decode' first).\n"
	      "  -f, --format F     summary (hot methods by executed bytecodes);\n"
	      "                     flow, cct, calls, contexts, folded, perfetto:\n"
	      "                     not implemented yet\n"
	      "  -t, --thread TID   only thread TID (host tid)\n"
	      "  -n, --top N        methods listed by summary (default 20)\n"
	      "  -o, --output FILE  write to FILE (default: stdout)\n"
	      "      --json         JSON output\n",
	      f);
}

struct report_args {
	const char *dir, *format, *output;
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:t:n:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': a->format = optarg; break;
		case 'o': a->output = optarg; break;
		case 'J': a->json = 1; break;
		case 't':
		case 'n':
			if (cli_parse_u64(c == 't' ? "--thread" : "--top", optarg, &v) ||
			    v == 0 || v > 0xffffffffu) {
				cli_err("%s: expected a positive number, got '%s'",
					c == 't' ? "--thread" : "--top", optarg);
				return CLI_USAGE;
			}
			*(c == 't' ? &a->so.tid : &a->so.top) = (uint32_t)v;
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

static int report_summary(const struct report_args *a)
{
	struct jpb_bundle *b;
	char err[1024];
	json_t *s;
	int rc = jpb_bundle_open(&b, a->dir);
	if (rc) {
		cli_err("%s: %s", a->dir, jpb_errstr(rc));
		return CLI_FAIL;
	}
	rc = summary_build(b, &a->so, &s, err, sizeof(err));
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

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	memset(&a, 0, sizeof(a));
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (strcmp(a.format, "summary") == 0)
		return report_summary(&a);
	static const char *const later[] = { "flow", "cct", "calls", "contexts",
					     "folded", "perfetto", "raw", NULL };
	for (size_t i = 0; later[i]; i++)
		if (strcmp(a.format, later[i]) == 0)
			return cli_not_implemented(a.format);
	cli_err("report: unknown format '%s' (see 'jpbpf report --help')", a.format);
	return CLI_USAGE;
}
