/* SPDX-License-Identifier: MIT */
/*
 * Simulator-private records (docs/SIMULATOR.md): what only an oracle can
 * know.  Never read by the decoder.
 *   stream "sim/itruth/cpuN", SIM_REC_ITRUTH: packed little-endian u64,
 *     one per executed instruction in the order the CPU ran them; bit 63
 *     marks where tracing resumes after lost data (after OVF); a last
 *     entry of exactly SIM_ITRUTH_LOST_END says the trace ends in a loss.
 *   stream "sim/lost", SIM_REC_LOST: u32 tid, u32 nstid, u64 first event,
 *     u64 count: truth events (indexes in the thread's sequence) whose
 *     trace fell into lost data.
 *   stream "sim/entries/cpuN", SIM_REC_ENTRIES: packed little-endian u32,
 *     the method id of each interpreted entry (zerolocals entries, whose
 *     locals loop the CPU ran) in the order the CPU ran them.
 */
#ifndef SIM_SIMREC_H
#define SIM_SIMREC_H

#define SIM_REC_ITRUTH 0x04f0
#define SIM_REC_LOST 0x04f1
#define SIM_REC_ENTRIES 0x04f2
#define SIM_ITRUTH_RESUME (1ull << 63)
#define SIM_ITRUTH_LOST_END (1ull << 62)

#endif
