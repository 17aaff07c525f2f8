// SPDX-License-Identifier: MIT
/*
 * Stream reader.  It trusts nothing in the file: every length is bounded by
 * JPB_MAX_PAYLOAD and by the file's size, and every record's CRC is checked
 * before its payload is handed out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>

#include "bundle.h"
#include "bundle_int.h"
#include "codec.h"
#include "records.h"

/* A refill's least read: small enough that the bytes just read are
 * still in the core's cache when the checksum and then the caller go
 * over them (L2 is 512 KB here; 1 MB was not), large enough that the
 * syscalls cost little (a few hundred for a jvm stream of 17 MB). */
#define READ_CHUNK (64u << 10)
/* The buffer's least size, 1 MB as when it was the refill's: glibc
 * raises its mmap threshold to the size of a freed mmapped block, and at
 * 256 KB the decoder's 512 KB record buffers were mmapped afresh each
 * time (fop, decode --no-flow: 5 ms more). */
#define BUF_MIN (16 * READ_CHUNK)

struct jpb_reader {
	int fd;
	char name[256];
	uint64_t file_size;
	uint8_t *buf;     /* holds file bytes [buf_off, buf_off + buf_len) */
	size_t buf_cap;
	size_t buf_len;
	size_t buf_pos;   /* next unread byte in buf */
	uint64_t buf_off;
	int sticky_err;
	int64_t bad_offset;
	int skip_damaged;  /* jpb_reader_skip_damaged */
	uint64_t damaged; /* records stepped over */
	char errmsg[512];
};

/* The message and offset are the first damage's: a later one is seen
 * only when the reader stepped over the first. */
static void note_damage(struct jpb_reader *r, uint64_t off, const char *why)
{
	if (r->bad_offset >= 0)
		return;
	r->bad_offset = (int64_t)off;
	snprintf(r->errmsg, sizeof(r->errmsg),
		 "%s: record at offset %llu %s", r->name,
		 (unsigned long long)off, why);
}

static int reader_fail(struct jpb_reader *r, int err, uint64_t off,
		       const char *why)
{
	r->sticky_err = err;
	note_damage(r, off, why);
	return err;
}

/* Make at least N unread bytes available, or report how many exist.  A
 * refill reads READ_CHUNK bytes, or up to N exactly when N is more: a
 * large record then ends the buffer, so the next refill has no partial
 * record to move.  A partial record is completed where it lies while the
 * buffer (BUF_MIN at least) has room after it, and moved to the front
 * only when it has not: about one refill in sixteen moves one. */
static int ensure(struct jpb_reader *r, size_t n, size_t *avail)
{
	size_t have = r->buf_len - r->buf_pos;
	if (have >= n) {
		*avail = have;
		return 0;
	}
	size_t want = n > READ_CHUNK ? n : READ_CHUNK;
	if (r->buf_pos + want > r->buf_cap) {
		if (have && r->buf_pos)
			memmove(r->buf, r->buf + r->buf_pos, have);
		r->buf_off += r->buf_pos;
		r->buf_pos = 0;
		r->buf_len = have;
	}
	if (want > r->buf_cap) {
		/* by a quarter at least: records a little larger each
		 * time do not each cost a realloc */
		size_t cap = r->buf_cap + r->buf_cap / 4;
		cap = cap > want ? cap : want;
		cap = cap > BUF_MIN ? cap : BUF_MIN;
		uint8_t *p = realloc(r->buf, cap);
		if (!p)
			return jpb_err_nomem;
		r->buf = p;
		r->buf_cap = cap;
	}
	size_t lim = r->buf_pos + want;
	while (r->buf_len - r->buf_pos < n) {
		ssize_t k = read(r->fd, r->buf + r->buf_len, lim - r->buf_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return jpb_err_io;
		if (k == 0)
			break;
		r->buf_len += (size_t)k;
	}
	*avail = r->buf_len - r->buf_pos;
	return 0;
}

static int check_stream_header(struct jpb_reader *r)
{
	size_t avail;
	int err = ensure(r, JPB_STREAM_HDR_SIZE, &avail);
	if (err)
		return err;
	const uint8_t *h = r->buf;
	if (avail < JPB_STREAM_HDR_SIZE || memcmp(h, JPB_STREAM_MAGIC, 8)) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "%s: not a jpbpf stream (bad magic)", r->name);
		return jpb_err_bad_magic;
	}
	uint32_t hdr_size = jpb_le32(h + 12);
	if (jpb_le16(h + 8) != JPB_FORMAT_MAJOR || hdr_size < 16 ||
	    hdr_size > 4096) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "%s: format version %u.%u not supported (this is %u.%u)",
			 r->name, jpb_le16(h + 8), jpb_le16(h + 10),
			 JPB_FORMAT_MAJOR, JPB_FORMAT_MINOR);
		return jpb_err_bad_version;
	}
	err = ensure(r, hdr_size, &avail);
	if (err)
		return err;
	if (avail < hdr_size)
		return reader_fail(r, jpb_err_truncated, 0, "truncated");
	r->buf_pos = hdr_size;
	return 0;
}

static int open_fd(int fd, const char *name, struct jpb_reader **out)
{
	struct stat st;
	struct jpb_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return jpb_err_nomem;
	}
	r->fd = fd;
	r->bad_offset = -1;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->file_size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	int err = check_stream_header(r);
	if (err) {
		if (err == jpb_err_truncated || err == jpb_err_corrupt) {
			*out = r; /* reads as an empty, damaged stream */
			return 0;
		}
		jpb_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int jpb_reader_open_path(const char *path, struct jpb_reader **out)
{
	if (!path || !out)
		return jpb_err_invalid;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? jpb_err_not_found : jpb_err_io;
	return open_fd(fd, path, out);
}

int jpb_reader_open(struct jpb_bundle *b, const char *name,
		    struct jpb_reader **out)
{
	char rel[300], path[4096];
	if (!b || !name || !out)
		return jpb_err_invalid;
	snprintf(rel, sizeof(rel), "%s.jpb", name);
	int err = jpb_bundle_path(b, rel, path, sizeof(path));
	if (err)
		return err;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		jpb_bundle_set_err(b, "%s: %s", rel, strerror(e));
		return e == ENOENT ? jpb_err_not_found : jpb_err_io;
	}
	err = open_fd(fd, name, out);
	if (err)
		jpb_bundle_set_err(b, "%s: %s", rel, jpb_errstr(err));
	return err;
}

/* A record stepped over (jpb_reader_skip_damaged): read on. */
#define STEPPED_OVER 1

/* Whether record header H (its checksum field zeroed here) and PAYLOAD
 * give the checksum H holds.  libdeflate: zlib's CRC-32, much faster on
 * short records. */
static int crc_holds(uint8_t h[JPB_REC_HDR_SIZE], const uint8_t *payload, uint32_t size)
{
	uint32_t stored = jpb_le32(h + 16);
	jpb_st32(h + 16, 0);
	return libdeflate_crc32(libdeflate_crc32(0, h, JPB_REC_HDR_SIZE), payload, size) == stored;
}

/* Whether a whole record whose checksum matches starts at AT (KNOWN: and
 * is of a known type, which spares a search most checksums).  Read with
 * pread: the reader's buffer and file position stay as they are. */
static int record_at(const struct jpb_reader *r, uint64_t at, int known)
{
	uint8_t h[JPB_REC_HDR_SIZE];
	if (at + JPB_REC_HDR_SIZE > r->file_size ||
	    pread(r->fd, h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h))
		return 0;
	uint32_t size = jpb_le32(h + 4);
	if (size > JPB_MAX_PAYLOAD || at + JPB_REC_HDR_SIZE + size > r->file_size ||
	    (known && !jpb_rectype_find(jpb_le16(h))))
		return 0;
	uint8_t *payload = malloc(size ? size : 1);
	int ok = payload && pread(r->fd, payload, size, (off_t)(at + sizeof(h))) ==
				    (ssize_t)size && crc_holds(h, payload, size);
	free(payload);
	return ok;
}

/* Where reading resumes after the damaged record at OFF: at NEXT (where
 * its length says the next one starts; 0: its length is not to be
 * trusted) if a record is there, else at the first record of a known
 * type at an 8-byte step after OFF (records are padded to 8 bytes): a
 * damaged length field loses its record, not the stream's rest.
 * UINT64_MAX: no record follows. */
static uint64_t resume_at(const struct jpb_reader *r, uint64_t off, uint64_t next)
{
	if (next && record_at(r, next, 0))
		return next;
	for (uint64_t at = off + 8; at + JPB_REC_HDR_SIZE <= r->file_size; at += 8)
		if (at != next && record_at(r, at, 1))
			return at;
	return UINT64_MAX;
}

/* Step over the damaged record at OFF to AT. */
static int step_to(struct jpb_reader *r, uint64_t off, const char *why, uint64_t at)
{
	note_damage(r, off, why);
	r->damaged++;
	if (at >= r->buf_off && at - r->buf_off <= r->buf_len) {
		r->buf_pos = (size_t)(at - r->buf_off);
		return STEPPED_OVER;
	}
	if (lseek(r->fd, (off_t)at, SEEK_SET) < 0)
		return reader_fail(r, jpb_err_io, at, "unreadable");
	r->buf_off = at;
	r->buf_pos = r->buf_len = 0;
	return STEPPED_OVER;
}

/* A record's length is out of bounds: in skip mode, the length may be
 * what was damaged, if a record follows; else the stream ends here. */
static int bad_length(struct jpb_reader *r, int err, uint64_t off, const char *why)
{
	uint64_t at = r->skip_damaged ? resume_at(r, off, 0) : UINT64_MAX;
	if (at == UINT64_MAX)
		return reader_fail(r, err, off, why);
	return step_to(r, off, why, at);
}

static int read_record(struct jpb_reader *r, struct jpb_record *rec)
{
	if (r->sticky_err)
		return r->sticky_err;
	uint64_t off = r->buf_off + r->buf_pos;
	size_t avail;
	int err = ensure(r, JPB_REC_HDR_SIZE, &avail);
	if (err)
		return reader_fail(r, err, off, "unreadable");
	if (avail == 0)
		return jpb_err_eos;
	if (avail < JPB_REC_HDR_SIZE)
		return reader_fail(r, jpb_err_truncated, off, "truncated");
	uint8_t h[JPB_REC_HDR_SIZE];
	memcpy(h, r->buf + r->buf_pos, sizeof(h));
	uint32_t size = jpb_le32(h + 4);
	if (size > JPB_MAX_PAYLOAD)
		return bad_length(r, jpb_err_corrupt, off,
				  "corrupt (length field too large)");
	size_t total = JPB_REC_HDR_SIZE + (size_t)jpb_padded(size);
	if (off + JPB_REC_HDR_SIZE + size > r->file_size)
		return bad_length(r, jpb_err_truncated, off, "truncated");
	/* its padding too: the next record starts after it */
	err = ensure(r, total, &avail);
	if (err)
		return reader_fail(r, err, off, "unreadable");
	if (avail < JPB_REC_HDR_SIZE + size)
		return reader_fail(r, jpb_err_truncated, off, "truncated");
	const uint8_t *payload = r->buf + r->buf_pos + JPB_REC_HDR_SIZE;
	if (!crc_holds(h, payload, size)) {
		if (!r->skip_damaged)
			return reader_fail(r, jpb_err_corrupt, off,
					   "corrupt (checksum mismatch)");
		/* the next record starts after it, unless the damage was
		 * in its length */
		uint64_t next = off + total < r->file_size ? off + total : r->file_size;
		uint64_t at = resume_at(r, off, next);
		return step_to(r, off, "corrupt (checksum mismatch)",
			       at == UINT64_MAX ? next : at);
	}
	rec->type = jpb_le16(h);
	rec->time_ns = jpb_le64(h + 8);
	rec->offset = off;
	rec->payload = payload;
	rec->size = size;
	/* Padding after the last record may be cut off; that loses nothing. */
	r->buf_pos += total < avail ? total : avail;
	return 0;
}

int jpb_reader_next(struct jpb_reader *r, struct jpb_record *rec)
{
	if (!r || !rec)
		return jpb_err_invalid;
	int rc;
	while ((rc = read_record(r, rec)) == STEPPED_OVER)
		;
	return rc;
}

void jpb_reader_skip_damaged(struct jpb_reader *r)
{
	r->skip_damaged = 1;
}

uint64_t jpb_reader_damaged(const struct jpb_reader *r)
{
	return r->damaged;
}

int64_t jpb_reader_bad_offset(const struct jpb_reader *r)
{
	return r->bad_offset;
}

uint64_t jpb_reader_file_size(const struct jpb_reader *r)
{
	return r->file_size;
}

const char *jpb_reader_errmsg(const struct jpb_reader *r)
{
	return r->errmsg;
}

const char *jpb_reader_damage(const struct jpb_reader *r, int err, char *buf,
			      size_t size)
{
	unsigned long long n = (unsigned long long)r->damaged;
	if (!n)
		snprintf(buf, size, "%s", r->errmsg);
	else
		snprintf(buf, size, "%s (%llu damaged record%s stepped over%s)", r->errmsg,
			 n, n == 1 ? "" : "s", err != jpb_err_eos ? ", then the tail lost" : "");
	return buf;
}

void jpb_reader_free(struct jpb_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->buf);
	free(r);
}
