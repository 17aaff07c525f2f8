// SPDX-License-Identifier: MIT
#include "sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simrec.h"
#include "util.h"

static int code_active(void *ctx, const struct nmethod *nm)
{
	const struct sim *s = ctx;
	for (size_t i = 0; i < s->nthr; i++)
		for (size_t k = 0; k < s->thr[i].nfr; k++)
			if (s->thr[i].fr[k].nm == nm)
				return 1;
	return 0;
}

static int code_reusable(void *ctx, uint64_t freed_ns)
{
	const struct sim *s = ctx;
	/* every CPU, tracing or not: one that is idle now may run the new
	 * code later with no TSC in between */
	for (unsigned c = 0; c < s->o.cpus; c++)
		if (ptenc_last_tsc_ns(s->cpus[c].pe) <= s->o.start_ns + freed_ns)
			return 0;
	return s->o.pt.tsc;
}

int sim_init(struct sim *s, const struct sim_opts *o, const struct truth *t)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->t = t;
	s->rng.s = o->seed;
	interp_build(&s->in, o->jit.osr);
	struct jit_env env = { s, code_active, code_reusable };
	s->jit = jit_new(&o->jit, t, &env);
	s->cpus = xcalloc(o->cpus, sizeof(*s->cpus));
	s->cpu_events = xcalloc(o->cpus, sizeof(uint64_t));
	for (unsigned i = 0; i < o->cpus; i++) {
		s->cpus[i].id = i;
		s->cpus[i].cur = -1;
		/* 2 GHz TSC counting since boot, like CLOCK_MONOTONIC */
		s->cpus[i].pe = ptenc_new(&o->pt, 2u << 16);
		s->cpus[i].now = 0;
		s->cpus[i].base_ns = o->start_ns;
		ptenc_time(s->cpus[i].pe, o->start_ns);
	}
	s->nthr = t->nthreads;
	s->thr = xcalloc(s->nthr, sizeof(*s->thr));
	for (size_t i = 0; i < s->nthr; i++) {
		struct sim_thr *th = &s->thr[i];
		th->idx = i;
		th->tt = &t->threads[i];
		th->tid = th->tt->tid ? th->tt->tid : o->pid + 1 + (uint32_t)i;
		th->prev_op = -1;
		th->last_cpu = -1;
		/* threads start staggered, 20-120 us apart */
		th->ready_ns = i ? s->thr[i - 1].ready_ns + 20000 +
					   rng_below(&s->rng, 100000)
				 : 0;
		th->start_ns = th->ready_ns;
		th->done = th->tt->n == 0;
		exec_thread_begin(s, th);
	}
	return 0;
}

void sim_fini(struct sim *s)
{
	for (unsigned i = 0; s->cpus && i < s->o.cpus; i++) {
		ptenc_free(s->cpus[i].pe);
		jpb_buf_fini(&s->cpus[i].itruth);
		jpb_buf_fini(&s->cpus[i].entries);
		if (s->plan)
			free(s->plan[i].win);
	}
	for (size_t i = 0; i < s->nthr; i++) {
		free(s->thr[i].ms);
		free(s->thr[i].fr);
		free(s->thr[i].lost);
	}
	free(s->thr);
	free(s->cpus);
	free(s->plan);
	free(s->sev);
	free(s->cpu_events);
	jit_free(s->jit);
	interp_fini(&s->in);
	memset(s, 0, sizeof(*s));
}

/* Times in the sched records are PT-clock (monotonic) nanoseconds; the
 * writer adds the BPF clock's jitter. */
static void sched_rec(struct sim *s, struct sim_cpu *c, uint32_t prev,
		      uint32_t next, uint32_t preempt, uint64_t state)
{
	GROW(s->sev, s->nsev, s->csev);
	s->sev[s->nsev++] = (struct sched_ev){ s->o.start_ns + c->now, c->id,
					       prev, next, preempt, state };
}

static void set_time(struct sim_cpu *c, uint64_t now, uint64_t start)
{
	c->now = now;
	ptenc_time(c->pe, start + now);
}

static long pick_thread(struct sim *s, struct sim_cpu *c, uint64_t *earliest)
{
	long best = -1;
	*earliest = UINT64_MAX;
	for (size_t i = 0; i < s->nthr; i++) {
		struct sim_thr *th = &s->thr[i];
		if (th->done)
			continue;
		if (th->ready_ns < *earliest)
			*earliest = th->ready_ns;
		if (th->ready_ns > c->now)
			continue;
		/* prefer the thread that last ran here (cache affinity) */
		if (best < 0 || (th->last_cpu == (long)c->id &&
				 s->thr[best].last_cpu != (long)c->id))
			best = (long)i;
	}
	return best;
}

/* Apply the --loss plan before bytecode event number N of CPU C. */
static void plan_step(struct sim *s, struct sim_cpu *c, uint64_t n)
{
	if (!s->plan)
		return;
	struct loss_plan *p = &s->plan[c->id];
	while (p->next < p->n && n >= p->win[p->next][0] + p->win[p->next][1])
		p->next++;
	ptenc_force_drop(c->pe, p->next < p->n && n >= p->win[p->next][0]);
}

static void mark_lost(struct sim_thr *th, uint64_t ev)
{
	if (th->nlost && th->lost[th->nlost - 1][0] + th->lost[th->nlost - 1][1] == ev) {
		th->lost[th->nlost - 1][1]++;
		return;
	}
	GROW(th->lost, th->nlost, th->clost);
	th->lost[th->nlost][0] = ev;
	th->lost[th->nlost][1] = 1;
	th->nlost++;
}

static void one_event(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	const struct jpb_truth_event *e = &th->tt->ev[th->pos];
	int bc = e->kind == JPB_TRUTH_BYTECODE;
	if (bc)
		plan_step(s, c, s->cpu_events[c->id]);
	uint64_t losses = ptenc_losses(c->pe);
	int lost = ptenc_dropping(c->pe);
	size_t pos = th->pos;
	exec_event(s, c, th);
	lost |= ptenc_dropping(c->pe) || ptenc_losses(c->pe) != losses;
	if (bc) {
		s->cpu_events[c->id]++;
		if (lost) {
			mark_lost(th, pos);
			th->lost_bytecodes++;
		}
	}
}

/* A switch-out is written when the CPU's next task is known: the next
 * thread if it starts at once, else the idle task. */
static void flush_out(struct sim *s, struct sim_cpu *c, uint32_t next)
{
	if (!c->out_tid)
		return;
	uint64_t now = c->now;
	c->now = c->out_ns;
	sched_rec(s, c, c->out_tid, next, c->out_preempt, c->out_state);
	c->now = now;
	c->out_tid = 0;
}

static void switch_out(struct sim *s, struct sim_cpu *c, struct sim_thr *th,
		       uint32_t preempt, uint64_t state)
{
	(void)s;
	c->out_tid = th->tid;
	c->out_ns = c->now;
	c->out_preempt = preempt;
	c->out_state = state;
	c->cur = -1;
}

static int others_ready(const struct sim *s, const struct sim_thr *th,
			uint64_t now)
{
	for (size_t i = 0; i < s->nthr; i++)
		if (&s->thr[i] != th && !s->thr[i].done && s->thr[i].ready_ns <= now)
			return 1;
	return 0;
}

/* From the interrupt or system call that stops tracing to the switch:
 * the kernel takes time, so the thread's last traced instruction is
 * always before its switch-out (a thread resumed by a runtime call right
 * at a slice's end would otherwise share the switch's timestamp). */
static void kernel_path(struct sim *s, struct sim_cpu *c)
{
	set_time(c, c->now + 200, s->o.start_ns);
}

static void run_slice(struct sim *s, struct sim_cpu *c, struct sim_thr *th)
{
	if (c->out_tid && c->out_ns == c->now) {
		flush_out(s, c, th->tid);
	} else {
		flush_out(s, c, 0);
		sched_rec(s, c, 0, th->tid, 0, 0);
	}
	c->cur = (long)th->idx;
	th->last_cpu = (long)c->id;
	exec_switch_in(s, c, th);
	uint64_t q = s->o.quantum_ns;
	int block = 0;
	for (;;) {
		uint64_t end = c->now + q / 2 + rng_below(&s->rng, q + 1);
		while (th->pos < th->tt->n && c->now < end)
			one_event(s, c, th);
		if (th->pos == th->tt->n)
			break;
		/* at each slice end the thread may block; if not, it is
		 * preempted only when another thread waits for a CPU */
		if ((block = rng_unit(&s->rng) < s->o.block_prob) ||
		    others_ready(s, th, c->now))
			break;
	}
	if (th->pos == th->tt->n) {
		exec_thread_end(s, c, th);
		kernel_path(s, c);
		th->done = 1;
		th->end_ns = c->now;
		switch_out(s, c, th, 0, 0x10 /* EXIT_DEAD */);
		return;
	}
	exec_switch_out(s, c, th);
	kernel_path(s, c);
	if (block) {
		th->ready_ns = c->now + 1000 + rng_below(&s->rng, s->o.block_max_ns);
		switch_out(s, c, th, 0, 1 /* TASK_INTERRUPTIBLE */);
	} else {
		th->ready_ns = c->now;
		switch_out(s, c, th, 1, 0);
	}
}

void sim_run(struct sim *s)
{
	for (;;) {
		/* the CPU whose clock is earliest; ties broken at random, so
		 * a waking thread lands on any idle CPU */
		struct sim_cpu *c = &s->cpus[0];
		unsigned ties = 1;
		for (unsigned i = 1; i < s->o.cpus; i++) {
			if (s->cpus[i].now < c->now) {
				c = &s->cpus[i];
				ties = 1;
			} else if (s->cpus[i].now == c->now &&
				   rng_below(&s->rng, ++ties) == 0) {
				c = &s->cpus[i];
			}
		}
		uint64_t earliest;
		long t = pick_thread(s, c, &earliest);
		if (t < 0) {
			if (earliest == UINT64_MAX)
				break; /* every thread is done */
			/* idle until the earliest thread is ready, but never
			 * past another CPU that could take it first */
			set_time(c, earliest > c->now ? earliest : c->now + 1000,
				 s->o.start_ns);
			continue;
		}
		run_slice(s, c, &s->thr[t]);
	}
	for (unsigned i = 0; i < s->o.cpus; i++) {
		flush_out(s, &s->cpus[i], 0);
		ptenc_finish(s->cpus[i].pe);
		if (s->o.itruth && ptenc_dropping(s->cpus[i].pe) &&
		    jpb_buf_u64(&s->cpus[i].itruth, SIM_ITRUTH_LOST_END))
			die_nomem();
	}
}

/* Split TOTAL into K random positive-ish parts that sum to TOTAL. */
static void split(struct rng *r, uint64_t total, size_t k, uint64_t *out)
{
	double w[k], sum = 0;
	for (size_t i = 0; i < k; i++)
		sum += (w[i] = 0.5 + rng_unit(r));
	uint64_t used = 0;
	for (size_t i = 0; i < k; i++) {
		out[i] = (uint64_t)floor((double)total * w[i] / sum);
		used += out[i];
	}
	for (size_t i = 0; used < total; i = (i + 1) % k, used++)
		out[i]++;
}

void loss_plan_make(struct sim *s, const uint64_t *events, double pct)
{
	/* its own generator: the schedule must not change with the plan */
	struct rng r = { s->o.seed ^ 0x5bd1e9955bd1e995ull };
	s->plan = xcalloc(s->o.cpus, sizeof(*s->plan));
	for (unsigned c = 0; c < s->o.cpus; c++) {
		uint64_t e = events[c];
		uint64_t lost = (uint64_t)llround((double)e * pct / 100.0);
		if (!lost)
			continue;
		/* windows of ~2% of the CPU's events, at least 20 bytecodes */
		uint64_t mean = e / 50 > 20 ? e / 50 : 20;
		size_t k = (size_t)(lost / mean) + 1;
		if (k > lost)
			k = (size_t)lost;
		uint64_t *len = xcalloc(k, sizeof(uint64_t));
		uint64_t *gap = xcalloc(k + 1, sizeof(uint64_t));
		split(&r, lost, k, len);
		split(&r, e - lost, k + 1, gap);
		struct loss_plan *p = &s->plan[c];
		p->win = xcalloc(k, sizeof(*p->win));
		uint64_t at = 0;
		for (size_t i = 0; i < k; i++) {
			at += gap[i];
			if (!len[i])
				continue;
			p->win[p->n][0] = at;
			p->win[p->n][1] = len[i];
			p->n++;
			at += len[i];
		}
		free(len);
		free(gap);
	}
}
