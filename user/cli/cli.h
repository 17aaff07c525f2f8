/* SPDX-License-Identifier: MIT */
/* The jpbpf command line: subcommands and their shared conventions. */
#ifndef JPBPF_CLI_H
#define JPBPF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes, the same for every subcommand (docs/jpbpf.1). */
enum cli_exit {
	CLI_OK = 0,
	CLI_FAIL = 1,        /* runtime failure: bad input, I/O, target gone */
	CLI_USAGE = 2,       /* usage error or unsupported environment */
};

/* Each subcommand: argv[0] is its name; returns an exit code. */
int cmd_record(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_eval(int argc, char **argv);

/* The one-shot `jpbpf -p PID`: record, decode, summary. */
int cmd_oneshot(int argc, char **argv);

/* Decode bundle DIR, then reconstruct its flows, printing both
 * summaries; shared by `decode` and the one-shot mode.  Returns an exit
 * code. */
struct cli_decode_opts {
	unsigned jobs; /* 0: all cores */
	int no_flow;
	int no_recover;
	int attribution; /* enum jpd_attribution; 0: at switches (exact) */
	int quiet;       /* no progress bar even on a terminal */
	uint64_t chunk_bytes; /* 0: the decoder's default */
};
int cli_decode_dir(const char *dir, const struct cli_decode_opts *o);
/* The flow phase's heap on huge pages where possible (heap.c). */
void cli_heap_huge(size_t reserve);

/* Write the usual exports of decoded bundle DIR into DIR/exports/
 * (summary, cct, calls, flow, folded, perfetto; cmd_report.c), for the
 * one-shot mode and the demo.  Returns an exit code. */
int cli_report_set(const char *dir, int quiet);

/* `record`, shared with the one-shot mode; fills OUTDIR with the bundle
 * it wrote (cmd_record.c). */
int cli_record_main(int argc, char **argv, int oneshot, char *outdir,
		    size_t size);

/* "jpbpf: <fmt>\n" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For subcommands that a later release implements: says so, exits 2. */
int cli_not_implemented(const char *what);

/* Parse a positive duration/size; returns 0 or -1 with a message. */
int cli_parse_u64(const char *opt, const char *s, unsigned long long *out);

#endif /* JPBPF_CLI_H */
