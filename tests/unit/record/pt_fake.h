/* SPDX-License-Identifier: MIT */
/* What the fake kernel writes in the PT unit tests: one PERF_RECORD_* with
 * the recorder's sample_id layout {pid, tid, time, cpu, res}. */
#ifndef JPBPF_PT_FAKE_H
#define JPBPF_PT_FAKE_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "record/pt/pt.h"

/* Writes the record into P (room for 8 + 8 * NBODY + JPB_PT_SB_ID_SIZE
 * bytes) and returns its length. */
static inline size_t pt_fake_record(uint8_t *p, uint32_t type, uint16_t misc,
				    const uint64_t *body, size_t nbody,
				    uint32_t pid, uint32_t tid, uint64_t time,
				    uint32_t cpu)
{
	size_t len = 8 + 8 * nbody + JPB_PT_SB_ID_SIZE;
	jpb_st32(p, type);
	jpb_st16(p + 4, misc);
	jpb_st16(p + 6, (uint16_t)len);
	for (size_t i = 0; i < nbody; i++)
		jpb_st64(p + 8 + 8 * i, body[i]);
	uint8_t *id = p + 8 + 8 * nbody;
	jpb_st32(id, pid);
	jpb_st32(id + 4, tid);
	jpb_st64(id + 8, time);
	jpb_st32(id + 16, cpu);
	jpb_st32(id + 20, 0);
	return len;
}

#endif /* JPBPF_PT_FAKE_H */
