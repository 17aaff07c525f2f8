// SPDX-License-Identifier: MIT
/* The PT recorder's system calls: perf_event_open per (thread, CPU) or per
 * thread, the data and AUX mmaps, enable/disable, and the loop glue.
 * Everything that moves bytes is in pt_drain.c, which is unit-tested on
 * fake rings; this file cannot run without Intel PT. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "records_pt.h"
#include "record/pt/pt.h"

struct pt_ring {
	struct jpb_pt_ring_view v;
	void *base;     /* user page + data area */
	size_t base_len;
	void *auxmap;
	int *fds;       /* fds[0] owns the mmaps; the rest SET_OUTPUT to it */
	size_t nfds, capfds;
	pid_t tid;      /* per-thread ring */
	int cpu;        /* per-CPU ring, else -1 */
};

struct jpb_pt_recorder {
	struct jpb_bundle *b;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	uint64_t config;
	pid_t pid;
	const char *prefix;
	struct pt_ring **rings;
	size_t nrings, caprings;
	pid_t *tids;
	size_t ntids, captids;
	int epfd;    /* every event fd, so callers poll one descriptor */
	int stopped;
	struct jpb_pt_stats retired; /* of rings already freed */
	int trigger; /* set by jpb_pt_recorder_trigger, atomically */
	int err;
	char errmsg[512];
};

static int fail(struct jpb_pt_recorder *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct jpb_pt_recorder *r, int err, const char *fmt, ...)
{
	va_list ap;
	if (r->err)
		return err; /* keep the first cause */
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

static void fill_attr(const struct jpb_pt_recorder *r, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)r->caps.pmu_type;
	a->config = r->config;
	a->disabled = 1; /* all events start together in pt_enable() */
	a->exclude_kernel = !!r->cfg.exclude_kernel;
	a->exclude_hv = 1;
	/* Per-CPU rings follow new threads by inheritance; the kernel
	 * refuses to mmap inherited per-thread (cpu == -1) events. */
	a->inherit = r->cfg.mode == JPB_PT_MODE_PER_CPU;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a->sample_id_all = 1; /* the sideband layout jpb_pt_sb_parse expects */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* the bundle's clock */
	a->context_switch = !!r->cfg.context_switch;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(r->cfg.data_size / 2);
	if (!r->cfg.snapshot_size && !r->cfg.no_aux)
		a->aux_watermark = (uint32_t)(r->cfg.aux_size / 4);
}

static int ring_map(struct jpb_pt_recorder *r, struct pt_ring *g, int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	g->base_len = (size_t)page + r->cfg.data_size;
	g->base = mmap(NULL, g->base_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (g->base == MAP_FAILED) {
		int e = errno;
		g->base = NULL;
		return fail(r, e == EPERM ? jpb_pt_err_perm : jpb_pt_err_io,
			    "pt: mmap of the %" PRIu64 "-byte data area: %s",
			    r->cfg.data_size, strerror(e));
	}
	struct perf_event_mmap_page *pg = g->base;
	g->v.user_page = pg;
	/* data_offset/data_size exist since Linux 4.1; before, the data
	 * area follows the user page. */
	g->v.data = (uint8_t *)g->base + (pg->data_offset ? pg->data_offset
							  : (uint64_t)page);
	g->v.data_size = pg->data_size ? pg->data_size : r->cfg.data_size;
	g->v.config = r->config;
	if (r->cfg.no_aux)
		return 0;
	pg->aux_offset = (uint64_t)page + r->cfg.data_size;
	pg->aux_size = r->cfg.aux_size;
	/* A read-only AUX mapping is the kernel's overwrite (snapshot) mode. */
	int prot = PROT_READ | (r->cfg.snapshot_size ? 0 : PROT_WRITE);
	g->auxmap = mmap(NULL, r->cfg.aux_size, prot, MAP_SHARED, fd,
			 (off_t)pg->aux_offset);
	if (g->auxmap == MAP_FAILED) {
		int e = errno;
		g->auxmap = NULL;
		return fail(r, e == EPERM ? jpb_pt_err_perm : jpb_pt_err_io,
			    "pt: mmap of the %" PRIu64 " KiB AUX area: %s%s",
			    r->cfg.aux_size >> 10, strerror(e),
			    e == EPERM ? " (locked-memory limit: "
			    "kernel.perf_event_mlock_kb; try a smaller "
			    "--buffer-size or CAP_IPC_LOCK)" : "");
	}
	g->v.aux = g->auxmap;
	g->v.aux_size = r->cfg.aux_size;
	g->v.overwrite = !!r->cfg.snapshot_size;
	return 0;
}

static struct pt_ring *ring_new(struct jpb_pt_recorder *r, int fd, int cpu,
				pid_t tid)
{
	char name[64];
	struct pt_ring *g = calloc(1, sizeof(*g));
	if (!g || jpb_grow((void **)&r->rings, &r->caprings, r->nrings,
		       sizeof(*r->rings))) {
		free(g);
		fail(r, jpb_pt_err_nomem, "pt: out of memory");
		return NULL;
	}
	r->rings[r->nrings++] = g;
	g->cpu = cpu;
	g->tid = tid;
	g->v.cpu = cpu >= 0 ? (uint32_t)cpu : JPB_PT_NO_CPU;
	g->v.tid = cpu >= 0 ? 0 : (uint32_t)tid;
	if (cpu >= 0)
		snprintf(name, sizeof(name), "%s/cpu%d", r->prefix, cpu);
	else
		snprintf(name, sizeof(name), "%s/tid%d", r->prefix, (int)tid);
	if (ring_map(r, g, fd))
		return NULL;
	int err = jpb_writer_open(r->b, name, &g->v.w);
	if (err) {
		fail(r, jpb_pt_err_bundle, "pt: creating stream %s: %s", name,
		     jpb_errstr(err));
		return NULL;
	}
	if (jpb_pt_view_begin(&g->v)) {
		fail(r, jpb_pt_err_bundle, "%s", g->v.errmsg);
		return NULL;
	}
	return g;
}

static struct pt_ring *ring_for(struct jpb_pt_recorder *r, int cpu, pid_t tid)
{
	for (size_t i = 0; i < r->nrings; i++)
		if (cpu >= 0 ? r->rings[i]->cpu == cpu :
			       r->rings[i]->cpu < 0 && r->rings[i]->tid == tid)
			return r->rings[i];
	return NULL;
}

/* Why perf_event_open said no, as the user can act on it. */
static int open_error(struct jpb_pt_recorder *r, int e, pid_t tid, int cpu)
{
	if (e == EACCES || e == EPERM)
		return fail(r, jpb_pt_err_perm, "pt: perf_event_open(tid %d, cpu %d): "
			    "%s: tracing another user's process needs "
			    "CAP_PERFMON (and ptrace access); "
			    "kernel.perf_event_paranoid is %d", (int)tid, cpu,
			    strerror(e), r->caps.paranoid);
	if (e == EBUSY)
		return fail(r, jpb_pt_err_io, "pt: Intel PT of tid %d on cpu %d is "
			    "already in use (another perf or tracer on this "
			    "process?)", (int)tid, cpu);
	if (e == EMFILE || e == ENFILE)
		return fail(r, jpb_pt_err_io, "pt: out of file descriptors after "
			    "%zu rings: per-CPU mode opens one event per "
			    "thread and CPU; raise 'ulimit -n' or use "
			    "--pt-per-thread", r->nrings);
	return fail(r, e == EINVAL || e == EOPNOTSUPP ? jpb_pt_err_unsupported
						      : jpb_pt_err_io,
		    "pt: perf_event_open(type %d, config 0x%" PRIx64 ", tid %d, "
		    "cpu %d): %s", r->caps.pmu_type, r->config, (int)tid, cpu,
		    strerror(e));
}

/* One event for TID on CPU (-1: any CPU, per-thread mode).  A thread
 * that exited meanwhile (ESRCH) and an offline CPU (ENODEV) are skipped,
 * and so, on a RESCAN, is a thread that already inherited its event from
 * a traced thread (the PT PMU is exclusive: EBUSY). */
static int open_event(struct jpb_pt_recorder *r, pid_t tid, int cpu, int enable,
		      int rescan)
{
	struct perf_event_attr a;
	fill_attr(r, &a);
	a.disabled = !enable;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, cpu, -1,
			      PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ESRCH || e == ENODEV || (e == EBUSY && rescan && cpu >= 0))
			return 0;
		return open_error(r, e, tid, cpu);
	}
	struct pt_ring *g = ring_for(r, cpu, tid);
	if (!g && !(g = ring_new(r, fd, cpu, tid))) {
		close(fd);
		return r->err;
	}
	if (jpb_grow((void **)&g->fds, &g->capfds, g->nfds, sizeof(int))) {
		close(fd);
		return fail(r, jpb_pt_err_nomem, "pt: out of memory");
	}
	g->fds[g->nfds++] = fd;
	/* Every fd, not just the ring's owner: the owner's thread may exit
	 * (POLLHUP) while others keep writing into its ring. */
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev))
		return fail(r, jpb_pt_err_io, "pt: epoll_ctl: %s", strerror(errno));
	if (g->nfds > 1 && ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, g->fds[0]))
		return fail(r, jpb_pt_err_io, "pt: redirecting tid %d to %s ring: %s",
			    (int)tid, cpu >= 0 ? "the CPU" : "its", strerror(errno));
	return 0;
}

static int known(const struct jpb_pt_recorder *r, pid_t tid)
{
	for (size_t i = 0; i < r->ntids; i++)
		if (r->tids[i] == tid)
			return 1;
	return 0;
}

static int open_thread(struct jpb_pt_recorder *r, pid_t tid, int enable,
		       int rescan)
{
	if (jpb_grow((void **)&r->tids, &r->captids, r->ntids, sizeof(pid_t)))
		return fail(r, jpb_pt_err_nomem, "pt: out of memory");
	r->tids[r->ntids++] = tid;
	if (r->cfg.mode == JPB_PT_MODE_PER_THREAD)
		return open_event(r, tid, -1, enable, rescan);
	for (int cpu = 0; cpu < r->caps.nr_cpus; cpu++) {
		int err = open_event(r, tid, cpu, enable, rescan);
		if (err)
			return err;
	}
	return 0;
}

/* Open every thread of the target; threads that appear while we do so
 * and were not created by an already-traced thread show up on a rescan. */
static int open_all(struct jpb_pt_recorder *r)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid);
	for (int pass = 0; pass < 4; pass++) {
		size_t before = r->ntids;
		DIR *d = opendir(path);
		if (!d)
			return fail(r, jpb_pt_err_io, "pt: %s: %s", path, strerror(errno));
		struct dirent *e;
		int err = 0;
		while (!err && (e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid > 0 && !known(r, tid))
				err = open_thread(r, tid, 0, pass > 0);
		}
		closedir(d);
		if (err)
			return err;
		if (r->ntids == before)
			break;
	}
	if (!r->nrings)
		return fail(r, jpb_pt_err_io, "pt: process %d has no thread left to "
			    "trace", (int)r->pid);
	return 0;
}

static int each_fd(struct jpb_pt_recorder *r, unsigned long req)
{
	for (size_t i = 0; i < r->nrings; i++)
		for (size_t k = 0; k < r->rings[i]->nfds; k++)
			if (ioctl(r->rings[i]->fds[k], req, 0) && errno != ESRCH)
				return fail(r, jpb_pt_err_io, "pt: %s: %s",
					    req == PERF_EVENT_IOC_ENABLE ?
					    "enable" : "disable", strerror(errno));
	return 0;
}

/* Per-CPU mode opens threads x CPUs descriptors. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int jpb_pt_recorder_open(struct jpb_pt_recorder **out, struct jpb_bundle *bundle,
		     const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		     const struct jpb_pt_target *target, char *why, size_t size)
{
	*out = NULL;
	if (!bundle || !caps || !cfg || !target || target->pid <= 0) {
		snprintf(why, size, "pt: invalid arguments");
		return jpb_pt_err_invalid;
	}
	struct jpb_pt_recorder *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, size, "pt: out of memory");
		return jpb_pt_err_nomem;
	}
	r->b = bundle;
	r->caps = *caps;
	r->cfg = *cfg;
	r->pid = target->pid;
	r->prefix = target->stream_prefix ? target->stream_prefix : "pt";
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0) {
		snprintf(why, size, "pt: epoll_create1: %s", strerror(errno));
		free(r);
		return jpb_pt_err_io;
	}
	int err = jpb_pt_config_word(caps, cfg, &r->config, why, size);
	if (!err)
		err = jpb_pt_config_check(caps, cfg, cfg->mode == JPB_PT_MODE_PER_CPU ?
				      (unsigned)caps->ncpus_online : 1, why, size);
	if (!err) {
		raise_nofile();
		err = open_all(r);
		if (!err)
			err = each_fd(r, PERF_EVENT_IOC_ENABLE);
		if (err)
			snprintf(why, size, "%s", r->errmsg);
	}
	if (err) {
		r->err = 0; /* close's own result is not the cause */
		jpb_pt_recorder_close(r);
		return err;
	}
	*out = r;
	return 0;
}

int jpb_pt_recorder_add_thread(struct jpb_pt_recorder *r, pid_t tid)
{
	if (tid <= 0)
		return jpb_pt_err_invalid;
	if (known(r, tid))
		return 0;
	if (r->cfg.mode == JPB_PT_MODE_PER_THREAD)
		return open_thread(r, tid, 1, 0);
	/* Per-CPU: a thread created by a traced thread inherited its
	 * events; opening more would compete for the same PT hardware. */
	if (jpb_grow((void **)&r->tids, &r->captids, r->ntids, sizeof(pid_t)))
		return fail(r, jpb_pt_err_nomem, "pt: out of memory");
	r->tids[r->ntids++] = tid;
	return 0;
}

static void ring_free(struct jpb_pt_recorder *r, struct pt_ring *g)
{
	jpb_pt_stats_add(&r->retired, &g->v.st);
	for (size_t k = 0; k < g->nfds; k++)
		close(g->fds[k]);
	if (g->v.w) {
		int err = jpb_writer_close(g->v.w);
		if (err)
			fail(r, jpb_pt_err_bundle, "pt: closing stream: %s",
			     jpb_errstr(err));
	}
	if (g->auxmap)
		munmap(g->auxmap, r->cfg.aux_size);
	if (g->base)
		munmap(g->base, g->base_len);
	jpb_buf_fini(&g->v.scratch);
	free(g->fds);
	free(g);
}

static int drain_ring(struct jpb_pt_recorder *r, struct pt_ring *g)
{
	if (!g->v.w)
		return 0;
	int err = jpb_pt_view_drain(&g->v);
	return err ? fail(r, err, "%s", g->v.errmsg) : 0;
}

int jpb_pt_recorder_thread_exit(struct jpb_pt_recorder *r, pid_t tid)
{
	/* Per-CPU rings outlive threads.  A snapshot-mode ring stays mapped
	 * until the next trigger saves it: nothing is written before. */
	if (r->cfg.mode != JPB_PT_MODE_PER_THREAD || r->cfg.snapshot_size)
		return 0;
	for (size_t i = 0; i < r->nrings; i++) {
		struct pt_ring *g = r->rings[i];
		if (g->tid != tid)
			continue;
		int err = drain_ring(r, g);
		ring_free(r, g);
		r->rings[i] = r->rings[--r->nrings];
		return err;
	}
	return 0;
}

size_t jpb_pt_recorder_fds(const struct jpb_pt_recorder *r, int *fds, size_t max)
{
	if (max)
		fds[0] = r->epfd;
	return 1;
}

static struct pt_ring *ring_of_fd(struct jpb_pt_recorder *r, int fd)
{
	for (size_t i = 0; i < r->nrings; i++)
		for (size_t k = 0; k < r->rings[i]->nfds; k++)
			if (r->rings[i]->fds[k] == fd)
				return r->rings[i];
	return NULL;
}

/* Consume readiness.  POLLHUP: the fd's thread exited and has no traced
 * children; level-triggered epoll would report it forever, so it leaves
 * the set (the fd stays open: its ring may still be written by others).
 * A per-thread ring whose thread is gone is drained and closed. */
static int reap_hups(struct jpb_pt_recorder *r)
{
	struct epoll_event ev[64];
	int n, err = 0;
	while ((n = epoll_wait(r->epfd, ev, 64, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			if (!(ev[i].events & (EPOLLHUP | EPOLLERR)))
				continue;
			epoll_ctl(r->epfd, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
			struct pt_ring *g = ring_of_fd(r, ev[i].data.fd);
			if (g && g->cpu < 0 && !err)
				err = jpb_pt_recorder_thread_exit(r, g->tid);
		}
		if (n < 64)
			break;
	}
	return err;
}

void jpb_pt_recorder_trigger(struct jpb_pt_recorder *r)
{
	__atomic_store_n(&r->trigger, 1, __ATOMIC_RELAXED);
}

int jpb_pt_recorder_snapshot(struct jpb_pt_recorder *r)
{
	if (!r->cfg.snapshot_size)
		return 0;
	/* aux_head is published when the events stop. */
	int err = each_fd(r, PERF_EVENT_IOC_DISABLE);
	for (size_t i = 0; !err && i < r->nrings; i++) {
		struct jpb_pt_ring_view *v = &r->rings[i]->v;
		if ((err = jpb_pt_view_snapshot(v, r->cfg.snapshot_size)))
			fail(r, err, "%s", v->errmsg);
	}
	int e2 = each_fd(r, PERF_EVENT_IOC_ENABLE);
	return err ? err : e2;
}

int jpb_pt_recorder_drain(struct jpb_pt_recorder *r)
{
	int err = reap_hups(r);
	if (!err && __atomic_exchange_n(&r->trigger, 0, __ATOMIC_RELAXED))
		err = jpb_pt_recorder_snapshot(r);
	for (size_t i = 0; !err && i < r->nrings; i++)
		err = drain_ring(r, r->rings[i]);
	return err;
}

void jpb_pt_recorder_stats(const struct jpb_pt_recorder *r, struct jpb_pt_stats *st)
{
	*st = r->retired;
	for (size_t i = 0; i < r->nrings; i++)
		jpb_pt_stats_add(st, &r->rings[i]->v.st);
}

const char *jpb_pt_recorder_errmsg(const struct jpb_pt_recorder *r)
{
	return r->errmsg;
}

int jpb_pt_recorder_stop(struct jpb_pt_recorder *r)
{
	if (r->stopped)
		return r->err;
	r->stopped = 1;
	each_fd(r, PERF_EVENT_IOC_DISABLE);
	for (size_t i = 0; i < r->nrings; i++) {
		struct jpb_pt_ring_view *v = &r->rings[i]->v;
		if (!v->w)
			continue; /* a ring whose opening failed */
		drain_ring(r, r->rings[i]);
		/* the end of a snapshot recording is a trigger too */
		if (r->cfg.snapshot_size && v->aux &&
		    jpb_pt_view_snapshot(v, r->cfg.snapshot_size))
			fail(r, jpb_pt_err_bundle, "%s", v->errmsg);
	}
	return r->err;
}

json_t *jpb_pt_recorder_meta(const struct jpb_pt_recorder *r)
{
	struct jpb_pt_stats st;
	json_t *m = jpb_pt_meta_json(&r->caps, &r->cfg, r->config);
	if (!m)
		return NULL;
	jpb_pt_recorder_stats(r, &st);
	json_t *s = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "bytes", (json_int_t)st.bytes,
			      "aux_records", (json_int_t)st.aux_records,
			      "truncated", (json_int_t)st.truncated,
			      "partial", (json_int_t)st.partial,
			      "collision", (json_int_t)st.collision,
			      "lost", (json_int_t)st.lost,
			      "lost_samples", (json_int_t)st.lost_samples,
			      "aux_gap_bytes", (json_int_t)st.aux_gap_bytes,
			      "snapshots", (json_int_t)st.snapshots);
	json_object_set_new(m, "stats", s);
	json_object_set_new(m, "threads_opened", json_integer((json_int_t)r->ntids));
	return m;
}

int jpb_pt_recorder_close(struct jpb_pt_recorder *r)
{
	if (!r)
		return 0;
	jpb_pt_recorder_stop(r);
	for (size_t i = 0; i < r->nrings; i++)
		ring_free(r, r->rings[i]);
	int err = r->err;
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->rings);
	free(r->tids);
	free(r);
	return err;
}
