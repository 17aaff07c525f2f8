// SPDX-License-Identifier: MIT
/* Snapshot (flight-recorder) extraction from an AUX ring in overwrite
 * mode.  The kernel publishes only aux_head, an offset inside the ring
 * for Intel PT; the ring starts zero-filled and is never consumed, so
 * whether it has wrapped is read from the data itself. */
#include <string.h>

#include "record/pt/pt.h"

#define WRAP_CHECK 4096u

int jpb_pt_snapshot_wrapped(const uint8_t *base, uint64_t size, uint64_t head)
{
	uint64_t off = head & (size - 1);
	uint64_t from = size > WRAP_CHECK ? size - WRAP_CHECK : 0;
	if (from < off)
		from = off;
	for (uint64_t i = from; i < size; i++)
		if (base[i])
			return 1;
	return 0;
}

int jpb_pt_snapshot_spans(uint64_t size, uint64_t head, uint64_t old,
		      int wrapped, uint64_t want, struct jpb_pt_span sp[2])
{
	if (!size || (size & (size - 1)))
		return jpb_pt_err_invalid;
	uint64_t h = head & (size - 1), o = old & (size - 1);
	uint64_t valid;
	if (wrapped)
		valid = size;
	else
		valid = h >= o ? h - o : size - o + h;
	if (want < valid)
		valid = want;
	/* Express the newest VALID bytes as free-running [h' - valid, h')
	 * with h' = h + size so that the subtraction cannot underflow. */
	return jpb_pt_ring_spans(size, h + size - valid, h + size, sp);
}

int64_t jpb_pt_find_psb(const uint8_t *buf, uint64_t len, uint64_t start)
{
	/* PSB is 02 82 repeated eight times (16 bytes). */
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82 };
	for (uint64_t i = start; i + sizeof(psb) <= len; i++) {
		const uint8_t *p = memchr(buf + i, 0x02, len - i);
		if (!p)
			break;
		i = (uint64_t)(p - buf);
		if (i + sizeof(psb) <= len && !memcmp(p, psb, sizeof(psb)))
			return (int64_t)i;
	}
	return -1;
}
