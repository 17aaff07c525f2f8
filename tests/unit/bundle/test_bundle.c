// SPDX-License-Identifier: MIT
/* The bundle library: framing, every record type, damage handling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "bundle.h"
#include "records.h"

struct fixture {
	char dir[256];
	struct jpb_bundle *b;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TESTTMP");
	snprintf(f->dir, sizeof(f->dir), "%s/bundle.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	if (jpb_bundle_create(&f->b, f->dir) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[300];
	jpb_bundle_free(f->b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* Fill every field of a record struct with values derived from SEED, so
 * a field swapped or dropped by the codec changes what reads back. */
static void fill_record(const struct jpb_rectype *t, void *rec, unsigned seed,
			char strings[][32])
{
	memset(rec, 0, t->struct_size);
	for (size_t i = 0; i < t->nfields; i++) {
		const struct jpb_field *f = &t->fields[i];
		uint8_t *p = (uint8_t *)rec + f->offset;
		uint64_t v = 0x0102030405060708ull * (seed + i + 1);
		switch (f->kind) {
		case JPB_F_U8: *(uint8_t *)p = (uint8_t)v; break;
		case JPB_F_U16: *(uint16_t *)p = (uint16_t)v; break;
		case JPB_F_U32: *(uint32_t *)p = (uint32_t)v; break;
		case JPB_F_I32: *(int32_t *)p = -(int32_t)(v & 0xffff); break;
		case JPB_F_U64: *(uint64_t *)p = v; break;
		case JPB_F_I64: *(int64_t *)p = -(int64_t)(v >> 4); break;
		case JPB_F_STR:
		case JPB_F_BYTES:
			snprintf(strings[i], 32, "%s-%u-%zu", f->name, seed, i);
			((struct jpb_bytes *)p)->ptr = (const uint8_t *)strings[i];
			((struct jpb_bytes *)p)->len = (uint32_t)strlen(strings[i]);
			break;
		}
	}
}

static void assert_same_record(const struct jpb_rectype *t, const void *a,
			       const void *b)
{
	for (size_t i = 0; i < t->nfields; i++) {
		const struct jpb_field *f = &t->fields[i];
		const uint8_t *pa = (const uint8_t *)a + f->offset;
		const uint8_t *pb = (const uint8_t *)b + f->offset;
		if (f->kind == JPB_F_STR || f->kind == JPB_F_BYTES) {
			const struct jpb_bytes *x = (const void *)pa;
			const struct jpb_bytes *y = (const void *)pb;
			assert_int_equal(x->len, y->len);
			assert_memory_equal(x->ptr, y->ptr, x->len);
			continue;
		}
		size_t n = f->kind == JPB_F_U8 ? 1 : f->kind == JPB_F_U16 ? 2
			 : (f->kind == JPB_F_U32 || f->kind == JPB_F_I32) ? 4 : 8;
		assert_memory_equal(pa, pb, n);
	}
}

static void write_all_types(struct jpb_bundle *b, const char *stream,
			    unsigned copies)
{
	struct jpb_writer *w;
	struct jpb_buf scratch = { 0 };
	char strings[64][32];
	assert_int_equal(jpb_writer_open(b, stream, &w), 0);
	for (unsigned c = 0; c < copies; c++)
		for (size_t i = 0; i < jpb_rectype_count(); i++) {
			const struct jpb_rectype *t = jpb_rectype_at(i);
			uint8_t rec[512];
			assert_true(t->struct_size <= sizeof(rec));
			assert_true(t->nfields <= 64);
			fill_record(t, rec, c * 100 + (unsigned)i, strings);
			assert_int_equal(jpb_writer_put_rec(w, t, 1000 + c * 10 + i,
							    rec, &scratch), 0);
		}
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_buf_fini(&scratch);
}

static void test_round_trip_every_type(void **state)
{
	struct fixture *f = *state;
	const unsigned copies = 3;
	size_t n = jpb_rectype_count();
	assert_true(n >= 5);
	write_all_types(f->b, "all", copies);

	struct jpb_reader *r;
	struct jpb_record rec;
	char strings[64][32];
	assert_int_equal(jpb_reader_open(f->b, "all", &r), 0);
	for (unsigned c = 0; c < copies; c++)
		for (size_t i = 0; i < n; i++) {
			const struct jpb_rectype *t = jpb_rectype_at(i);
			uint8_t want[512], got[512];
			assert_int_equal(jpb_reader_next(r, &rec), 0);
			assert_int_equal(rec.type, t->type);
			assert_int_equal(rec.time_ns, 1000 + c * 10 + i);
			fill_record(t, want, c * 100 + (unsigned)i, strings);
			assert_int_equal(jpb_rec_decode(t, rec.payload, rec.size, got), 0);
			assert_same_record(t, want, got);
		}
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	assert_int_equal(jpb_reader_bad_offset(r), -1);
	jpb_reader_free(r);
}

static void test_registry_is_consistent(void **state)
{
	(void)state;
	uint16_t prev = 0;
	for (size_t i = 0; i < jpb_rectype_count(); i++) {
		const struct jpb_rectype *t = jpb_rectype_at(i);
		assert_true(t->type > prev); /* sorted, unique */
		prev = t->type;
		assert_ptr_equal(jpb_rectype_find(t->type), t);
		assert_ptr_equal(jpb_rectype_by_name(t->name), t);
		for (size_t k = 0; k < t->nfields; k++)
			assert_true(t->fields[k].offset < t->struct_size);
	}
	assert_null(jpb_rectype_find(0xfff0));
	assert_null(jpb_rectype_at(jpb_rectype_count()));
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	*len = (size_t)ftell(fp);
	rewind(fp);
	uint8_t *p = malloc(*len);
	assert_int_equal(fread(p, 1, *len, fp), *len);
	fclose(fp);
	return p;
}

static void spit(const char *path, const uint8_t *p, size_t len)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, len, fp), len);
	fclose(fp);
}

/* Reads PATH to the end; returns the records read and the final status. */
static size_t read_through(const char *path, int *status, int64_t *bad)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t n = 0;
	*status = jpb_reader_open_path(path, &r);
	if (*status)
		return 0;
	while ((*status = jpb_reader_next(r, &rec)) == 0)
		n++;
	*bad = jpb_reader_bad_offset(r);
	if (*status != jpb_err_eos)
		assert_non_null(strstr(jpb_reader_errmsg(r), "offset"));
	jpb_reader_free(r);
	return n;
}

/* Records read when each damaged one is stepped over where it can be;
 * *STATUS: the error that ended the reading, *DAMAGED: records stepped
 * over. */
static size_t read_skipping(const char *path, int *status, uint64_t *damaged)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t n = 0;
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	jpb_reader_skip_damaged(r);
	while ((*status = jpb_reader_next(r, &rec)) == 0)
		n++;
	*damaged = jpb_reader_damaged(r);
	if (*damaged)
		assert_non_null(strstr(jpb_reader_errmsg(r), "record at offset"));
	jpb_reader_free(r);
	return n;
}

/* Where each record starts and where its payload ends (padding excluded),
 * to know how many records a prefix of the file holds intact. */
static size_t record_bounds(const char *path, uint64_t *starts, uint64_t *ends,
			    size_t max)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t n = 0;
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	while (n < max && jpb_reader_next(r, &rec) == 0) {
		starts[n] = rec.offset;
		if (ends)
			ends[n] = rec.offset + JPB_REC_HDR_SIZE + rec.size;
		n++;
	}
	jpb_reader_free(r);
	return n;
}

static void test_truncated_at_every_offset(void **state)
{
	struct fixture *f = *state;
	char path[512], cut[512];
	uint64_t starts[256], ends[256];
	size_t len;
	write_all_types(f->b, "sample", 1);
	snprintf(path, sizeof(path), "%s/sample.jpb", f->dir);
	snprintf(cut, sizeof(cut), "%s/cut.jpb", f->dir);
	size_t nrec = record_bounds(path, starts, ends, 256);
	uint8_t *data = slurp(path, &len);
	for (size_t at = 0; at < len; at++) {
		spit(cut, data, at);
		int status;
		int64_t bad = -1;
		size_t got = read_through(cut, &status, &bad);
		if (at < JPB_STREAM_HDR_SIZE) {
			assert_true(status == jpb_err_bad_magic || status == jpb_err_truncated);
			continue;
		}
		/* Records whose payload lies wholly inside the prefix; a cut
		 * in a record's padding loses nothing. */
		size_t complete = 0;
		while (complete < nrec && ends[complete] <= at)
			complete++;
		assert_int_equal(got, complete);
		if (complete < nrec && at > starts[complete]) {
			assert_int_equal(status, jpb_err_truncated);
			assert_int_equal(bad, (int64_t)starts[complete]);
		} else {
			assert_int_equal(status, jpb_err_eos);
		}
	}
	free(data);
}

static void test_corrupt_length_and_payload(void **state)
{
	struct fixture *f = *state;
	char path[512], bad_path[512];
	size_t len;
	uint64_t starts[256];
	write_all_types(f->b, "sample", 2);
	snprintf(path, sizeof(path), "%s/sample.jpb", f->dir);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.jpb", f->dir);
	uint64_t ends[256];
	size_t nrec = record_bounds(path, starts, ends, 256);
	uint8_t *data = slurp(path, &len);
	static const uint32_t lengths[] = { 0, 1, 7, 0x7fffffff, 0xffffffff,
					    JPB_MAX_PAYLOAD, JPB_MAX_PAYLOAD + 1 };
	for (size_t k = 0; k < nrec; k += 3) {
		for (size_t j = 0; j < sizeof(lengths) / sizeof(*lengths); j++) {
			uint8_t *copy = malloc(len);
			memcpy(copy, data, len);
			uint8_t *h = copy + starts[k];
			h[4] = (uint8_t)lengths[j];
			h[5] = (uint8_t)(lengths[j] >> 8);
			h[6] = (uint8_t)(lengths[j] >> 16);
			h[7] = (uint8_t)(lengths[j] >> 24);
			spit(bad_path, copy, len);
			free(copy);
			int status;
			int64_t bad = -1;
			size_t got = read_through(bad_path, &status, &bad);
			/* Either the length was unchanged (eos), or the damaged
			 * record and nothing after it is refused. */
			if (status == jpb_err_eos) {
				assert_int_equal(got, nrec);
				continue;
			}
			assert_true(status == jpb_err_corrupt || status == jpb_err_truncated);
			assert_int_equal(got, k);
			assert_int_equal(bad, (int64_t)starts[k]);
			/* stepping over, the damaged length loses its record
			 * alone: the reading resumes at the next record whose
			 * checksum holds */
			uint64_t damaged;
			assert_int_equal(read_skipping(bad_path, &status, &damaged), nrec - 1);
			assert_int_equal(status, jpb_err_eos);
			assert_int_equal(damaged, 1);
		}
		/* One flipped payload bit fails the checksum (sim_itruth,
		 * a raw array, is empty as written here: no payload). */
		if (ends[k] == starts[k] + JPB_REC_HDR_SIZE)
			continue;
		uint8_t *copy = malloc(len);
		memcpy(copy, data, len);
		copy[starts[k] + JPB_REC_HDR_SIZE] ^= 0x10;
		spit(bad_path, copy, len);
		free(copy);
		int status;
		int64_t bad = -1;
		assert_int_equal(read_through(bad_path, &status, &bad), k);
		assert_int_equal(status, jpb_err_corrupt);
		uint64_t damaged;
		assert_int_equal(read_skipping(bad_path, &status, &damaged), nrec - 1);
		assert_int_equal(status, jpb_err_eos);
		assert_int_equal(damaged, 1);
	}
	free(data);
}

static void test_decode_refuses_short_payload(void **state)
{
	(void)state;
	for (size_t i = 0; i < jpb_rectype_count(); i++) {
		const struct jpb_rectype *t = jpb_rectype_at(i);
		uint8_t rec[512], got[512];
		char strings[64][32];
		struct jpb_buf buf = { 0 };
		fill_record(t, rec, 7, strings);
		assert_int_equal(jpb_rec_encode(t, rec, &buf), 0);
		for (size_t cut = 0; cut < buf.len; cut++) {
			/* Heap copy of exactly CUT bytes so ASan sees over-reads. */
			uint8_t *p = malloc(cut ? cut : 1);
			memcpy(p, buf.data, cut);
			assert_int_equal(jpb_rec_decode(t, p, (uint32_t)cut, got),
					 jpb_err_corrupt);
			free(p);
		}
		jpb_buf_fini(&buf);
	}
}

static void test_bad_magic_and_version(void **state)
{
	struct fixture *f = *state;
	char path[512];
	struct jpb_reader *r;
	snprintf(path, sizeof(path), "%s/junk.jpb", f->dir);
	spit(path, (const uint8_t *)"this is not a stream file", 25);
	assert_int_equal(jpb_reader_open_path(path, &r), jpb_err_bad_magic);
	uint8_t hdr[16] = { 'J', 'P', 'B', 'P', 'F', 'S', 'T', 'M', 9, 0, 0, 0, 16, 0, 0, 0 };
	spit(path, hdr, sizeof(hdr));
	assert_int_equal(jpb_reader_open_path(path, &r), jpb_err_bad_version);
	assert_int_equal(jpb_reader_open_path("/nonexistent/x.jpb", &r),
			 jpb_err_not_found);
}

static void test_unknown_types_are_skippable(void **state)
{
	struct fixture *f = *state;
	struct jpb_writer *w;
	struct jpb_reader *r;
	struct jpb_record rec;
	assert_int_equal(jpb_writer_open(f->b, "future", &w), 0);
	assert_int_equal(jpb_writer_put(w, 0x7f01, 5, "abc", 3), 0);
	assert_int_equal(jpb_writer_put(w, JPB_REC_NOTE, 6, NULL, 0), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	assert_int_equal(jpb_reader_open(f->b, "future", &r), 0);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.type, 0x7f01);
	assert_null(jpb_rectype_find(rec.type));
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.type, JPB_REC_NOTE);
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	jpb_reader_free(r);
}

static void test_large_payload_and_limits(void **state)
{
	struct fixture *f = *state;
	struct jpb_writer *w;
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t big = 3u << 20; /* larger than the reader's read chunk */
	uint8_t *p = malloc(big);
	for (size_t i = 0; i < big; i++)
		p[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(jpb_writer_open(f->b, "pt/cpu0", &w), 0);
	assert_int_equal(jpb_writer_put(w, 0x0301, 1, p, (uint32_t)big), 0);
	assert_int_equal(jpb_writer_put(w, 0x0301, 2, p, 5), 0);
	assert_int_equal(jpb_writer_put(w, 1, 3, p, JPB_MAX_PAYLOAD + 1),
			 jpb_err_invalid);
	assert_int_equal(jpb_writer_records(w), 2);
	assert_int_equal(jpb_writer_close(w), 0);
	assert_int_equal(jpb_reader_open(f->b, "pt/cpu0", &r), 0);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.size, big);
	assert_memory_equal(rec.payload, p, big);
	assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(rec.size, 5);
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	jpb_reader_free(r);
	free(p);
}

/* Records on either side of the reader's read chunk (64 KB), of sizes
 * that leave padding, between small ones: a record larger than the
 * chunk is read up to its end, padding included, so that the next one
 * is found where it starts; a partial record is moved to the buffer's
 * front when it does not fit after it (the sizes thrice: 2.5 MB, more than
 * the buffer's 1 MB); a file cut in such a record or its padding reads
 * as far as the cut. */
static void test_records_around_the_read_chunk(void **state)
{
	struct fixture *f = *state;
	static const uint32_t sizes[] = { 5, 65536 - 24 - 3, 65537, 1, 200003, 7,
					  131075, 65513, 300001, 3 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]), NR = 3 * N };
	struct jpb_writer *w;
	struct jpb_record rec;
	char path[512], cut[512];
	uint8_t *p = malloc(300001 + N); /* record k's payload from p + k */
	for (size_t i = 0; i < 300001 + N; i++)
		p[i] = (uint8_t)(i * 13 + 5);
	assert_int_equal(jpb_writer_open(f->b, "chunks", &w), 0);
	for (size_t k = 0; k < NR; k++)
		assert_int_equal(jpb_writer_put(w, 0x0301, k, p + k % N, sizes[k % N]), 0);
	assert_int_equal(jpb_writer_close(w), 0);
	snprintf(path, sizeof(path), "%s/chunks.jpb", f->dir);
	snprintf(cut, sizeof(cut), "%s/cut.jpb", f->dir);
	struct jpb_reader *r;
	uint64_t starts[NR], ends[NR];
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	for (size_t k = 0; k < NR; k++) {
		assert_int_equal(jpb_reader_next(r, &rec), 0);
		assert_int_equal(rec.time_ns, k);
		assert_int_equal(rec.size, sizes[k % N]);
		assert_memory_equal(rec.payload, p + k % N, sizes[k % N]);
		starts[k] = rec.offset;
		ends[k] = rec.offset + JPB_REC_HDR_SIZE + rec.size;
	}
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	jpb_reader_free(r);
	size_t len;
	uint8_t *data = slurp(path, &len);
	for (size_t k = 0; k < NR; k++) {
		/* in the header, in the payload, at its end, in its padding */
		uint64_t at[] = { starts[k] + 10, starts[k] + JPB_REC_HDR_SIZE + sizes[k % N] / 2,
				  ends[k] - 1, ends[k], ends[k] + 1 };
		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			if (at[j] > len || (k + 1 < NR && at[j] > starts[k + 1]))
				continue;
			spit(cut, data, at[j]);
			int status;
			int64_t bad = -1;
			size_t got = read_through(cut, &status, &bad);
			assert_int_equal(got, at[j] >= ends[k] ? k + 1 : k);
			assert_int_equal(status, at[j] >= ends[k] ? jpb_err_eos : jpb_err_truncated);
		}
	}
	free(data);
	free(p);
}

static void test_list_streams_and_meta(void **state)
{
	struct fixture *f = *state;
	const char *const *names;
	size_t n;
	write_all_types(f->b, "sched", 1);
	write_all_types(f->b, "pt/cpu1", 1);
	write_all_types(f->b, "jvm", 1);
	assert_int_equal(jpb_bundle_list_streams(f->b, &names, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "jvm");
	assert_string_equal(names[1], "pt/cpu1");
	assert_string_equal(names[2], "sched");

	char file[512];
	struct stat st;
	snprintf(file, sizeof(file), "%s/pt/cpu1.jpb", f->dir);
	assert_int_equal(stat(file, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(jpb_bundle_stream_size(f->b, "pt/cpu1"), (uint64_t)st.st_size);
	assert_int_equal(jpb_bundle_stream_size(f->b, "pt/cpu2"), 0);

	void *m;
	assert_int_equal(jpb_meta_load(f->b, &m), jpb_err_not_found);
	json_t *base = jpb_meta_new_base();
	json_object_set_new(base, "target", json_pack("{s:i}", "pid", 42));
	assert_int_equal(jpb_meta_save(f->b, base), 0);
	json_decref(base);
	assert_int_equal(jpb_meta_load(f->b, &m), 0);
	assert_int_equal(json_integer_value(json_object_get(m, "format_version")),
			 JPB_FORMAT_MAJOR);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(m, "target"), "pid")), 42);
	assert_non_null(json_object_get(m, "kernel"));

	char path[512];
	snprintf(path, sizeof(path), "%s/meta.json", f->dir);
	spit(path, (const uint8_t *)"{ not json", 10);
	assert_int_equal(jpb_meta_load(f->b, &m), jpb_err_bad_meta);
	assert_non_null(strstr(jpb_bundle_errmsg(f->b), "meta.json"));
}

static void test_open_rejects_non_bundles(void **state)
{
	struct fixture *f = *state;
	struct jpb_bundle *b = (void *)1;
	char empty[300];
	assert_int_equal(jpb_bundle_open(&b, "/nonexistent/dir"), jpb_err_not_found);
	assert_null(b);
	snprintf(empty, sizeof(empty), "%s/empty", f->dir);
	assert_int_equal(mkdir(empty, 0755), 0);
	assert_int_equal(jpb_bundle_open(&b, empty), jpb_err_bad_magic);
	assert_null(b);
	assert_int_equal(jpb_bundle_create(&b, "/proc/no/such"), jpb_err_not_found);
}

/* /dev/full answers every write with ENOSPC, like a full disk. */
static void test_full_disk_is_reported(void **state)
{
	struct fixture *f = *state;
	char link[512];
	struct jpb_writer *w;
	snprintf(link, sizeof(link), "%s/full.jpb", f->dir);
	assert_int_equal(symlink("/dev/full", link), 0);
	assert_int_equal(jpb_writer_open(f->b, "full", &w), jpb_err_nospc);
	assert_non_null(strstr(jpb_bundle_errmsg(f->b), "full"));
	assert_non_null(strstr(jpb_bundle_errmsg(f->b), "No space left"));
}

static void test_errstr_names_every_code(void **state)
{
	(void)state;
	for (int e = jpb_err_unknown_type; e <= 0; e++)
		assert_string_not_equal(jpb_errstr(e), "unknown error");
	assert_string_equal(jpb_errstr(-999), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_every_type, setup, teardown),
		cmocka_unit_test(test_registry_is_consistent),
		cmocka_unit_test_setup_teardown(test_truncated_at_every_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_length_and_payload, setup, teardown),
		cmocka_unit_test(test_decode_refuses_short_payload),
		cmocka_unit_test_setup_teardown(test_bad_magic_and_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_types_are_skippable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_payload_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_records_around_the_read_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_streams_and_meta, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_rejects_non_bundles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_is_reported, setup, teardown),
		cmocka_unit_test(test_errstr_names_every_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
