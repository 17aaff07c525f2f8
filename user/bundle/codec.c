// SPDX-License-Identifier: MIT
#include "codec.h"

#include <stdlib.h>
#include <string.h>

#include "bundle.h"

struct jpb_str jpb_str_c(const char *s)
{
	struct jpb_str r = { s ? s : "", s ? (uint32_t)strlen(s) : 0 };
	return r;
}

void jpb_buf_fini(struct jpb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void jpb_buf_reset(struct jpb_buf *b)
{
	b->len = 0;
}

int jpb_buf_reserve(struct jpb_buf *b, size_t extra)
{
	if (extra > SIZE_MAX / 2 - b->len)
		return jpb_err_nomem;
	if (b->len + extra <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra)
		cap *= 2;
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return jpb_err_nomem;
	b->data = p;
	b->cap = cap;
	return 0;
}

int jpb_buf_put(struct jpb_buf *b, const void *p, size_t n)
{
	int err = jpb_buf_reserve(b, n);
	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int jpb_buf_u8(struct jpb_buf *b, uint8_t v)
{
	return jpb_buf_put(b, &v, 1);
}

int jpb_buf_u16(struct jpb_buf *b, uint16_t v)
{
	uint8_t le[2];
	jpb_st16(le, v);
	return jpb_buf_put(b, le, sizeof(le));
}

int jpb_buf_u32(struct jpb_buf *b, uint32_t v)
{
	uint8_t le[4];
	jpb_st32(le, v);
	return jpb_buf_put(b, le, sizeof(le));
}

int jpb_buf_u64(struct jpb_buf *b, uint64_t v)
{
	uint8_t le[8];
	jpb_st64(le, v);
	return jpb_buf_put(b, le, sizeof(le));
}

int jpb_buf_bytes(struct jpb_buf *b, const void *p, uint32_t n)
{
	int err = jpb_buf_reserve(b, 4 + (size_t)n);
	if (err)
		return err;
	jpb_buf_u32(b, n);
	return jpb_buf_put(b, p, n);
}

int jpb_buf_str(struct jpb_buf *b, struct jpb_str s)
{
	return jpb_buf_bytes(b, s.ptr, s.len);
}

int jpb_grow(void **p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap <= n)
		ncap *= 2;
	if (!elem || ncap > SIZE_MAX / elem)
		return jpb_err_nomem;
	void *q = realloc(*p, ncap * elem);
	if (!q)
		return jpb_err_nomem;
	*p = q;
	*cap = ncap;
	return 0;
}

static int cur_take(struct jpb_cur *c, size_t n, const uint8_t **p)
{
	if (jpb_cur_left(c) < n)
		return jpb_err_corrupt;
	*p = c->p + c->pos;
	c->pos += n;
	return 0;
}

int jpb_cur_u16(struct jpb_cur *c, uint16_t *v)
{
	const uint8_t *p;
	int err = cur_take(c, 2, &p);
	if (!err)
		*v = jpb_le16(p);
	return err;
}

int jpb_cur_u32(struct jpb_cur *c, uint32_t *v)
{
	const uint8_t *p;
	int err = cur_take(c, 4, &p);
	if (!err)
		*v = jpb_le32(p);
	return err;
}

int jpb_cur_u64(struct jpb_cur *c, uint64_t *v)
{
	const uint8_t *p;
	int err = cur_take(c, 8, &p);
	if (!err)
		*v = jpb_le64(p);
	return err;
}

int jpb_cur_bytes(struct jpb_cur *c, struct jpb_bytes *b)
{
	size_t start = c->pos;
	uint32_t n;
	const uint8_t *p;
	int err = jpb_cur_u32(c, &n);
	if (!err)
		err = cur_take(c, n, &p);
	if (err) {
		c->pos = start;
		return err;
	}
	b->ptr = p;
	b->len = n;
	return 0;
}

int jpb_cur_str(struct jpb_cur *c, struct jpb_str *s)
{
	struct jpb_bytes b;
	int err = jpb_cur_bytes(c, &b);
	if (!err) {
		s->ptr = (const char *)b.ptr;
		s->len = b.len;
	}
	return err;
}

int jpb_cur_skip(struct jpb_cur *c, size_t n)
{
	const uint8_t *p;
	return cur_take(c, n, &p);
}
