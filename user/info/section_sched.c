// SPDX-License-Identifier: MIT
/* `jpbpf info` section "sched": what the BPF recorder wrote. */
#include <stdlib.h>
#include <string.h>

#include "info.h"
#include "records.h"
#include "records_sched.h"

/* tid -> tgid, open addressing; key 0 is "empty" (tid 0 is idle and is
 * never stored). */
struct tidmap {
	uint32_t *tid, *tgid;
	size_t cap, len;
};

static int tidmap_put(struct tidmap *m, uint32_t tid, uint32_t tgid)
{
	if (!tid)
		return 0;
	if (2 * (m->len + 1) > m->cap) {
		struct tidmap n = { 0 };
		n.cap = m->cap ? m->cap * 2 : 256;
		n.tid = calloc(n.cap, sizeof(*n.tid));
		n.tgid = calloc(n.cap, sizeof(*n.tgid));
		if (!n.tid || !n.tgid) {
			free(n.tid);
			free(n.tgid);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->tid[i])
				tidmap_put(&n, m->tid[i], m->tgid[i]);
		free(m->tid);
		free(m->tgid);
		*m = n;
	}
	size_t i = (tid * 2654435761u) & (m->cap - 1);
	while (m->tid[i] && m->tid[i] != tid)
		i = (i + 1) & (m->cap - 1);
	if (!m->tid[i])
		m->len++;
	m->tid[i] = tid;
	m->tgid[i] = tgid;
	return 0;
}

#define MAX_CPUS 4096

struct sched_state {
	int seen; /* a "sched" stream exists */
	uint64_t switches, forks, exits, execs, pairs, lost;
	struct tidmap tids;
	uint8_t cpus[MAX_CPUS / 8];
};

static void *sched_alloc(void)
{
	return calloc(1, sizeof(struct sched_state));
}

static void cpu_seen(struct sched_state *s, uint32_t cpu)
{
	if (cpu < MAX_CPUS)
		s->cpus[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
}

static void on_switch(struct sched_state *s, const struct jpb_record *rec)
{
	struct jpb_rec_sched_switch r;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
			   rec->size, &r))
		return;
	s->switches++;
	cpu_seen(s, r.cpu);
	if (r.traced & 1)
		tidmap_put(&s->tids, r.prev_tid, r.prev_tgid);
	if (r.traced & 2)
		tidmap_put(&s->tids, r.next_tid, r.next_tgid);
}

static void on_loss(struct sched_state *s, const struct jpb_record *rec)
{
	struct jpb_rec_loss l;
	if (jpb_rec_decode(jpb_rectype_find(rec->type), rec->payload,
			   rec->size, &l) == 0)
		s->lost += l.count;
}

static void sched_record(void *state, const char *stream,
			 const struct jpb_record *rec)
{
	struct sched_state *s = state;
	if (strcmp(stream, "sched") != 0)
		return;
	s->seen = 1;
	switch (rec->type) {
	case JPB_REC_SCHED_SWITCH: on_switch(s, rec); break;
	case JPB_REC_SCHED_FORK: s->forks++; break;
	case JPB_REC_SCHED_EXIT: s->exits++; break;
	case JPB_REC_SCHED_EXEC: s->execs++; break;
	case JPB_REC_CLOCK_PAIR: s->pairs++; break;
	case JPB_REC_LOSS: on_loss(s, rec); break;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The traced tids (the filter's side of each switch), sorted. */
static json_t *tid_list(struct sched_state *s)
{
	uint32_t *v = malloc((s->tids.len + 1) * sizeof(*v));
	size_t n = 0;
	json_t *a = json_array();
	if (!v)
		return a;
	for (size_t i = 0; i < s->tids.cap; i++)
		if (s->tids.tid[i])
			v[n++] = s->tids.tid[i];
	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	free(v);
	return a;
}

static json_t *sched_finish(void *state, json_t *meta)
{
	struct sched_state *s = state;
	(void)meta;
	if (!s->seen)
		return NULL;
	json_t *o = json_object(), *cpus = json_array();
	for (uint32_t c = 0; c < MAX_CPUS; c++)
		if (s->cpus[c / 8] & (1u << (c % 8)))
			json_array_append_new(cpus, json_integer(c));
	json_t *tids = tid_list(s);
	uint64_t events = s->switches + s->forks + s->exits + s->execs;
	json_object_set_new(o, "events", json_integer((json_int_t)events));
	json_object_set_new(o, "switches", json_integer((json_int_t)s->switches));
	json_object_set_new(o, "forks", json_integer((json_int_t)s->forks));
	json_object_set_new(o, "exits", json_integer((json_int_t)s->exits));
	json_object_set_new(o, "execs", json_integer((json_int_t)s->execs));
	json_object_set_new(o, "clock_pairs", json_integer((json_int_t)s->pairs));
	json_object_set_new(o, "lost", json_integer((json_int_t)s->lost));
	json_object_set_new(o, "cpus", json_integer((json_int_t)json_array_size(cpus)));
	json_object_set_new(o, "cpu_list", cpus);
	json_object_set_new(o, "tids", json_integer((json_int_t)json_array_size(tids)));
	json_object_set_new(o, "tid_list", tids);
	return o;
}

static void sched_free(void *state)
{
	struct sched_state *s = state;
	free(s->tids.tid);
	free(s->tids.tgid);
	free(s);
}

const struct info_section info_section_sched = {
	.name = "sched",
	.alloc = sched_alloc,
	.record = sched_record,
	.finish = sched_finish,
	.free = sched_free,
};
