// SPDX-License-Identifier: MIT
/* Stream writer: whole records only ever reach write(2) together. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libdeflate.h>

#include "bundle.h"
#include "bundle_int.h"
#include "codec.h"

/* Flush once this much is buffered; payloads of LARGE_PAYLOAD bytes or
 * more bypass the buffer (one copy fewer: the kernel's is the only one). */
#define WRITER_BUF_SIZE (256u << 10)
#define LARGE_PAYLOAD (64u << 10)

struct jpb_writer {
	int fd;
	char name[256];
	struct jpb_buf buf;
	uint64_t records;
	uint64_t bytes;
	int nosync;
	int first_err;
	char errmsg[512];
};

static int writer_fail(struct jpb_writer *w, int err, int errnum,
		       const char *what)
{
	if (!w->first_err) {
		w->first_err = err;
		snprintf(w->errmsg, sizeof(w->errmsg), "%s: %s: %s", w->name,
			 what, errnum ? strerror(errnum) : jpb_errstr(err));
	}
	return err;
}

/* All of IOV[0..cnt), in order, however writev splits it. */
static int writev_all(struct jpb_writer *w, struct iovec *iov, int cnt)
{
	while (cnt) {
		ssize_t k = writev(w->fd, iov, cnt);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			return writer_fail(w, jpb_errno_code(e), e, "write");
		}
		while (cnt && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static int write_all(struct jpb_writer *w, const uint8_t *p, size_t n)
{
	struct iovec iov = { (void *)p, n };
	return writev_all(w, &iov, 1);
}

int jpb_writer_open(struct jpb_bundle *b, const char *name,
		    struct jpb_writer **out)
{
	char rel[300], path[4096];
	if (!b || !name || !*name || !out || strstr(name, ".."))
		return jpb_err_invalid;
	snprintf(rel, sizeof(rel), "%s.jpb", name);
	int err = jpb_bundle_path(b, rel, path, sizeof(path));
	if (err)
		return err;
	err = jpb_mkdirs_for(b, path);
	if (err)
		return err;
	struct jpb_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return jpb_err_nomem;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int e = errno;
		jpb_bundle_set_err(b, "%s: cannot create: %s", rel, strerror(e));
		free(w);
		return jpb_errno_code(e);
	}
	uint8_t hdr[JPB_STREAM_HDR_SIZE] = { 0 };
	memcpy(hdr, JPB_STREAM_MAGIC, 8);
	jpb_st16(hdr + 8, JPB_FORMAT_MAJOR);
	jpb_st16(hdr + 10, JPB_FORMAT_MINOR);
	jpb_st32(hdr + 12, JPB_STREAM_HDR_SIZE);
	err = write_all(w, hdr, sizeof(hdr));
	if (err) {
		jpb_bundle_set_err(b, "%s", w->errmsg);
		close(w->fd);
		free(w);
		return err;
	}
	w->bytes = sizeof(hdr);
	*out = w;
	return 0;
}

/* A record header with its CRC field zero. */
static void header(uint8_t *h, uint16_t type, uint64_t time_ns, uint32_t size)
{
	memset(h, 0, JPB_REC_HDR_SIZE);
	jpb_st16(h, type);
	jpb_st32(h + 4, size);
	jpb_st64(h + 8, time_ns);
}

/* A large record goes out from the caller's payload (HEAD then BODY),
 * after what is buffered: same bytes as frame() would give. */
static int put_large(struct jpb_writer *w, uint16_t type, uint64_t time_ns,
		     const void *head, uint32_t hlen, const void *body,
		     uint32_t blen, size_t pad)
{
	int err = jpb_writer_flush(w, 0);
	if (err)
		return err;
	uint8_t h[JPB_REC_HDR_SIZE], zero[8] = { 0 };
	header(h, type, time_ns, hlen + blen);
	/* a NULL buffer resets libdeflate's CRC (zlib's convention) */
	uint32_t crc = libdeflate_crc32(0, h, sizeof(h));
	if (hlen)
		crc = libdeflate_crc32(crc, head, hlen);
	if (blen)
		crc = libdeflate_crc32(crc, body, blen);
	jpb_st32(h + 16, crc);
	struct iovec iov[4];
	int n = 0;
	iov[n++] = (struct iovec){ h, sizeof(h) };
	if (hlen)
		iov[n++] = (struct iovec){ (void *)head, hlen };
	if (blen)
		iov[n++] = (struct iovec){ (void *)body, blen };
	if (pad)
		iov[n++] = (struct iovec){ zero, pad };
	err = writev_all(w, iov, n);
	if (err)
		return err;
	w->records++;
	w->bytes += sizeof(h) + hlen + blen + pad;
	return 0;
}

/* Frame the record straight into the buffer, so that one CRC call covers
 * the header (its CRC field still zero) and the payload: libdeflate's
 * CRC-32 is zlib's polynomial, several times faster on these short
 * records, where zlib's falls back to a byte at a time. */
static void frame(uint8_t *p, uint16_t type, uint64_t time_ns,
		  const void *head, uint32_t hlen, const void *body,
		  uint32_t blen, size_t pad)
{
	header(p, type, time_ns, hlen + blen);
	if (hlen)
		memcpy(p + JPB_REC_HDR_SIZE, head, hlen);
	if (blen)
		memcpy(p + JPB_REC_HDR_SIZE + hlen, body, blen);
	memset(p + JPB_REC_HDR_SIZE + hlen + blen, 0, pad);
	jpb_st32(p + 16, libdeflate_crc32(0, p, JPB_REC_HDR_SIZE + hlen + blen));
}

int jpb_writer_put2(struct jpb_writer *w, uint16_t type, uint64_t time_ns,
		    const void *head, uint32_t hlen, const void *body,
		    uint32_t blen)
{
	if (!w || (hlen && !head) || (blen && !body) || hlen > JPB_MAX_PAYLOAD ||
	    blen > JPB_MAX_PAYLOAD - hlen)
		return jpb_err_invalid;
	if (w->first_err)
		return w->first_err;
	uint32_t size = hlen + blen;
	size_t pad = (size_t)(jpb_padded(size) - size);
	size_t total = JPB_REC_HDR_SIZE + size + pad;
	if (size >= LARGE_PAYLOAD)
		return put_large(w, type, time_ns, head, hlen, body, blen, pad);
	if (w->buf.len + total > WRITER_BUF_SIZE) {
		int err = jpb_writer_flush(w, 0);
		if (err)
			return err;
	}
	if (jpb_buf_reserve(&w->buf, total))
		return writer_fail(w, jpb_err_nomem, 0, "buffer");
	frame(w->buf.data + w->buf.len, type, time_ns, head, hlen, body, blen, pad);
	w->buf.len += total;
	w->records++;
	w->bytes += total;
	if (w->buf.len >= WRITER_BUF_SIZE)
		return jpb_writer_flush(w, 0);
	return 0;
}

int jpb_writer_put(struct jpb_writer *w, uint16_t type, uint64_t time_ns,
		   const void *payload, uint32_t size)
{
	if (size && !payload)
		return jpb_err_invalid;
	return jpb_writer_put2(w, type, time_ns, NULL, 0, payload, size);
}

int jpb_writer_flush(struct jpb_writer *w, int durable)
{
	if (!w)
		return jpb_err_invalid;
	if (w->first_err)
		return w->first_err;
	int err = write_all(w, w->buf.data, w->buf.len);
	if (err)
		return err;
	jpb_buf_reset(&w->buf);
	if (durable && fsync(w->fd) != 0 && errno != EINVAL) {
		int e = errno;
		return writer_fail(w, jpb_errno_code(e), e, "fsync");
	}
	return 0;
}

int jpb_writer_close(struct jpb_writer *w)
{
	if (!w)
		return jpb_err_invalid;
	jpb_writer_flush(w, !w->nosync);
	if (close(w->fd) != 0 && !w->first_err) {
		int e = errno;
		writer_fail(w, jpb_errno_code(e), e, "close");
	}
	int err = w->first_err;
	jpb_buf_fini(&w->buf);
	free(w);
	return err;
}

void jpb_writer_set_nosync(struct jpb_writer *w)
{
	w->nosync = 1;
}

uint64_t jpb_writer_records(const struct jpb_writer *w)
{
	return w->records;
}

uint64_t jpb_writer_bytes(const struct jpb_writer *w)
{
	return w->bytes;
}

const char *jpb_writer_errmsg(const struct jpb_writer *w)
{
	return w->errmsg;
}
