// SPDX-License-Identifier: MIT
/* Loading bpf/jpbpf.bpf.c through its bpftool-generated skeleton. */
#include "record/bpf_loader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/jpbpf.skel.h"
#include "../../bpf/jpbpf.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"

struct jpb_bpf {
	struct jpbpf_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *usdt[2];
	jpb_bpf_event_fn fn;
	void *ctx;
};

const char *jpb_bpf_errstr(int err)
{
	switch (err) {
	case jpb_bpf_ok: return "ok";
	case jpb_bpf_err_perm: return "permission denied";
	case jpb_bpf_err_btf: return "no usable kernel BTF";
	case jpb_bpf_err_load: return "BPF program refused";
	case jpb_bpf_err_attach: return "cannot attach";
	case jpb_bpf_err_map: return "BPF map update failed";
	case jpb_bpf_err_no_probe: return "USDT probe not found";
	case jpb_bpf_err_nomem: return "out of memory";
	}
	return "unknown BPF loader error";
}

/* libbpf's own chatter would interleave with jpbpf's one-line errors; it
 * is kept for JPBPF_DEBUG=1. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("JPBPF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int check_btf(const char *path, char *errmsg, size_t size)
{
	struct btf *btf = btf__parse(path, NULL);
	int e = errno;
	char why[128];
	if (btf) {
		btf__free(btf);
		return 0;
	}
	/* libbpf's own codes (e.g. "not BTF") are above 4000. */
	if (e == ENOENT)
		snprintf(why, sizeof(why), "not found");
	else if (libbpf_strerror(-e, why, sizeof(why)) != 0)
		snprintf(why, sizeof(why), "not a BTF file");
	snprintf(errmsg, size,
		 "kernel BTF %s: %s (jpbpf's BPF program needs a kernel built "
		 "with CONFIG_DEBUG_INFO_BTF=y)", path, why);
	return jpb_bpf_err_btf;
}

static int load_error(int err, char *errmsg, size_t size)
{
	/* As root, EACCES is the verifier's refusal, not a privilege issue. */
	if (err == -EPERM || (err == -EACCES && geteuid() != 0)) {
		snprintf(errmsg, size,
			 "loading BPF: %s (run as root, or with CAP_BPF and "
			 "CAP_PERFMON)", strerror(-err));
		return jpb_bpf_err_perm;
	}
	snprintf(errmsg, size, "loading BPF: %s (JPBPF_DEBUG=1 shows the "
		 "verifier log)", strerror(-err));
	return jpb_bpf_err_load;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct jpb_bpf *b = ctx;
	return b->fn(b->ctx, data, size);
}

static int setup(struct jpb_bpf *b, const struct jpb_bpf_opts *o,
		 const char *btf, char *errmsg, size_t size)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf);
	b->skel = jpbpf_bpf__open_opts(&oo);
	if (!b->skel)
		return load_error(-errno, errmsg, size);
	b->skel->rodata->filter_cgroup = o && o->filter_cgroup;
	b->skel->rodata->target_tgid = o ? o->target_tgid : 0;
	if (o && o->ringbuf_bytes)
		bpf_map__set_max_entries(b->skel->maps.events, o->ringbuf_bytes);
	b->skel->rodata->wakeup_bytes =
		bpf_map__max_entries(b->skel->maps.events) / 4;
	/* USDT programs are attached per target later, not by attach(). */
	bpf_program__set_autoattach(b->skel->progs.on_method_load, false);
	bpf_program__set_autoattach(b->skel->progs.on_method_unload, false);
	int err = jpbpf_bpf__load(b->skel);
	if (err)
		return load_error(err, errmsg, size);
	err = jpbpf_bpf__attach(b->skel);
	if (err) {
		snprintf(errmsg, size, "attaching sched tracepoints: %s",
			 strerror(-err));
		return err == -EPERM ? jpb_bpf_err_perm : jpb_bpf_err_attach;
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_ringbuf,
				 b, NULL);
	if (!b->rb) {
		snprintf(errmsg, size, "ring buffer: %s", strerror(errno));
		return jpb_bpf_err_map;
	}
	return 0;
}

int jpb_bpf_open(struct jpb_bpf **out, const struct jpb_bpf_opts *o,
		 jpb_bpf_event_fn fn, void *ctx, char *errmsg, size_t size)
{
	const char *btf = o && o->btf_path ? o->btf_path : DEFAULT_BTF;
	*out = NULL;
	libbpf_set_print(libbpf_print);
	/* Privilege first: without it even reading the BTF may fail, and
	 * "no BTF" would then be the wrong diagnosis. */
	if (geteuid() != 0 && access(btf, R_OK) != 0 && errno == EACCES)
		return load_error(-EPERM, errmsg, size);
	int err = check_btf(btf, errmsg, size);
	if (err)
		return err;
	struct jpb_bpf *b = calloc(1, sizeof(*b));
	if (!b)
		return jpb_bpf_err_nomem;
	b->fn = fn;
	b->ctx = ctx;
	/* Only an explicit override goes to libbpf; the default is what
	 * libbpf finds itself. */
	err = setup(b, o, o && o->btf_path ? btf : NULL, errmsg, size);
	if (err) {
		jpb_bpf_free(b);
		return err;
	}
	*out = b;
	return 0;
}

static int map_add(int fd, const void *key, const char *what, uint64_t v)
{
	uint8_t one = 1;
	if (bpf_map_update_elem(fd, key, &one, BPF_ANY) == 0)
		return 0;
	fprintf(stderr, "jpbpf: adding %s %llu to the BPF filter: %s\n", what,
		(unsigned long long)v, strerror(errno));
	return jpb_bpf_err_map;
}

int jpb_bpf_trace_tgid(struct jpb_bpf *b, uint32_t tgid)
{
	return map_add(bpf_map__fd(b->skel->maps.traced_tgids), &tgid, "tgid",
		       tgid);
}

int jpb_bpf_trace_cgroup(struct jpb_bpf *b, uint64_t id)
{
	return map_add(bpf_map__fd(b->skel->maps.traced_cgroups), &id,
		       "cgroup", id);
}

int jpb_bpf_attach_usdt(struct jpb_bpf *b, pid_t pid, const char *binary,
			char *errmsg, size_t size)
{
	struct bpf_program *progs[2] = { b->skel->progs.on_method_load,
					 b->skel->progs.on_method_unload };
	const char *names[2] = { "compiled__method__load",
				 "compiled__method__unload" };
	for (int i = 0; i < 2; i++) {
		if (b->usdt[i])
			continue;
		b->usdt[i] = bpf_program__attach_usdt(progs[i], pid, binary,
						      "hotspot", names[i], NULL);
		if (!b->usdt[i]) {
			int e = errno;
			snprintf(errmsg, size, "USDT hotspot:%s in %s: %s",
				 names[i], binary,
				 e == ENOENT ? "no such probe" : strerror(e));
			return e == ENOENT ? jpb_bpf_err_no_probe
					   : jpb_bpf_err_attach;
		}
	}
	return 0;
}

int jpb_bpf_poll(struct jpb_bpf *b, int timeout_ms)
{
	/* Events are submitted without waking us (bpf/jpbpf.bpf.c), so a
	 * timeout does not mean the ring is empty: consume either way. */
	int n = ring_buffer__poll(b->rb, timeout_ms);
	if (n < 0)
		return n;
	int m = ring_buffer__consume(b->rb);
	return m < 0 ? m : n + m;
}

int jpb_bpf_fd(const struct jpb_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int jpb_bpf_drain(struct jpb_bpf *b)
{
	return ring_buffer__consume(b->rb);
}

/* The per-CPU batches left in the `pending` map, delivered like ring
 * buffer events.  Only safe once on_switch is detached. */
static int flush_pending(struct jpb_bpf *b)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return jpb_bpf_err_map;
	/* A per-CPU lookup returns one value per possible CPU, each
	 * rounded up to 8 bytes. */
	size_t stride = (sizeof(struct jpbpf_ev_switches) + 7) & ~(size_t)7;
	uint8_t *v = calloc((size_t)ncpu, stride);
	if (!v)
		return jpb_bpf_err_nomem;
	uint32_t zero = 0;
	int n = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.pending), &zero, v)) {
		free(v);
		return jpb_bpf_err_map;
	}
	for (int c = 0; c < ncpu; c++) {
		const struct jpbpf_ev_switches *e =
			(const void *)(v + (size_t)c * stride);
		if (!e->n || e->n > JPBPF_BATCH)
			continue;
		if (b->fn(b->ctx, e, JPBPF_SWITCHES_SIZE(e->n)) < 0)
			break;
		n++;
	}
	free(v);
	return n;
}

int jpb_bpf_stop(struct jpb_bpf *b)
{
	/* Detaching waits for running instances of the program, so the
	 * batches read below are no longer written. */
	bpf_link__destroy(b->skel->links.on_switch);
	b->skel->links.on_switch = NULL;
	int n = ring_buffer__consume(b->rb);
	if (n < 0)
		return n;
	int m = flush_pending(b);
	return m < 0 ? m : n + m;
}

int jpb_bpf_lost(struct jpb_bpf *b, uint64_t *lost, size_t *ncpu)
{
	int n = libbpf_num_possible_cpus();
	if (n <= 0)
		return jpb_bpf_err_map;
	uint64_t *v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return jpb_bpf_err_nomem;
	uint32_t zero = 0;
	int err = bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.lost), &zero, v);
	if (!err) {
		size_t k = (size_t)n < *ncpu ? (size_t)n : *ncpu;
		memcpy(lost, v, k * sizeof(*v));
		*ncpu = k;
	}
	free(v);
	return err ? jpb_bpf_err_map : 0;
}

void jpb_bpf_free(struct jpb_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(b->usdt[i]);
	jpbpf_bpf__destroy(b->skel);
	free(b);
}
