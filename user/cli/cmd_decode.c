// SPDX-License-Identifier: MIT
/* jpbpf decode: parses its documented options; the engine behind it is a
 * later issue's work, so it says so instead of printing anything fake. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf decode DIR [-j N]\n"
	      "Decode the PT streams of bundle DIR into per-thread flows (DIR/decoded/).\n"
	      "  -j, --jobs N   worker threads (default: all cores)\n", f);
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "j:h", opts, NULL)) != -1) {
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
	return cli_not_implemented("decode");
}
