/* SPDX-License-Identifier: MIT */
/*
 * Little-endian payload building and bounds-checked parsing.
 *
 * jpb_buf grows as it is appended to; jpb_cur walks a payload and never
 * reads past its end, whatever length fields the payload claims.
 */
#ifndef JPBPF_CODEC_H
#define JPBPF_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bundle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jpb_str {
	const char *ptr; /* not NUL-terminated */
	uint32_t len;
};

struct jpb_bytes {
	const uint8_t *ptr;
	uint32_t len;
};

/* A jpb_str from a C string (NULL gives the empty string). */
struct jpb_str jpb_str_c(const char *s);

/* A growable byte buffer.  Initialise with {0}; release with
 * jpb_buf_fini.  Append functions return 0 or jpb_err_nomem; after a
 * failure the buffer keeps its old contents and stays usable. */
struct jpb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

void jpb_buf_fini(struct jpb_buf *b);
void jpb_buf_reset(struct jpb_buf *b);
int jpb_buf_reserve(struct jpb_buf *b, size_t extra);
int jpb_buf_put(struct jpb_buf *b, const void *p, size_t n);
int jpb_buf_u8(struct jpb_buf *b, uint8_t v);
int jpb_buf_u16(struct jpb_buf *b, uint16_t v);
int jpb_buf_u32(struct jpb_buf *b, uint32_t v);
int jpb_buf_u64(struct jpb_buf *b, uint64_t v);
int jpb_buf_str(struct jpb_buf *b, struct jpb_str s);
int jpb_buf_bytes(struct jpb_buf *b, const void *p, uint32_t n);

/* Make room in the array *P (capacity *CAP elements of ELEM bytes) for
 * element index N, doubling.  0, or jpb_err_nomem with *P and *CAP
 * unchanged. */
int jpb_grow(void **p, size_t *cap, size_t n, size_t elem);

/* JPB_GROW(arr, n, cap): room for arr[n], for any element type. */
#define JPB_GROW(arr, n, cap) \
	((n) < (cap) ? 0 : jpb_grow((void **)&(arr), &(cap), (n), sizeof(*(arr))))

/* A read cursor over [p, p + len).  Get functions return 0, or
 * jpb_err_corrupt without moving when fewer bytes remain than needed. */
struct jpb_cur {
	const uint8_t *p;
	size_t len;
	size_t pos;
};

static inline struct jpb_cur jpb_cur_init(const void *p, size_t len)
{
	struct jpb_cur c = { (const uint8_t *)p, len, 0 };
	return c;
}

static inline size_t jpb_cur_left(const struct jpb_cur *c)
{
	return c->len - c->pos;
}

/* Inline: hot in the decoded-event reader, where the cursor stays a
 * local in registers. */
static inline int jpb_cur_u8(struct jpb_cur *c, uint8_t *v)
{
	if (c->pos >= c->len)
		return jpb_err_corrupt;
	*v = c->p[c->pos++];
	return 0;
}
int jpb_cur_u16(struct jpb_cur *c, uint16_t *v);
int jpb_cur_u32(struct jpb_cur *c, uint32_t *v);
int jpb_cur_u64(struct jpb_cur *c, uint64_t *v);
int jpb_cur_str(struct jpb_cur *c, struct jpb_str *s);
int jpb_cur_bytes(struct jpb_cur *c, struct jpb_bytes *b);
int jpb_cur_skip(struct jpb_cur *c, size_t n);

/* Unaligned little-endian loads and stores for fixed layouts.  On a
 * little-endian host they are one memcpy each, which compilers turn into
 * one move; byte by byte (what compilers do not always merge) elsewhere. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JPB_LE_HOST 1
#else
#define JPB_LE_HOST 0
#endif

static inline uint16_t jpb_le16(const uint8_t *p)
{
	uint16_t v;
	if (JPB_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t jpb_le32(const uint8_t *p)
{
	uint32_t v;
	if (JPB_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	       ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t jpb_le64(const uint8_t *p)
{
	uint64_t v;
	if (JPB_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint64_t)jpb_le32(p) | ((uint64_t)jpb_le32(p + 4) << 32);
}

static inline void jpb_st16(uint8_t *p, uint16_t v)
{
	if (JPB_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void jpb_st32(uint8_t *p, uint32_t v)
{
	if (JPB_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	jpb_st16(p, (uint16_t)v);
	jpb_st16(p + 2, (uint16_t)(v >> 16));
}

static inline void jpb_st64(uint8_t *p, uint64_t v)
{
	if (JPB_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	jpb_st32(p, (uint32_t)v);
	jpb_st32(p + 4, (uint32_t)(v >> 32));
}

/* An unsigned LEB128 of V at P (at most 10 bytes); returns its length.
 * The packed decoded and flow events both use it. */
static inline size_t jpb_put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

#ifdef __cplusplus
}
#endif
#endif /* JPBPF_CODEC_H */
