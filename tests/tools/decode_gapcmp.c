// SPDX-License-Identifier: MIT
/*
 * decode_gapcmp BUNDLE: the decoder's tracing gap table (docs/DECODER.md,
 * "Throughput") found from packets (user/decode/gapscan.c, the default)
 * against libipt's query decoder (the reference): every gap of every pt
 * stream must be the same in both (times, offset, IPs, kind), since switch
 * placement and the chunks' attribution states are computed from it.
 * Prints per stream "STREAM gaps=N runs=R fallbacks=F mismatches=M" (F:
 * runs the packet scan gave up and left to the query decoder) and the
 * first mismatches; exits 1 on any mismatch, 2 on unreadable input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/decode_int.h"

struct table {
	size_t n, runs, fallbacks;
	uint64_t *col[6]; /* dis, en, goff, dis_ip, en_ip, async */
};

static int scan(struct jpd_ctx *ctx, const char *name, int mode, struct table *t)
{
	struct jpd_stream st = { .name = name };
	unsigned v;
	char c;
	if (sscanf(name, "pt/cpu%u%c", &v, &c) == 1)
		st.cpu = v;
	ctx->scan = mode;
	int rc = jpd_stream_prepare(ctx, &st);
	if (rc) {
		fprintf(stderr, "decode_gapcmp: %s\n", st.err);
		jpd_stream_fini(&st);
		return rc;
	}
	t->n = st.ngaps;
	t->runs = st.nruns;
	t->fallbacks = st.scan_fallbacks;
	const uint64_t *src[5] = { st.dis, st.en, st.goff, st.dis_ip, st.en_ip };
	for (int k = 0; k < 6; k++) {
		t->col[k] = calloc(t->n + 1, sizeof(uint64_t));
		for (size_t i = 0; i < t->n && t->col[k]; i++)
			t->col[k][i] = k < 5 ? src[k][i] : st.async[i];
	}
	jpd_stream_fini(&st);
	return 0;
}

static size_t compare(const char *name, const struct table *q, const struct table *p)
{
	static const char *const what[6] = { "dis", "en", "goff", "dis_ip", "en_ip", "async" };
	size_t bad = q->n != p->n;
	if (bad)
		printf("%s: %zu gaps by the query decoder, %zu from packets\n", name,
		       q->n, p->n);
	size_t n = q->n < p->n ? q->n : p->n;
	for (size_t i = 0; i < n; i++) {
		int diff = 0;
		for (int k = 0; k < 6; k++)
			diff |= q->col[k][i] != p->col[k][i];
		if (!diff)
			continue;
		if (bad++ < 10) {
			printf("%s: gap %zu:", name, i);
			for (int k = 0; k < 6; k++)
				printf(" %s=%llx/%llx", what[k], (unsigned long long)q->col[k][i],
				       (unsigned long long)p->col[k][i]);
			printf("\n");
		}
	}
	return bad;
}

static void table_free(struct table *t)
{
	for (int k = 0; k < 6; k++)
		free(t->col[k]);
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	if (argc != 2 || jpb_bundle_open(&b, argv[1])) {
		fprintf(stderr, "usage: decode_gapcmp BUNDLE\n");
		return 2;
	}
	static struct jpd_ctx ctx;
	ctx.b = b;
	jpd_config_from_meta(&ctx.base_cfg, b);
	snprintf(ctx.tmpdir, sizeof(ctx.tmpdir), "/tmp/decode_gapcmp-%d", (int)getpid());
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", ctx.tmpdir);
	if (system(cmd))
		return 2;
	const char *const *names;
	size_t n;
	jpb_bundle_list_streams(b, &names, &n);
	int rc = 0, status = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if (strncmp(names[i], "pt/", 3))
			continue;
		struct table q = { 0 }, p = { 0 };
		rc = scan(&ctx, names[i], JPD_SCAN_QUERY, &q);
		if (!rc)
			rc = scan(&ctx, names[i], JPD_SCAN_AUTO, &p);
		if (!rc) {
			size_t bad = compare(names[i], &q, &p);
			printf("%s gaps=%zu runs=%zu fallbacks=%zu mismatches=%zu\n",
			       names[i], q.n, p.runs, p.fallbacks, bad);
			if (bad)
				status = 1;
		}
		table_free(&q);
		table_free(&p);
	}
	rmdir(ctx.tmpdir);
	jpb_bundle_free(b);
	return rc ? 2 : status;
}
