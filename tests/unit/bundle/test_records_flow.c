// SPDX-License-Identifier: MIT
/* Flow events: flow_events_packed (0x0604) round-trips every field
 * through jpb_flow_events_write and jpb_flow_events_each, old
 * flow_events (0x0602) records still read, and damaged packed records
 * give jpb_err_corrupt without reading past their payload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bundle.h"
#include "codec.h"
#include "records.h"
#include "records_flow.h"

static char dir[256];

struct got {
	struct jpb_flow_event *v;
	size_t n, cap;
	size_t stop_at; /* return 5 on this event (1-based), 0 never */
};

static int collect(void *arg, const struct jpb_flow_event *e)
{
	struct got *g = arg;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->v = realloc(g->v, g->cap * sizeof(*g->v));
		assert_non_null(g->v);
	}
	g->v[g->n++] = *e;
	return g->n == g->stop_at ? 5 : 0;
}

static void assert_same(const struct jpb_flow_event *a,
			const struct jpb_flow_event *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].method, b[i].method);
		assert_int_equal(a[i].bci, b[i].bci);
		assert_int_equal(a[i].opcode, b[i].opcode);
		assert_int_equal(a[i].status, b[i].status);
		assert_int_equal(a[i].ncand, b[i].ncand);
		assert_int_equal(a[i].reserved, b[i].reserved);
		assert_true(a[i].tsc == b[i].tsc);
	}
}

/* The events of stream NAME, checking each record's tid and seq. */
static struct got read_stream(struct jpb_bundle *b, const char *name,
			      uint32_t tid, uint16_t type)
{
	struct got g = { 0 };
	struct jpb_reader *r;
	struct jpb_record rec;
	assert_int_equal(jpb_reader_open(b, name, &r), 0);
	int rc;
	while ((rc = jpb_reader_next(r, &rec)) == 0) {
		assert_int_equal(rec.type, type);
		assert_true(jpb_rec_is_flow_events(rec.type));
		struct jpb_rec_flow_events_packed p;
		struct jpb_rec_flow_events f;
		uint64_t seq;
		if (type == JPB_REC_FLOW_EVENTS_PACKED) {
			assert_int_equal(jpb_rec_decode(jpb_rectype_find(type), rec.payload,
							rec.size, &p), 0);
			assert_int_equal(p.tid, tid);
			seq = p.seq;
		} else {
			assert_int_equal(jpb_rec_decode(jpb_rectype_find(type), rec.payload,
							rec.size, &f), 0);
			assert_int_equal(f.tid, tid);
			seq = f.seq;
		}
		assert_true(seq == g.n);
		assert_int_equal(jpb_flow_events_each(&rec, collect, &g), 0);
	}
	assert_int_equal(rc, jpb_err_eos);
	jpb_reader_free(r);
	return g;
}

static void write_batches(struct jpb_bundle *b, const char *name, uint32_t tid,
			  const struct jpb_flow_event *v, size_t n, size_t batch)
{
	struct jpb_writer *w;
	struct jpb_buf sc = { 0 };
	assert_int_equal(jpb_writer_open(b, name, &w), 0);
	for (size_t at = 0; at < n; at += batch) {
		size_t k = n - at < batch ? n - at : batch;
		assert_int_equal(jpb_flow_events_write(w, tid, at, v + at, k, &sc), 0);
	}
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_buf_fini(&sc);
}

static const struct jpb_flow_event edges[] = {
	{ 0, -1, 0, JPB_FLOW_UNKNOWN, 0, 0, 0 },
	{ 0, -1, 0, JPB_FLOW_UNKNOWN, 0, 0, 0 },
	{ 1, 0, 0x2a, JPB_FLOW_CERTAIN, 1, 0, 100 },
	{ 1, 65535, 0xb6, JPB_FLOW_CHOSEN, 65535, 0, 100 },
	{ 1, -1, 0xff, JPB_FLOW_DECODED, 1, 0, 50 },       /* tsc backwards */
	{ UINT32_MAX, INT32_MAX, 1, JPB_FLOW_RECOVERED, 0, 7, UINT64_MAX },
	{ 0, INT32_MIN, 2, 0, 1, UINT32_MAX, 0 },           /* wraps both ways */
	{ 3, 65534, 3, 6, 2, 1, 1ull << 63 },
	{ 3, 65536, 4, 7, 1, 0, (1ull << 63) - 1 },         /* status escapes */
	{ 3, 2, 5, 255, 65535, 0, 0x123456789abcdefull },
	{ 2, 0, 0, 200, 1, 0, 1 },
};

static void test_edges_roundtrip(void **state)
{
	(void)state;
	size_t n = sizeof(edges) / sizeof(edges[0]);
	struct jpb_bundle *b;
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	write_batches(b, "flow/tid11", 11, edges, n, 4096);
	write_batches(b, "flow/tid12", 12, edges, n, 3);
	for (uint32_t tid = 11; tid <= 12; tid++) {
		char name[32];
		snprintf(name, sizeof(name), "flow/tid%u", tid);
		struct got g = read_stream(b, name, tid, JPB_REC_FLOW_EVENTS_PACKED);
		assert_int_equal(g.n, n);
		assert_same(g.v, edges, n);
		free(g.v);
	}
	jpb_bundle_free(b);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random events, some runs with small steps as a flow has, some anything. */
static void test_random_roundtrip(void **state)
{
	(void)state;
	enum { N = 20000 };
	struct jpb_flow_event *v = calloc(N, sizeof(*v));
	assert_non_null(v);
	uint64_t s = 88172645463325252ull;
	for (size_t i = 0; i < N; i++) {
		uint64_t r = rnd(&s), q = rnd(&s);
		struct jpb_flow_event p = i ? v[i - 1] : (struct jpb_flow_event){ 0 };
		if (r % 4) {
			v[i] = (struct jpb_flow_event){ r % 7 ? p.method : (uint32_t)(q % 500),
							p.bci + (int32_t)(q % 9) - 3,
							(uint8_t)q, (uint8_t)(1 + r % 5),
							(uint16_t)(r % 3 ? 1 : q % 70000),
							0, p.tsc + (r % 5 ? q % 300 : 0) };
		} else {
			v[i] = (struct jpb_flow_event){ (uint32_t)q, (int32_t)(q >> 32),
							(uint8_t)r, (uint8_t)(r >> 8),
							(uint16_t)(r >> 16),
							r % 3 ? 0 : (uint32_t)(r >> 32),
							rnd(&s) };
		}
	}
	struct jpb_bundle *b;
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	write_batches(b, "flow/tid13", 13, v, N, 4096);
	struct got g = read_stream(b, "flow/tid13", 13, JPB_REC_FLOW_EVENTS_PACKED);
	assert_int_equal(g.n, N);
	assert_same(g.v, v, N);
	free(g.v);
	free(v);
	jpb_bundle_free(b);
}

/* Bundles written before 0x0604 hold 24-byte events in 0x0602. */
static void test_old_format_reads(void **state)
{
	(void)state;
	size_t n = sizeof(edges) / sizeof(edges[0]);
	uint8_t packed[sizeof(edges) / sizeof(edges[0]) * JPB_FLOW_EVENT_SIZE];
	for (size_t i = 0; i < n; i++)
		jpb_flow_event_put(packed + i * JPB_FLOW_EVENT_SIZE, &edges[i]);
	struct jpb_bundle *b;
	struct jpb_writer *w;
	struct jpb_buf sc = { 0 };
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	assert_int_equal(jpb_writer_open(b, "flow/tid14", &w), 0);
	struct jpb_rec_flow_events r = { 14, 0, 0, { packed, sizeof(packed) } };
	assert_int_equal(jpb_writer_put_rec(w, jpb_rectype_find(JPB_REC_FLOW_EVENTS),
					    0, &r, &sc), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	struct got g = read_stream(b, "flow/tid14", 14, JPB_REC_FLOW_EVENTS);
	assert_int_equal(g.n, n);
	assert_same(g.v, edges, n);
	free(g.v);
	jpb_buf_fini(&sc);
	jpb_bundle_free(b);
}

/* A flow's usual event (same method and ncand 1, a small bci step, a
 * small tsc step) takes 4 bytes; one at the same tsc 3. */
static void test_usual_event_size(void **state)
{
	(void)state;
	struct jpb_flow_event v[64];
	for (size_t i = 0; i < 64; i++)
		v[i] = (struct jpb_flow_event){ 5, (int32_t)i * 2, 0x1b, 2, 1, 0,
						1000 + i / 2 * 40 };
	struct jpb_buf pk = { 0 };
	assert_int_equal(jpb_flow_events_pack(&pk, v + 1, 63), 0);
	/* the first: method 5 (1) and tsc 1000 from 0 (2) */
	assert_int_equal(pk.len, (1 + 1 + 1 + 1 + 2) + 31 * 4 + 31 * 3);
	jpb_buf_fini(&pk);
}

/* A call or a return at the same tsc: flags with the method bit, opcode,
 * bci step, then the method index as LEB128 (1 or 2 bytes inline; 3
 * bytes, 0x4000, through the general packer), as the format says. */
static void test_method_change_bytes(void **state)
{
	(void)state;
	struct jpb_flow_event v[] = {
		{ 5, 10, 0xb6, 2, 1, 0, 1000 },     /* first: all fields */
		{ 200, 0, 0x2a, 2, 1, 0, 1000 },    /* call, 2-byte index */
		{ 7, 3, 0x57, 3, 1, 0, 1000 },      /* return, 1 byte */
		{ 0x4000, 3, 0x2a, 2, 1, 0, 1000 }, /* 3 bytes */
		{ 0x4000, 4, 0x04, 2, 1, 0, 1000 }, /* same method: 3 bytes */
	};
	static const uint8_t want[] = {
		2 | 0x08 | 0x20, 0xb6, 20, 5, 0xd0, 0x0f, /* tsc 1000 from 0 */
		2 | 0x08, 0x2a, 19, 0xc8, 0x01,
		3 | 0x08, 0x57, 6, 7,
		2 | 0x08, 0x2a, 0, 0x80, 0x80, 0x01,
		2, 0x04, 2,
	};
	struct jpb_buf pk = { 0 };
	assert_int_equal(jpb_flow_events_pack(&pk, v, 5), 0);
	assert_int_equal(pk.len, sizeof(want));
	assert_memory_equal(pk.data, want, sizeof(want));
	jpb_buf_fini(&pk);
}

/* A payload of a packed record of COUNT events over BYTES, in a block of
 * exactly its size so that ASan sees any read past it. */
static struct jpb_record mkrec(const uint8_t *bytes, size_t len, uint32_t count)
{
	struct jpb_buf buf = { 0 };
	struct jpb_rec_flow_events_packed p = { 1, 0, 0, count,
						{ bytes, (uint32_t)len } };
	assert_int_equal(jpb_rec_encode(jpb_rectype_find(JPB_REC_FLOW_EVENTS_PACKED),
					&p, &buf), 0);
	uint8_t *copy = malloc(buf.len ? buf.len : 1);
	assert_non_null(copy);
	memcpy(copy, buf.data, buf.len);
	struct jpb_record rec = { JPB_REC_FLOW_EVENTS_PACKED, 0, 4096, copy,
				  (uint32_t)buf.len };
	jpb_buf_fini(&buf);
	return rec;
}

static int each_damaged(const uint8_t *bytes, size_t len, uint32_t count,
			size_t *seen)
{
	struct jpb_record rec = mkrec(bytes, len, count);
	struct got g = { 0 };
	char msg[200] = "";
	int rc = jpb_flow_events_each_msg(&rec, collect, &g, msg, sizeof(msg));
	if (rc == jpb_err_corrupt)
		assert_non_null(strstr(msg, "flow_events_packed at offset 4096: event "));
	*seen = g.n;
	free(g.v);
	free((void *)rec.payload);
	return rc;
}

static void test_damaged_packed(void **state)
{
	(void)state;
	size_t n = sizeof(edges) / sizeof(edges[0]), seen;
	struct jpb_buf pk = { 0 };
	assert_int_equal(jpb_flow_events_pack(&pk, edges, n), 0);
	assert_int_equal(each_damaged(pk.data, pk.len, (uint32_t)n, &seen), 0);
	assert_int_equal(seen, n);
	/* every truncation: an event runs past the end, or too few events */
	for (size_t len = 0; len < pk.len; len++) {
		assert_int_equal(each_damaged(pk.data, len, (uint32_t)n, &seen),
				 jpb_err_corrupt);
		assert_true(seen < n);
	}
	/* a count that disagrees with the bytes, either way */
	assert_int_equal(each_damaged(pk.data, pk.len, (uint32_t)n + 1, &seen),
			 jpb_err_corrupt);
	assert_int_equal(seen, n);
	assert_int_equal(each_damaged(pk.data, pk.len, (uint32_t)n - 1, &seen),
			 jpb_err_corrupt);
	assert_int_equal(each_damaged(pk.data, pk.len, UINT32_MAX, &seen),
			 jpb_err_corrupt);
	/* varints that never end or exceed their field; an unknown flag */
	static const uint8_t bad[][14] = {
		{ 2, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 },  /* bci */
		{ 2, 0x10, 0xff, 0xff, 0xff, 0xff, 0x1f },        /* bci > 32 bits */
		{ 2 | 0x10, 0x10, 0, 0xff, 0xff, 0x7f },          /* ncand > 16 */
		{ 2 | 0x20, 0x10, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0xff, 0x7f },                             /* tsc > 64 */
		{ 2 | 0x08, 0x10, 0, 0x80 },                      /* method */
		{ 2 | 0x40, 0x10, 0, 0x80, 0x80 },                /* reserved */
		{ 2 | 0x80, 0x10, 0 },                            /* flag 7 */
		{ 7 },                                            /* escape */
	};
	static const size_t bad_len[] = { 8, 7, 6, 13, 4, 5, 3, 1 };
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		assert_int_equal(each_damaged(bad[i], bad_len[i], 1, &seen),
				 jpb_err_corrupt);
		assert_int_equal(seen, 0);
	}
	/* the fields themselves cut short */
	struct jpb_record rec = mkrec(pk.data, pk.len, (uint32_t)n);
	struct got g = { 0 };
	for (uint32_t size = 0; size < 20; size++) {
		struct jpb_record cut = rec;
		cut.size = size;
		assert_int_equal(jpb_flow_events_each(&cut, collect, &g), jpb_err_corrupt);
	}
	assert_int_equal(g.n, 0);
	/* the callback's result stops the walk and is returned */
	g.stop_at = 3;
	assert_int_equal(jpb_flow_events_each(&rec, collect, &g), 5);
	assert_int_equal(g.n, 3);
	/* another type holds no events */
	rec.type = JPB_REC_FLOW_THREAD;
	assert_int_equal(jpb_flow_events_each(&rec, collect, &g), 0);
	assert_int_equal(g.n, 3);
	free(g.v);
	free((void *)rec.payload);
	jpb_buf_fini(&pk);
}

static int setup(void **state)
{
	(void)state;
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, sizeof(dir), "%s/recflow.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	struct jpb_bundle *b;
	if (jpb_bundle_create(&b, dir))
		return -1;
	jpb_bundle_free(b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges_roundtrip),
		cmocka_unit_test(test_random_roundtrip),
		cmocka_unit_test(test_old_format_reads),
		cmocka_unit_test(test_usual_event_size),
		cmocka_unit_test(test_method_change_bytes),
		cmocka_unit_test(test_damaged_packed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
