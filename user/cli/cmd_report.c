// SPDX-License-Identifier: MIT
/* jpbpf report: parses its documented options; the engine behind it is a
 * later issue's work, so it says so instead of printing anything fake. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf report DIR --format F [--thread TID|NAME] [-o FILE]\n"
	      "Export the reconstructed flows of bundle DIR.\n"
	      "  -f, --format F     flow, cct, calls, contexts, folded, perfetto, summary, raw\n"
	      "  -t, --thread T     only thread T (tid or Java name)\n"
	      "  -o, --output FILE  write to FILE (default: stdout)\n"
	      "      --full         every bytecode, not collapsed ranges (flow)\n"
	      "      --json         JSON output where the format has both\n", f);
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "thread", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "full", no_argument, NULL, 1 },
		{ "json", no_argument, NULL, 2 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:t:o:h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if (c == '?') {
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	return cli_not_implemented("report");
}
