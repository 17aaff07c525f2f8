// SPDX-License-Identifier: MIT
/* jpbpf eval DIR [--json]: reconstructed flows against the ground truth
 * (user/eval/eval.h; definitions in docs/RECONSTRUCTION.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "eval/eval.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf eval DIR [--json]\n"
	      "Compare the reconstructed flows of bundle DIR (jpbpf decode) with its\n"
	      "ground truth: PMD, PR, RA, PDC, PD, DA, hot10, attribution.\n"
	      "      --json   one JSON object with overall and per-thread figures\n", f);
}

static void print_row(const char *who, const struct eval_counts *c)
{
	printf("%-10s %9llu %6.4f %6.4f %6.4f %6.4f %6.4f %6.4f %5d %6.4f\n", who,
	       (unsigned long long)c->truth, c->PMD, c->PR, c->RA, c->PDC, c->PD,
	       c->DA, c->hot10, c->attribution);
}

static void print_text(const struct eval_result *r)
{
	printf("%-10s %9s %6s %6s %6s %6s %6s %6s %5s %6s\n", "thread", "truth",
	       "PMD", "PR", "RA", "PDC", "PD", "DA", "hot10", "attrib");
	for (size_t i = 0; i < r->nthreads; i++) {
		char tid[16];
		snprintf(tid, sizeof(tid), "%u", r->threads[i].tid);
		print_row(tid, &r->threads[i]);
	}
	print_row("overall", &r->overall);
	printf("\nDefinitions:\n%s", eval_definitions());
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, json = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_OK;
		}
		if (c == 1) {
			json = 1;
			continue;
		}
		usage(stderr);
		return CLI_USAGE;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	struct jpb_bundle *b;
	int err = jpb_bundle_open(&b, argv[optind]);
	if (err) {
		cli_err("%s: %s", argv[optind], jpb_errstr(err));
		return CLI_FAIL;
	}
	struct eval_result *r;
	char msg[512];
	err = eval_bundle(b, &r, msg, sizeof(msg));
	jpb_bundle_free(b);
	if (err) {
		cli_err("%s", msg);
		return CLI_FAIL;
	}
	if (json) {
		json_t *o = eval_json(r);
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
		if (s)
			puts(s);
		free(s);
		json_decref(o);
	} else {
		print_text(r);
	}
	eval_result_free(r);
	return CLI_OK;
}
