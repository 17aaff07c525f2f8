// SPDX-License-Identifier: MIT
/* jpbpf eval: parses its documented options; the engine behind it is a
 * later issue's work, so it says so instead of printing anything fake. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf eval DIR [--json]\n"
	      "Compare the decoded flows of bundle DIR with its ground truth\n"
	      "(PMD, PR, RA, PDC, PD, DA, hot10, attribution; docs/EVAL.md).\n"
	      "      --json   one JSON object with overall and per-thread figures\n", f);
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
	return cli_not_implemented("eval");
}
