// SPDX-License-Identifier: MIT
/* Moving one ring's sideband and AUX data into its bundle stream.  No
 * system calls here: pt_record.c maps the areas, tests fake them. */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bundle.h"
#include "records_pt.h"
#include "record/pt/pt.h"

/* The largest pt_aux_data payload: keeps the writer's scratch small and
 * lets a reader resume after a damaged record without losing a whole
 * ring's worth. */
#define CHUNK (1u << 20)
/* Sideband records are at most 64 KiB (u16 size). */
#define SB_MAX 65536u

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int put(struct jpb_pt_ring_view *v, uint16_t type, uint64_t t,
	       const void *rec)
{
	int err = jpb_writer_put_rec(v->w, jpb_rectype_find(type), t, rec,
				     &v->scratch);
	if (err) {
		snprintf(v->errmsg, sizeof(v->errmsg), "pt: writing %s: %s",
			 jpb_rectype_find(type)->name, jpb_errstr(err));
		return jpb_pt_err_bundle;
	}
	return 0;
}

static int loss(struct jpb_pt_ring_view *v, const char *what, uint64_t count,
		uint64_t t)
{
	struct jpb_rec_loss l = { jpb_str_c(what), v->cpu, count, t, t };
	return put(v, JPB_REC_LOSS, t, &l);
}

int jpb_pt_view_begin(struct jpb_pt_ring_view *v)
{
	const struct perf_event_mmap_page *pg = v->user_page;
	struct jpb_rec_pt_ring r = {
		.cpu = v->cpu, .tid = v->tid, .snapshot = !!v->overwrite,
		.cap_user_time_zero = pg->cap_user_time_zero,
		.aux_size = v->aux_size, .data_size = v->data_size,
		.time_zero = pg->time_zero, .time_mult = pg->time_mult,
		.time_shift = pg->time_shift, .config = v->config,
	};
	return put(v, JPB_REC_PT_RING, now_ns(), &r);
}

static int on_aux(struct jpb_pt_ring_view *v, const struct jpb_pt_sb *sb)
{
	int err = 0;
	jpb_pt_stats_aux(&v->st, sb->aux_size, sb->aux_flags);
	/* In overwrite mode the kernel reports every stop (each context
	 * switch) with just OVERWRITE; its offsets say nothing a snapshot
	 * does not, so only the counter keeps it. */
	if (v->overwrite && sb->aux_flags == PERF_AUX_FLAG_OVERWRITE)
		return 0;
	struct jpb_rec_pt_aux_event e = {
		.cpu = sb->cpu, .pid = sb->pid, .tid = sb->tid,
		.aux_offset = sb->aux_offset, .aux_size = sb->aux_size,
		.flags = sb->aux_flags,
	};
	if ((err = put(v, JPB_REC_PT_AUX_EVENT, sb->time, &e)))
		return err;
	/* TRUNCATED: the ring was full and tracing stopped until we made
	 * room, so trace is missing after aux_offset + aux_size. */
	if (sb->aux_flags & PERF_AUX_FLAG_TRUNCATED)
		err = loss(v, "pt-aux-truncated", 1, sb->time);
	if (!err && (sb->aux_flags & PERF_AUX_FLAG_PARTIAL))
		err = loss(v, "pt-aux-partial", 1, sb->time);
	if (!err && (sb->aux_flags & PERF_AUX_FLAG_COLLISION))
		err = loss(v, "pt-aux-collision", 1, sb->time);
	return err;
}

static int on_sideband(struct jpb_pt_ring_view *v, const struct jpb_pt_sb *sb)
{
	switch (sb->type) {
	case PERF_RECORD_AUX:
		return on_aux(v, sb);
	case PERF_RECORD_ITRACE_START: {
		struct jpb_rec_pt_itrace_start r = { sb->cpu, sb->itrace_pid,
						     sb->itrace_tid };
		return put(v, JPB_REC_PT_ITRACE_START, sb->time, &r);
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		int samples = sb->type == PERF_RECORD_LOST_SAMPLES;
		struct jpb_rec_pt_lost r = {
			sb->cpu, samples ? JPB_PT_LOST_SAMPLES : JPB_PT_LOST_RECORDS,
			sb->lost_id, sb->lost };
		if (samples)
			v->st.lost_samples += sb->lost;
		else
			v->st.lost += sb->lost;
		int err = put(v, JPB_REC_PT_LOST, sb->time, &r);
		return err ? err : loss(v, samples ? "pt-samples" : "pt-sideband",
					sb->lost, sb->time);
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		struct jpb_rec_pt_switch r = {
			.cpu = sb->cpu, .pid = sb->pid, .tid = sb->tid,
			.out = !!(sb->misc & PERF_RECORD_MISC_SWITCH_OUT),
			.preempt = !!(sb->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT),
			.np_pid = sb->np_pid, .np_tid = sb->np_tid,
		};
		return put(v, JPB_REC_PT_SWITCH, sb->time, &r);
	}
	}
	return 0; /* other kernel records (e.g. AUX_OUTPUT_HW_ID) */
}

static int drain_sideband(struct jpb_pt_ring_view *v)
{
	struct perf_event_mmap_page *pg = v->user_page;
	static _Thread_local uint8_t tmp[SB_MAX];
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	struct jpb_pt_sb sb;
	int n, err = 0;
	while (!err && (n = jpb_pt_sb_next(v->data, v->data_size, &tail, head, tmp,
				       sizeof(tmp), &sb)) != 0) {
		if (n < 0) {
			/* Lost track of record boundaries: give up on what
			 * is there and say how much. */
			err = loss(v, "pt-sideband-bytes", head - tail, now_ns());
			tail = head;
			break;
		}
		err = on_sideband(v, &sb);
	}
	/* Release: our reads of the records happen before the kernel may
	 * overwrite them. */
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

static int put_data(struct jpb_pt_ring_view *v, uint64_t offset,
		    const uint8_t *p, uint64_t len, uint32_t flags)
{
	for (uint64_t done = 0; done < len;) {
		uint32_t n = (uint32_t)(len - done < CHUNK ? len - done : CHUNK);
		struct jpb_rec_pt_aux_data d = {
			v->cpu, v->tid, offset + done, flags,
			(flags & JPB_PT_DATA_SNAPSHOT) ? v->snapshots : 0,
			{ p + done, n } };
		int err = put(v, JPB_REC_PT_AUX_DATA, now_ns(), &d);
		if (err)
			return err;
		v->st.bytes += n;
		done += n;
	}
	return 0;
}

static int drain_aux(struct jpb_pt_ring_view *v)
{
	struct perf_event_mmap_page *pg = v->user_page;
	uint64_t head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->aux_tail;
	struct jpb_pt_span sp[2];
	int err = 0;
	if (head - tail > v->aux_size) {
		/* Cannot happen without overwrite mode: the kernel stops
		 * (TRUNCATED) rather than pass aux_tail.  If it does, the
		 * oldest bytes are gone: count them, keep the rest. */
		uint64_t gap = head - tail - v->aux_size;
		v->st.aux_gap_bytes += gap;
		if ((err = loss(v, "pt-aux-bytes", gap, now_ns())))
			return err;
		tail = head - v->aux_size;
	}
	int n = jpb_pt_ring_spans(v->aux_size, tail, head, sp);
	uint64_t off = tail;
	for (int i = 0; !err && i < n; i++) {
		err = put_data(v, off, v->aux + sp[i].off, sp[i].len, 0);
		off += sp[i].len;
	}
	if (!err)
		__atomic_store_n(&pg->aux_tail, head, __ATOMIC_RELEASE);
	return err;
}

int jpb_pt_view_drain(struct jpb_pt_ring_view *v)
{
	int err = drain_sideband(v);
	if (!err && !v->overwrite && v->aux)
		err = drain_aux(v);
	return err;
}

int jpb_pt_view_snapshot(struct jpb_pt_ring_view *v, uint64_t want)
{
	struct perf_event_mmap_page *pg = v->user_page;
	uint64_t head = __atomic_load_n(&pg->aux_head, __ATOMIC_ACQUIRE);
	uint64_t h = head & (v->aux_size - 1), o = v->snap_old & (v->aux_size - 1);
	struct jpb_pt_span sp[2];
	if (!v->overwrite || !v->aux)
		return jpb_pt_err_invalid;
	v->wrapped = v->wrapped || jpb_pt_snapshot_wrapped(v->aux, v->aux_size, head);
	uint64_t valid = v->wrapped ? v->aux_size :
		(h >= o ? h - o : v->aux_size - o + h);
	int n = jpb_pt_snapshot_spans(v->aux_size, head, v->snap_old, v->wrapped,
				  want, sp);
	if (n < 0)
		return n;
	v->snapshots++;
	v->st.snapshots++;
	uint32_t flags = JPB_PT_DATA_SNAPSHOT |
			 (v->wrapped ? JPB_PT_DATA_WRAPPED : 0) |
			 (valid > want ? JPB_PT_DATA_CLIPPED : 0);
	int err = 0;
	for (int i = 0; !err && i < n; i++)
		err = put_data(v, sp[i].off, v->aux + sp[i].off, sp[i].len, flags);
	v->snap_old = h;
	return err;
}
