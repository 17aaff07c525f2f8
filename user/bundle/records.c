// SPDX-License-Identifier: MIT
/* The schema machinery and the core record types. */
#include "records.h"

#include <string.h>

#include "bundle.h"

static const struct jpb_field thread_fields[] = {
	JPB_FIELD(struct jpb_rec_thread, tid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_thread, nstid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_thread, pid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_thread, event, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_thread, name, JPB_F_STR),
};

static const struct jpb_field note_fields[] = {
	JPB_FIELD(struct jpb_rec_note, level, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_note, source, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_note, text, JPB_F_STR),
};

static const struct jpb_field loss_fields[] = {
	JPB_FIELD(struct jpb_rec_loss, what, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_loss, cpu, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_loss, count, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_loss, first_ns, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_loss, last_ns, JPB_F_U64),
};

static const struct jpb_field mmap_fields[] = {
	JPB_FIELD(struct jpb_rec_mmap, pid, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_mmap, prot, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_mmap, start, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_mmap, end, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_mmap, pgoff, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_mmap, inode, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_mmap, dev_major, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_mmap, dev_minor, JPB_F_U32),
	JPB_FIELD(struct jpb_rec_mmap, path, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_mmap, build_id, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_mmap, copy, JPB_F_STR),
};

static const struct jpb_field file_fields[] = {
	JPB_FIELD(struct jpb_rec_file, path, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_file, origin, JPB_F_STR),
	JPB_FIELD(struct jpb_rec_file, size, JPB_F_U64),
	JPB_FIELD(struct jpb_rec_file, build_id, JPB_F_STR),
};

#define TYPE(num, nm, strm, st, f) \
	{ num, nm, strm, sizeof(st), f, JPB_NFIELDS(f) }

static const struct jpb_rectype core_types[] = {
	TYPE(JPB_REC_THREAD, "thread", "", struct jpb_rec_thread, thread_fields),
	TYPE(JPB_REC_NOTE, "note", "", struct jpb_rec_note, note_fields),
	TYPE(JPB_REC_LOSS, "loss", "", struct jpb_rec_loss, loss_fields),
	TYPE(JPB_REC_MMAP, "mmap", "maps", struct jpb_rec_mmap, mmap_fields),
	TYPE(JPB_REC_FILE, "file", "maps", struct jpb_rec_file, file_fields),
};

static void core_rectypes(const struct jpb_rectype **t, size_t *n)
{
	*t = core_types;
	*n = JPB_NFIELDS(core_types);
}

/* Domains in type order: the type number's high byte indexes this. */
typedef void (*domain_fn)(const struct jpb_rectype **, size_t *);
static const domain_fn domains[] = {
	core_rectypes,	      jpb_rectypes_jvm,	  jpb_rectypes_sched,
	jpb_rectypes_pt,      jpb_rectypes_truth, jpb_rectypes_decoded,
	jpb_rectypes_flow,
};
#define NDOMAINS (sizeof(domains) / sizeof(domains[0]))

const struct jpb_rectype *jpb_rectype_find(uint16_t type)
{
	size_t d = type >> 8;
	if (d >= NDOMAINS)
		return NULL;
	const struct jpb_rectype *t;
	size_t n;
	domains[d](&t, &n);
	for (size_t i = 0; i < n; i++)
		if (t[i].type == type)
			return &t[i];
	return NULL;
}

size_t jpb_rectype_count(void)
{
	size_t total = 0;
	for (size_t d = 0; d < NDOMAINS; d++) {
		const struct jpb_rectype *t;
		size_t n;
		domains[d](&t, &n);
		total += n;
	}
	return total;
}

const struct jpb_rectype *jpb_rectype_at(size_t index)
{
	for (size_t d = 0; d < NDOMAINS; d++) {
		const struct jpb_rectype *t;
		size_t n;
		domains[d](&t, &n);
		if (index < n)
			return &t[index];
		index -= n;
	}
	return NULL;
}

const struct jpb_rectype *jpb_rectype_by_name(const char *name)
{
	for (size_t i = 0, n = jpb_rectype_count(); i < n; i++) {
		const struct jpb_rectype *t = jpb_rectype_at(i);
		if (strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

static int encode_field(const struct jpb_field *f, const uint8_t *base,
			struct jpb_buf *buf)
{
	const void *p = base + f->offset;
	switch (f->kind) {
	case JPB_F_U8:
		return jpb_buf_u8(buf, *(const uint8_t *)p);
	case JPB_F_U16:
		return jpb_buf_u16(buf, *(const uint16_t *)p);
	case JPB_F_U32:
		return jpb_buf_u32(buf, *(const uint32_t *)p);
	case JPB_F_I32:
		return jpb_buf_u32(buf, (uint32_t) * (const int32_t *)p);
	case JPB_F_U64:
		return jpb_buf_u64(buf, *(const uint64_t *)p);
	case JPB_F_I64:
		return jpb_buf_u64(buf, (uint64_t) * (const int64_t *)p);
	case JPB_F_STR:
		return jpb_buf_str(buf, *(const struct jpb_str *)p);
	case JPB_F_BYTES: {
		const struct jpb_bytes *b = p;
		return jpb_buf_bytes(buf, b->ptr, b->len);
	}
	}
	return jpb_err_internal;
}

int jpb_rec_encode(const struct jpb_rectype *t, const void *rec,
		   struct jpb_buf *buf)
{
	size_t start = buf->len;
	for (size_t i = 0; i < t->nfields; i++) {
		int err = encode_field(&t->fields[i], rec, buf);
		if (err) {
			buf->len = start;
			return err;
		}
	}
	return 0;
}

static int decode_field(const struct jpb_field *f, struct jpb_cur *c,
			uint8_t *base)
{
	void *p = base + f->offset;
	uint32_t v32;
	uint64_t v64;
	int err;
	switch (f->kind) {
	case JPB_F_U8:
		return jpb_cur_u8(c, p);
	case JPB_F_U16:
		return jpb_cur_u16(c, p);
	case JPB_F_U32:
		return jpb_cur_u32(c, p);
	case JPB_F_I32:
		err = jpb_cur_u32(c, &v32);
		if (!err)
			*(int32_t *)p = (int32_t)v32;
		return err;
	case JPB_F_U64:
		return jpb_cur_u64(c, p);
	case JPB_F_I64:
		err = jpb_cur_u64(c, &v64);
		if (!err)
			*(int64_t *)p = (int64_t)v64;
		return err;
	case JPB_F_STR:
		return jpb_cur_str(c, p);
	case JPB_F_BYTES:
		return jpb_cur_bytes(c, p);
	}
	return jpb_err_internal;
}

int jpb_rec_decode(const struct jpb_rectype *t, const void *payload,
		   uint32_t size, void *rec)
{
	struct jpb_cur c = jpb_cur_init(payload, size);
	memset(rec, 0, t->struct_size);
	for (size_t i = 0; i < t->nfields; i++) {
		int err = decode_field(&t->fields[i], &c, rec);
		if (err)
			return err;
	}
	return 0;
}

int jpb_writer_put_rec(struct jpb_writer *w, const struct jpb_rectype *t,
		       uint64_t time_ns, const void *rec,
		       struct jpb_buf *scratch)
{
	jpb_buf_reset(scratch);
	int err = jpb_rec_encode(t, rec, scratch);
	if (err)
		return err;
	if (scratch->len > JPB_MAX_PAYLOAD)
		return jpb_err_invalid;
	return jpb_writer_put(w, t->type, time_ns, scratch->data,
			      (uint32_t)scratch->len);
}
