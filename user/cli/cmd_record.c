// SPDX-License-Identifier: MIT
/* jpbpf record: option parsing; the recorder is the BPF and PT issues'. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf record -p PID [-d SECONDS] [-o DIR] [--no-pt]\n"
	      "Record a running JVM into bundle DIR.\n"
	      "  -p, --pid PID          the JVM to trace\n"
	      "  -d, --duration SECONDS stop after SECONDS (default: until Ctrl-C)\n"
	      "  -o, --output DIR       bundle directory\n"
	      "      --no-pt            record everything but Intel PT\n",
	      f);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-pt", no_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long pid = 0, secs = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:d:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_u64("--pid", optarg, &pid))
				return CLI_USAGE;
			break;
		case 'd':
			if (cli_parse_u64("--duration", optarg, &secs))
				return CLI_USAGE;
			break;
		case 'o':
		case 1:
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (!pid || optind != argc) {
		usage(stderr);
		return CLI_USAGE;
	}
	return cli_not_implemented("record");
}
