// SPDX-License-Identifier: MIT
/* Record framing bytes on disk: the CRC stays zlib's CRC-32 over the header
 * (CRC field zero) and the payload, whatever computes it, so bundles
 * written before and after the writer's change read alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "bundle.h"
#include "codec.h"

/* Payload sizes around the writer's and CRC's boundaries: empty, not a
 * multiple of 8, a sched switch, a CRC block, past the write buffer. */
static const uint32_t sizes[] = { 0, 1, 7, 36, 64, 65, 1000, 300000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint8_t *payload_of(uint32_t size, unsigned seed)
{
	uint8_t *p = malloc(size ? size : 1);
	for (uint32_t i = 0; i < size; i++)
		p[i] = (uint8_t)(i * 131u + seed * 7u + (i >> 8));
	return p;
}

static char *write_stream(char *dir, size_t dirsz)
{
	const char *tmp = getenv("TESTTMP");
	snprintf(dir, dirsz, "%s/frame.XXXXXX", tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	struct jpb_bundle *b;
	struct jpb_writer *w;
	assert_int_equal(jpb_bundle_create(&b, dir), 0);
	assert_int_equal(jpb_writer_open(b, "s", &w), 0);
	for (unsigned i = 0; i < NSIZES; i++) {
		uint8_t *p = payload_of(sizes[i], i);
		assert_int_equal(jpb_writer_put(w, (uint16_t)(0x100 + i),
						1000000007ull * (i + 1), p,
						sizes[i]), 0);
		free(p);
	}
	assert_int_equal(jpb_writer_close(w), 0);
	jpb_bundle_free(b);
	char *path = malloc(strlen(dir) + 8);
	sprintf(path, "%s/s.jpb", dir);
	return path;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *d = malloc(*len);
	assert_int_equal(fread(d, 1, *len, f), *len);
	fclose(f);
	return d;
}

/* Walk the file by hand, recomputing every CRC with zlib. */
static void test_crc_is_zlib_crc32(void **state)
{
	(void)state;
	char dir[256];
	char *path = write_stream(dir, sizeof(dir));
	size_t len;
	uint8_t *d = slurp(path, &len);
	size_t off = jpb_le32(d + 12);
	for (unsigned i = 0; i < NSIZES; i++) {
		assert_true(off + JPB_REC_HDR_SIZE <= len);
		uint8_t h[JPB_REC_HDR_SIZE];
		memcpy(h, d + off, sizeof(h));
		assert_int_equal(jpb_le16(h), 0x100 + i);
		assert_int_equal(jpb_le32(h + 4), sizes[i]);
		assert_int_equal(jpb_le64(h + 8), 1000000007ull * (i + 1));
		uint32_t stored = jpb_le32(h + 16);
		jpb_st32(h + 16, 0);
		uLong crc = crc32(0L, h, sizeof(h));
		crc = crc32(crc, d + off + JPB_REC_HDR_SIZE, sizes[i]);
		assert_int_equal(stored, (uint32_t)crc);
		uint8_t *p = payload_of(sizes[i], i);
		assert_memory_equal(d + off + JPB_REC_HDR_SIZE, p,
				    sizes[i]);
		free(p);
		/* padding is zeros up to 8 bytes */
		for (uint64_t k = sizes[i]; k < jpb_padded(sizes[i]); k++)
			assert_int_equal(d[off + JPB_REC_HDR_SIZE + k], 0);
		off += JPB_REC_HDR_SIZE + jpb_padded(sizes[i]);
	}
	assert_int_equal(off, len);
	free(d);
	free(path);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The reader checks the same CRC: a record re-framed with zlib reads
 * back, and one flipped payload bit does not. */
static void test_reader_checks_every_byte(void **state)
{
	(void)state;
	char dir[256];
	char *path = write_stream(dir, sizeof(dir));
	struct jpb_reader *r;
	struct jpb_record rec;
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	for (unsigned i = 0; i < NSIZES; i++) {
		assert_int_equal(jpb_reader_next(r, &rec), 0);
		assert_int_equal(rec.size, sizes[i]);
	}
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_eos);
	jpb_reader_free(r);

	size_t len;
	uint8_t *d = slurp(path, &len);
	size_t first = jpb_le32(d + 12);
	/* record 3 (36 bytes) starts after records of 0, 1 and 7 bytes */
	size_t rec3 = first + 3 * JPB_REC_HDR_SIZE + 0 + 8 + 8;
	assert_int_equal(jpb_le32(d + rec3 + 4), 36);
	d[rec3 + JPB_REC_HDR_SIZE + 20] ^= 0x10;
	FILE *f = fopen(path, "wb");
	assert_int_equal(fwrite(d, 1, len, f), len);
	fclose(f);
	assert_int_equal(jpb_reader_open_path(path, &r), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(jpb_reader_next(r, &rec), 0);
	assert_int_equal(jpb_reader_next(r, &rec), jpb_err_corrupt);
	assert_int_equal(jpb_reader_bad_offset(r), (int64_t)rec3);
	jpb_reader_free(r);
	free(d);
	free(path);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_is_zlib_crc32),
		cmocka_unit_test(test_reader_checks_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
