// SPDX-License-Identifier: MIT
/*
 * Test helper for the record_*.sh suites: reads a bundle's "sched" (and
 * "jvm") streams through the bundle library.  Compiled by record_lib.sh
 * at test time.
 *
 *   record_check verify DIR PID   scheduling invariants; prints key=value
 *   record_check tids DIR PID     distinct traced host tids of PID in switches
 *   record_check forks DIR PID    new thread tids (sched_fork, same tgid)
 *   record_check usdt DIR         "addr size class.method sig time_ns" per load
 *   record_check nmethods DIR     "addr size flags time_ns" per agent nmethod_load
 *   record_check threads DIR [STREAM]
 *                                 "tid nstid event name" per thread record
 *                                 (STREAM: sched unless given)
 *   record_check notes DIR        "level source text" per note
 *   record_check life DIR         "fork PTID PTGID CTID CTGID COMM",
 *                                 "exit TID TGID CODE COMM",
 *                                 "exec TID TGID OLDTID FILENAME" per event
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "records.h"
#include "records_jvm.h"
#include "records_sched.h"

#define MAX_TID (1u << 22)
#define MAX_CPU 1024

typedef void (*rec_fn)(const struct jpb_record *rec, void *arg);

static int each(const char *dir, const char *stream, rec_fn fn, void *arg)
{
	struct jpb_bundle *b;
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_bundle_open(&b, dir) || jpb_reader_open(b, stream, &r)) {
		fprintf(stderr, "record_check: %s: cannot open stream %s\n", dir,
			stream);
		return 1;
	}
	int err;
	while ((err = jpb_reader_next(r, &rec)) == 0)
		fn(&rec, arg);
	if (err != jpb_err_eos)
		fprintf(stderr, "record_check: %s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	jpb_bundle_free(b);
	return err != jpb_err_eos;
}

static int decode(const struct jpb_record *rec, void *out)
{
	return jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
			      rec->size, out);
}

struct sw {
	uint64_t t;
	struct jpb_rec_sched_switch r;
};

struct verify {
	uint32_t pid;
	struct sw *v;
	size_t n, cap;
	uint64_t lost;
};

static void collect(const struct jpb_record *rec, void *arg)
{
	struct verify *s = arg;
	if (rec->type == JPB_REC_LOSS) {
		struct jpb_rec_loss l;
		if (!decode(rec, &l))
			s->lost += l.count;
	}
	if (rec->type != JPB_REC_SCHED_SWITCH)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			exit(3);
	}
	s->v[s->n].t = rec->time_ns;
	if (decode(rec, &s->v[s->n].r) == 0)
		s->n++;
}

static int by_time(const void *a, const void *b)
{
	const struct sw *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int verify(const char *dir, uint32_t pid)
{
	struct verify s = { .pid = pid };
	if (each(dir, "sched", collect, &s))
		return 1;
	/* Records come in ring buffer order; the checks need time order. */
	qsort(s.v, s.n, sizeof(*s.v), by_time);
	int16_t *on = malloc(MAX_TID * sizeof(*on)); /* tid -> cpu + 1, or 0 */
	uint32_t last_next[MAX_CPU] = { 0 };
	uint8_t seen_cpu[MAX_CPU] = { 0 };
	uint64_t foreign = 0, broken = 0, twice = 0, tids = 0, badbits = 0;
	uint8_t *tid_seen = calloc(MAX_TID, 1);
	if (!on || !tid_seen)
		return 3;
	memset(on, 0, MAX_TID * sizeof(*on));
	for (size_t i = 0; i < s.n; i++) {
		const struct jpb_rec_sched_switch *r = &s.v[i].r;
		uint32_t c = r->cpu % MAX_CPU;
		int prev_ours = r->prev_tgid == pid, next_ours = r->next_tgid == pid;
		if ((uint32_t)(prev_ours | next_ours << 1) != r->traced && badbits++ < 5)
			printf("# switch %u->%u: traced bits %u\n", r->prev_tid,
			       r->next_tid, r->traced);
		if (!prev_ours && !next_ours && foreign++ < 5)
			printf("# foreign switch %u->%u (tgids %u, %u) on cpu %u\n",
			       r->prev_tid, r->next_tid, r->prev_tgid,
			       r->next_tgid, c);
		/* A traced thread switched in stays until a recorded
		 * switch-out on the same CPU. */
		if (seen_cpu[c] && last_next[c] && last_next[c] != r->prev_tid &&
		    broken++ < 5)
			printf("# cpu %u: %u was in, but %u switched out at %" PRIu64 "\n",
			       c, last_next[c], r->prev_tid, s.v[i].t);
		seen_cpu[c] = 1;
		last_next[c] = next_ours ? r->next_tid : 0;
		if (prev_ours && r->prev_tid < MAX_TID)
			on[r->prev_tid] = 0;
		if (next_ours && r->next_tid < MAX_TID) {
			if (on[r->next_tid] && on[r->next_tid] != (int16_t)(c + 1) &&
			    twice++ < 5)
				printf("# tid %u in on cpus %d and %u at %" PRIu64 "\n",
				       r->next_tid, on[r->next_tid] - 1, c, s.v[i].t);
			on[r->next_tid] = (int16_t)(c + 1);
		}
		uint32_t tt[2] = { prev_ours ? r->prev_tid : 0,
				   next_ours ? r->next_tid : 0 };
		for (int k = 0; k < 2; k++)
			if (tt[k] && tt[k] < MAX_TID && !tid_seen[tt[k]]) {
				tid_seen[tt[k]] = 1;
				tids++;
			}
	}
	printf("switches=%zu tids=%" PRIu64 " badbits=%" PRIu64 " foreign=%" PRIu64
	       " inconsistent=%" PRIu64 " double_in=%" PRIu64 " lost=%" PRIu64 "\n",
	       s.n, tids, badbits, foreign, broken, twice, s.lost);
	free(on);
	free(tid_seen);
	free(s.v);
	return 0;
}

static void print_tids(const struct jpb_record *rec, void *arg)
{
	uint8_t *seen = ((uint8_t **)arg)[0];
	uint32_t pid = *((uint32_t **)arg)[1];
	struct jpb_rec_sched_switch r;
	if (rec->type != JPB_REC_SCHED_SWITCH || decode(rec, &r))
		return;
	/* Only the side the kernel filter traced: the other side of a
	 * switch may be any task. */
	uint32_t t[2] = { (r.traced & 1) && r.prev_tgid == pid ? r.prev_tid : 0,
			  (r.traced & 2) && r.next_tgid == pid ? r.next_tid : 0 };
	for (int k = 0; k < 2; k++)
		if (t[k] && t[k] < MAX_TID && !seen[t[k]]) {
			seen[t[k]] = 1;
			printf("%u\n", t[k]);
		}
}

static void print_forks(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_sched_fork f;
	if (rec->type == JPB_REC_SCHED_FORK && !decode(rec, &f) &&
	    f.child_tgid == *(uint32_t *)arg)
		printf("%u\n", f.child_tid);
}

static void print_usdt(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_usdt_method m;
	(void)arg;
	if (rec->type == JPB_REC_USDT_METHOD_LOAD && !decode(rec, &m))
		printf("%" PRIx64 " %u %.*s.%.*s %.*s %" PRIu64 "\n", m.code_addr,
		       m.code_size, (int)m.class_name.len, m.class_name.ptr,
		       (int)m.method_name.len, m.method_name.ptr,
		       (int)m.signature.len, m.signature.ptr, rec->time_ns);
}

static void print_nmethods(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_jvm_nmethod_load m;
	(void)arg;
	if (rec->type == JPB_REC_JVM_NMETHOD_LOAD && !decode(rec, &m))
		printf("%" PRIx64 " %" PRIu64 " %u %" PRIu64 "\n", m.code_addr,
		       m.code_size, m.flags, rec->time_ns);
}

static void print_threads(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_thread t;
	(void)arg;
	if (rec->type == JPB_REC_THREAD && !decode(rec, &t))
		printf("%u %u %u %.*s\n", t.tid, t.nstid, t.event,
		       (int)t.name.len, t.name.ptr);
}

static void print_notes(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_note n;
	(void)arg;
	if (rec->type == JPB_REC_NOTE && !decode(rec, &n))
		printf("%u %.*s %.*s\n", n.level, (int)n.source.len,
		       n.source.ptr, (int)n.text.len, n.text.ptr);
}

static void print_life(const struct jpb_record *rec, void *arg)
{
	struct jpb_rec_sched_fork f;
	struct jpb_rec_sched_exit x;
	struct jpb_rec_sched_exec e;
	(void)arg;
	if (rec->type == JPB_REC_SCHED_FORK && !decode(rec, &f))
		printf("fork %u %u %u %u %.*s\n", f.parent_tid, f.parent_tgid,
		       f.child_tid, f.child_tgid, (int)f.comm.len, f.comm.ptr);
	if (rec->type == JPB_REC_SCHED_EXIT && !decode(rec, &x))
		printf("exit %u %u %d %.*s\n", x.tid, x.tgid, x.exit_code,
		       (int)x.comm.len, x.comm.ptr);
	if (rec->type == JPB_REC_SCHED_EXEC && !decode(rec, &e))
		printf("exec %u %u %u %.*s\n", e.tid, e.tgid, e.old_tid,
		       (int)e.filename.len, e.filename.ptr);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: record_check CMD DIR [PID]\n");
		return 2;
	}
	const char *cmd = argv[1], *dir = argv[2];
	uint32_t pid = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 0;
	if (!strcmp(cmd, "verify"))
		return verify(dir, pid);
	if (!strcmp(cmd, "tids")) {
		uint8_t *seen = calloc(MAX_TID, 1);
		uint32_t *p = &pid;
		void *arg[2] = { seen, p };
		int rc = each(dir, "sched", print_tids, arg);
		free(seen);
		return rc;
	}
	if (!strcmp(cmd, "forks"))
		return each(dir, "sched", print_forks, &pid);
	if (!strcmp(cmd, "usdt"))
		return each(dir, "sched", print_usdt, NULL);
	if (!strcmp(cmd, "nmethods"))
		return each(dir, "jvm", print_nmethods, NULL);
	if (!strcmp(cmd, "threads"))
		return each(dir, argc > 3 ? argv[3] : "sched", print_threads, NULL);
	if (!strcmp(cmd, "life"))
		return each(dir, "sched", print_life, NULL);
	if (!strcmp(cmd, "notes"))
		return each(dir, "sched", print_notes, NULL);
	fprintf(stderr, "record_check: unknown command %s\n", cmd);
	return 2;
}
