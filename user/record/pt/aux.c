// SPDX-License-Identifier: MIT
/* Ring arithmetic of the perf data and AUX areas, on plain memory so that
 * tests can feed fake rings.  Pointers are the kernel's free-running
 * data_head/data_tail and aux_head/aux_tail; the offset in a ring of SIZE
 * bytes (a power of two) is the pointer & (SIZE - 1). */
#include <linux/perf_event.h>
#include <string.h>

#include "codec.h"
#include "record/pt/pt.h"

_Static_assert(JPB_PT_AUX_TRUNCATED == PERF_AUX_FLAG_TRUNCATED, "uapi");
_Static_assert(JPB_PT_AUX_OVERWRITE == PERF_AUX_FLAG_OVERWRITE, "uapi");
_Static_assert(JPB_PT_AUX_PARTIAL == PERF_AUX_FLAG_PARTIAL, "uapi");
_Static_assert(JPB_PT_AUX_COLLISION == PERF_AUX_FLAG_COLLISION, "uapi");

int jpb_pt_ring_spans(uint64_t size, uint64_t tail, uint64_t head,
		  struct jpb_pt_span sp[2])
{
	uint64_t len = head - tail; /* wraps correctly on u64 overflow */
	if (!size || (size & (size - 1)) || len > size)
		return jpb_pt_err_overflow;
	if (!len)
		return 0;
	uint64_t off = tail & (size - 1);
	uint64_t first = size - off < len ? size - off : len;
	sp[0].off = off;
	sp[0].len = first;
	if (first == len)
		return 1;
	sp[1].off = 0;
	sp[1].len = len - first;
	return 2;
}

int64_t jpb_pt_ring_copy(const uint8_t *base, uint64_t size, uint64_t tail,
		     uint64_t head, uint8_t *dst)
{
	struct jpb_pt_span sp[2];
	int n = jpb_pt_ring_spans(size, tail, head, sp);
	if (n < 0)
		return n;
	uint64_t done = 0;
	for (int i = 0; i < n; i++) {
		memcpy(dst + done, base + sp[i].off, sp[i].len);
		done += sp[i].len;
	}
	return (int64_t)done;
}

void jpb_pt_stats_aux(struct jpb_pt_stats *st, uint64_t size, uint64_t flags)
{
	(void)size;
	st->aux_records++;
	st->truncated += !!(flags & JPB_PT_AUX_TRUNCATED);
	st->overwrite += !!(flags & JPB_PT_AUX_OVERWRITE);
	st->partial += !!(flags & JPB_PT_AUX_PARTIAL);
	st->collision += !!(flags & JPB_PT_AUX_COLLISION);
}

void jpb_pt_stats_add(struct jpb_pt_stats *sum, const struct jpb_pt_stats *one)
{
	sum->bytes += one->bytes;
	sum->aux_records += one->aux_records;
	sum->truncated += one->truncated;
	sum->partial += one->partial;
	sum->collision += one->collision;
	sum->overwrite += one->overwrite;
	sum->lost += one->lost;
	sum->lost_samples += one->lost_samples;
	sum->aux_gap_bytes += one->aux_gap_bytes;
	sum->snapshots += one->snapshots;
}

/* Bytes of the fixed body of TYPE after the header, or 0 if none. */
static size_t body_size(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_AUX: return 24;
	case PERF_RECORD_ITRACE_START: return 8;
	case PERF_RECORD_LOST: return 16;
	case PERF_RECORD_LOST_SAMPLES: return 8;
	case PERF_RECORD_SWITCH_CPU_WIDE: return 8;
	case PERF_RECORD_SWITCH: return 0;
	}
	return 0;
}

int jpb_pt_sb_parse(const uint8_t *rec, size_t len, struct jpb_pt_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
	if (len < 8 || jpb_le16(rec + 6) != len)
		return jpb_pt_err_overflow;
	sb->type = jpb_le32(rec);
	sb->misc = jpb_le16(rec + 4);
	size_t body = body_size(sb->type);
	int known = body || sb->type == PERF_RECORD_SWITCH;
	if (!known)
		return 0;
	if (len < 8 + body + JPB_PT_SB_ID_SIZE)
		return jpb_pt_err_overflow;
	const uint8_t *b = rec + 8, *id = rec + len - JPB_PT_SB_ID_SIZE;
	sb->pid = jpb_le32(id);
	sb->tid = jpb_le32(id + 4);
	sb->time = jpb_le64(id + 8);
	sb->cpu = jpb_le32(id + 16);
	switch (sb->type) {
	case PERF_RECORD_AUX:
		sb->aux_offset = jpb_le64(b);
		sb->aux_size = jpb_le64(b + 8);
		sb->aux_flags = jpb_le64(b + 16);
		break;
	case PERF_RECORD_ITRACE_START:
		sb->itrace_pid = jpb_le32(b);
		sb->itrace_tid = jpb_le32(b + 4);
		break;
	case PERF_RECORD_LOST:
		sb->lost_id = jpb_le64(b);
		sb->lost = jpb_le64(b + 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		sb->lost = jpb_le64(b);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		sb->np_pid = jpb_le32(b);
		sb->np_tid = jpb_le32(b + 4);
		break;
	}
	return 0;
}

int jpb_pt_sb_next(const uint8_t *base, uint64_t size, uint64_t *tail,
	       uint64_t head, uint8_t *tmp, size_t tmpsize, struct jpb_pt_sb *sb)
{
	uint64_t avail = head - *tail;
	uint8_t hdr[8];
	if (!avail)
		return 0;
	if (avail < sizeof(hdr) || avail > size)
		return jpb_pt_err_overflow;
	jpb_pt_ring_copy(base, size, *tail, *tail + sizeof(hdr), hdr);
	uint16_t len = jpb_le16(hdr + 6);
	/* Records are 8-byte aligned and never straddle what the kernel
	 * published: anything else means we lost track of the ring. */
	if (len < sizeof(hdr) || (len & 7) || len > avail || len > tmpsize)
		return jpb_pt_err_overflow;
	uint64_t off = *tail & (size - 1);
	const uint8_t *rec = base + off;
	if (off + len > size) {
		jpb_pt_ring_copy(base, size, *tail, *tail + len, tmp);
		rec = tmp;
	}
	int err = jpb_pt_sb_parse(rec, len, sb);
	if (err)
		return err;
	*tail += len;
	return 1;
}
