// SPDX-License-Identifier: MIT
/* jpbpf: dispatch to a subcommand, or run the one-shot -p mode. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef JPBPF_VERSION
#define JPBPF_VERSION "0.0.0-dev"
#endif

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record, "record a running JVM into a bundle" },
	{ "decode", cmd_decode, "decode a bundle's PT into per-thread flows" },
	{ "report", cmd_report, "export flows, CCTs, call traces, flame graphs" },
	{ "info", cmd_info, "show what a bundle holds" },
	{ "eval", cmd_eval, "compare a decoded bundle with its ground truth" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: jpbpf -p PID [-d SECONDS] [-o DIR]\n"
		"       jpbpf COMMAND [OPTIONS] [ARGS]\n"
		"\n"
		"Trace a running JVM with Intel PT and reconstruct what each Java\n"
		"thread executed, at bytecode level.\n"
		"\n"
		"One-shot mode (record, then decode, then print a summary):\n"
		"  -p, --pid PID          the JVM to trace\n"
		"  -d, --duration SECONDS stop after SECONDS (default: until Ctrl-C)\n"
		"  -o, --output DIR       bundle directory (default: jpbpf-PID-TIME)\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(*subcommands); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name,
			subcommands[i].summary);
	fprintf(f, "\n"
		   "Run 'jpbpf COMMAND --help' for a command's options.\n"
		   "Exit status: 0 ok, 1 runtime failure, 2 usage error or\n"
		   "unsupported environment (e.g. no Intel PT).\n");
}

int main(int argc, char **argv)
{
	if (argc >= 2 && argv[1][0] != '-') {
		for (size_t i = 0; i < sizeof(subcommands) / sizeof(*subcommands); i++)
			if (strcmp(argv[1], subcommands[i].name) == 0)
				return subcommands[i].run(argc - 1, argv + 1);
		cli_err("unknown command '%s' (see 'jpbpf --help')", argv[1]);
		return CLI_USAGE;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("jpbpf %s\n", JPBPF_VERSION);
		return CLI_OK;
	}
	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_USAGE : CLI_OK;
	}
	return cmd_oneshot(argc, argv);
}
