// SPDX-License-Identifier: MIT
/* jpbpf decode: PT streams to per-thread bytecode-level events
 * (docs/DECODER.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "decode/decode.h"
#include "flow/flow.h"
#include "progress.h"
#include "records_decoded.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf decode DIR [-j N] [--attribution=switch|time]\n"
	      "                          [--chunk-size BYTES] [--no-flow] [--no-recover] [-q]\n"
	      "Decode the PT streams of bundle DIR into per-thread events (DIR/decoded/),\n"
	      "then reconstruct each thread's bytecode-level flow (DIR/flow/).\n"
	      "  -j, --jobs N     worker threads (default: all cores)\n"
	      "      --attribution=switch|time\n"
	      "                   cut each CPU's trace into threads at the PT\n"
	      "                   disable/enable of each switch (switch, default), or\n"
	      "                   at the BPF switch time only (time: a baseline)\n"
	      "      --chunk-size BYTES\n"
	      "                   PT per parallel chunk, cut at PSBs (default 4 MiB)\n"
	      "      --no-flow    decode only; do not reconstruct\n"
	      "      --no-recover reconstruct, but leave lost trace unfilled\n"
	      "  -q, --quiet      no progress bar (shown only when stderr is a terminal)\n"
	      "  -h, --help       this text\n", f);
}

static void print_summary(const struct jpd_summary *s)
{
	double mb = (double)s->pt_bytes / 1e6;
	printf("decoded %u streams (%llu chunks), %.2f MB of PT in %.3f s (%.1f MB/s); "
	       "decoding %.3f s (%.1f MB/s), merge and write %.3f s\n",
	       s->streams, (unsigned long long)s->chunks, mb, s->seconds, s->seconds > 0 ? mb / s->seconds : 0,
	       s->decode_seconds,
	       s->decode_seconds > 0 ? mb / s->decode_seconds : 0,
	       s->seconds - s->decode_seconds);
	printf("image: %llu compiled methods (%llu without pc map, %llu with "
	       "coarse pc maps, %llu unload mismatches), %llu files mapped, "
	       "%llu not found, locals loops in %u of %u zerolocals entries\n",
	       (unsigned long long)s->nmethods, (unsigned long long)s->missing_pcmaps,
	       (unsigned long long)s->coarse_pcmaps,
	       (unsigned long long)s->unload_mismatch, (unsigned long long)s->files,
	       (unsigned long long)s->files_missing, s->zl_loops, s->zl_entries);
	/* only when there is damage: the line is unchanged without */
	if (s->jvm_damaged)
		printf("jvm metadata: %llu damaged record%s lost\n",
		       (unsigned long long)s->jvm_damaged, s->jvm_damaged == 1 ? "" : "s");
	printf("threads: %u\n", s->threads);
	printf("events: %llu (interpreted %llu, compiled %llu, transitions %llu)\n",
	       (unsigned long long)s->events, (unsigned long long)s->interp,
	       (unsigned long long)s->compiled, (unsigned long long)s->transitions);
	printf("unattributed events: %llu\n", (unsigned long long)s->unattributed);
	printf("gaps: %llu", (unsigned long long)s->gaps);
	for (unsigned c = 1; c < 8; c++)
		if (s->gaps_by_cause[c])
			printf(" %s=%llu", jpb_decoded_gap_name(c),
			       (unsigned long long)s->gaps_by_cause[c]);
	printf("\ndecode errors: %llu, truncated AUX records: %llu\n",
	       (unsigned long long)s->errors,
	       (unsigned long long)s->aux_truncated);
}

int cli_decode_dir(const char *dir, const struct cli_decode_opts *co)
{
	int bar = !co->quiet && progress_wanted(stderr);
	struct progress *pd = progress_alloc(stderr, "decode", bar);
	struct jpd_options o = { .jobs = co->jobs,
				 .progress = progress_cb, .progress_arg = pd,
				 .attribution = co->attribution,
				 .chunk_bytes = co->chunk_bytes };
	struct jpb_bundle *b;
	int rc = jpb_bundle_open(&b, dir);
	if (rc) {
		progress_free(pd);
		cli_err("%s: %s", dir, jpb_errstr(rc));
		return CLI_FAIL;
	}
	struct jpd_summary sum;
	char err[1024] = "";
	rc = jpd_decode(b, &o, &sum, err, sizeof(err));
	progress_free(pd);
	if (rc) {
		cli_err("%s", err);
		jpb_bundle_free(b);
		return CLI_FAIL;
	}
	if (err[0]) /* damage decoded around */
		cli_err("warning: %s", err);
	print_summary(&sum);
	if (co->no_flow) {
		jpb_bundle_free(b);
		return CLI_OK;
	}
	cli_heap_huge(128u << 20);
	struct progress *pf = progress_alloc(stderr, "flow", bar);
	struct flow_opts fo = { .no_recover = (unsigned)co->no_recover,
				.jvm_damage_said = sum.jvm_damaged > 0,
				.progress = progress_cb, .progress_arg = pf };
	struct flow_summary fs;
	err[0] = '\0';
	rc = flow_reconstruct_bundle(b, &fo, &fs, err, sizeof(err));
	progress_free(pf);
	jpb_bundle_free(b);
	if (rc) {
		cli_err("reconstruction: %s", err);
		return CLI_FAIL;
	}
	if (err[0])
		cli_err("warning: %s", err);
	flow_summary_print(stdout, &fs);
	return CLI_OK;
}

int cmd_decode(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "no-flow", no_argument, NULL, 1 },
		{ "no-recover", no_argument, NULL, 2 },
		{ "attribution", required_argument, NULL, 3 },
		{ "chunk-size", required_argument, NULL, 4 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_decode_opts o = { 0 };
	unsigned long long jobs;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "j:qh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if (c == 'q') {
			o.quiet = 1;
			continue;
		}
		if (c == 1 || c == 2) {
			*(c == 1 ? &o.no_flow : &o.no_recover) = 1;
			continue;
		}
		if (c == 3) {
			if (!strcmp(optarg, "switch") || !strcmp(optarg, "time")) {
				o.attribution = optarg[0] == 't' ? JPD_ATTR_TIME
								 : JPD_ATTR_SWITCH;
				continue;
			}
			cli_err("--attribution: expected switch or time, got '%s'", optarg);
			return CLI_USAGE;
		}
		if (c == 4) {
			if (cli_parse_u64("--chunk-size", optarg, &jobs) || jobs < 4096) {
				cli_err("--chunk-size: expected at least 4096, got '%s'", optarg);
				return CLI_USAGE;
			}
			o.chunk_bytes = jobs;
			continue;
		}
		if (c == 'j') {
			if (cli_parse_u64("--jobs", optarg, &jobs) || !jobs || jobs > 1024) {
				cli_err("--jobs: expected 1..1024, got '%s'", optarg);
				return CLI_USAGE;
			}
			o.jobs = (unsigned)jobs;
			continue;
		}
		usage(stderr);
		return CLI_USAGE;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	return cli_decode_dir(argv[optind], &o);
}
