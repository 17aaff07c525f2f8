// SPDX-License-Identifier: MIT
/*
 * The writer thread.  Java threads only take a mutex for a list append;
 * encoding happens on their side, disk I/O only here.  Past max_bytes of
 * backlog records are dropped and counted, and a JPB_REC_LOSS says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

static const char *const stream_names[AS_COUNT] = { "jvm", "truth" };

/* The writer drains every WAKE_MS, or as soon as WAKE_BYTES are queued.
 * Each wake cost a context switch, a stat of the stop file and a write
 * whose inode update ext4 journals: at 50 ms, a third of the writer's CPU
 * in a javac loop (perf).  The stop file is noticed within WAKE_MS. */
#define WAKE_MS 200
#define WAKE_BYTES (1u << 20)

/* Every record is one allocation: its queue item, then its payload
 * (aq_buf_init); once written, the writer gives it back for reuse. */
#define AQ_HDR ((sizeof(struct aq_item) + 15) & ~(size_t)15)

/* Takes IT (NULL: no memory, counted as a drop).  SIZE is IT's, or the
 * lost record's. */
static void enqueue(struct aq *q, int stream, struct aq_item *it,
		    uint64_t time_ns, uint32_t size)
{
	pthread_mutex_lock(&q->lock);
	if (!q->running || q->stop) {
		/* An event racing with the end of the session falls after
		 * the recording window: not a loss. */
		pthread_mutex_unlock(&q->lock);
		free(it);
		return;
	}
	if (!it || q->queued_bytes + size > q->max_bytes) {
		q->dropped[stream]++;
		if (!q->dropped_first_ns)
			q->dropped_first_ns = time_ns;
		q->dropped_last_ns = time_ns;
		pthread_mutex_unlock(&q->lock);
		free(it);
		return;
	}
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->queued_bytes += size;
	/* The writer wakes by itself every WAKE_MS; waking it for each
	 * record would cost a futex call here and a context switch there
	 * per compiled method (docs/AGENT.md, overhead). */
	if (q->queued_bytes >= WAKE_BYTES && q->queued_bytes - size < WAKE_BYTES)
		pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

void aq_drop(struct aq *q, int stream, uint64_t time_ns)
{
	enqueue(q, stream, NULL, time_ns, UINT32_MAX);
}

/* Written records' allocations are kept for the next ones, up to
 * SPARE_MAX bytes: a record's malloc (glibc's arena path for the 1-64 KiB
 * of an nmethod) was a tenth of a CompiledMethodLoad callback, and the
 * writer's free of it a twelfth of the writer (perf, javac loop). */
#define SPARE_MAX (2u << 20)

static struct aq_item *spare_take(struct aq *q, size_t n, size_t *cap)
{
	pthread_mutex_lock(&q->lock);
	struct aq_item *it = recycle_take(&q->spare, n, cap);
	pthread_mutex_unlock(&q->lock);
	return it;
}

int aq_buf_init(struct aq *q, struct jpb_buf *b, size_t size)
{
	*b = (struct jpb_buf){ 0 };
	if (size > SIZE_MAX - AQ_HDR)
		return jpb_err_nomem;
	size_t cap = 0;
	struct aq_item *it = spare_take(q, AQ_HDR + size, &cap);
	if (it)
		*b = (struct jpb_buf){ (uint8_t *)it, 0, cap };
	if (jpb_buf_reserve(b, AQ_HDR + size))
		return jpb_err_nomem;
	b->len = AQ_HDR;
	return 0;
}

/* Give the written LIST back: kept up to SPARE_MAX, the rest freed.
 * One lock for the whole list, the frees outside it. */
static void spare_return(struct aq *q, struct aq_item *list)
{
	struct aq_item *drop = NULL;
	pthread_mutex_lock(&q->lock);
	while (list) {
		struct aq_item *it = list;
		list = it->next;
		if (!recycle_give(&q->spare, it, it->cap)) {
			it->next = drop;
			drop = it;
		}
	}
	pthread_mutex_unlock(&q->lock);
	while (drop) {
		struct aq_item *next = drop->next;
		free(drop);
		drop = next;
	}
}

void aq_put_buf(struct aq *q, int stream, uint16_t type, uint64_t time_ns,
		struct jpb_buf *b)
{
	size_t size = b->len - AQ_HDR;
	if (!b->data || b->len < AQ_HDR || size >= UINT32_MAX) {
		jpb_buf_fini(b);
		enqueue(q, stream, NULL, time_ns, UINT32_MAX);
		return;
	}
	/* The buffer may have moved as it grew: the item is found from its
	 * start, its payload right after the header. */
	struct aq_item *it = (struct aq_item *)(void *)b->data;
	size_t cap = b->cap;
	*b = (struct jpb_buf){ 0 };
	*it = (struct aq_item){ .type = type, .stream = (uint8_t)stream,
				.time_ns = time_ns, .size = (uint32_t)size,
				.data = (uint8_t *)it + AQ_HDR, .cap = cap };
	enqueue(q, stream, it, time_ns, (uint32_t)size);
}

void aq_put_rec(struct aq *q, int stream, uint16_t type, uint64_t time_ns,
		const void *rec)
{
	const struct jpb_rectype *t = jpb_rectype_find(type);
	struct jpb_buf b = { 0 };
	/* jpb_buf's first allocation, 256 bytes, leaves 208 for the
	 * payload: enough for most small records without a regrowth. */
	if (!t || aq_buf_init(q, &b, 0) || jpb_rec_encode(t, rec, &b) != 0) {
		jpb_buf_fini(&b);
		enqueue(q, stream, NULL, time_ns, UINT32_MAX);
		return;
	}
	aq_put_buf(q, stream, type, time_ns, &b);
}

void aq_note(struct aq *q, int level, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	struct jpb_rec_note n = { (uint32_t)level, jpb_str_c("agent"),
				  jpb_str_c(text) };
	aq_put_rec(q, AS_JVM, JPB_REC_NOTE, agent_now(), &n);
}

static void write_item(struct aq *q, struct aq_item *it)
{
	struct jpb_writer *w = q->w[it->stream];
	if (!w || q->write_err)
		return;
	int err = jpb_writer_put(w, it->type, it->time_ns, it->data, it->size);
	if (err) {
		q->write_err = err;
		snprintf(q->errmsg, sizeof(q->errmsg), "%s",
			 jpb_writer_errmsg(w));
		agent_log("write failed, recording stops: %s", q->errmsg);
	}
}

/* The stop file is looked for at every wake, 20 times a second: through
 * a descriptor of its directory, since resolving the whole path each time
 * showed in perf (JDK 17 javac loop: 0.2% of the JVM's CPU in path
 * lookups, of 1.4% in this thread; docs/AGENT.md). */
struct stop_probe {
	int dirfd; /* -1: stat the whole path */
	const char *name;
};

static void stop_probe_open(struct stop_probe *p, const char *path)
{
	char dir[sizeof(((struct aq *)0)->stop_file)];
	const char *slash = strrchr(path, '/');
	p->dirfd = -1;
	p->name = path;
	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd >= 0)
		p->name = slash + 1;
}

static int stop_requested(struct aq *q, const struct stop_probe *p)
{
	struct stat st;
	if (!q->stop_file[0])
		return 0;
	if (p->dirfd < 0)
		return stat(q->stop_file, &st) == 0;
	return fstatat(p->dirfd, p->name, &st, 0) == 0;
}

/* Waits WAKE_MS unless WAKE_BYTES are queued (or the session stops), so
 * records go to disk in large writes; WAKE_MS also bounds how late the
 * stop file is noticed. */
static struct aq_item *take_all(struct aq *q, int *stop)
{
	pthread_mutex_lock(&q->lock);
	if (q->queued_bytes < WAKE_BYTES && !q->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WAKE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&q->cond, &q->lock, &ts);
	}
	struct aq_item *list = q->head;
	q->head = q->tail = NULL;
	q->queued_bytes = 0;
	*stop = q->stop;
	pthread_mutex_unlock(&q->lock);
	return list;
}

static void put_losses(struct aq *q);

/* What the writer thread cost, for the overhead account (docs/AGENT.md). */
static void put_cpu_note(struct aq *q)
{
	struct timespec ts;
	char text[128];
	if (!q->w[AS_JVM] || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	q->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	snprintf(text, sizeof(text), "writer thread: %.1f ms of CPU",
		 q->cpu_ns / 1e6);
	struct jpb_rec_note n = { JPB_NOTE_INFO, jpb_str_c("agent"),
				  jpb_str_c(text) };
	struct jpb_buf b = { 0 };
	if (jpb_rec_encode(jpb_rectype_find(JPB_REC_NOTE), &n, &b) == 0)
		jpb_writer_put(q->w[AS_JVM], JPB_REC_NOTE, agent_now(), b.data,
			       (uint32_t)b.len);
	jpb_buf_fini(&b);
}

static void close_streams(struct aq *q)
{
	put_losses(q);
	put_cpu_note(q);
	for (int i = 0; i < AS_COUNT; i++) {
		if (!q->w[i])
			continue;
		int rc = jpb_writer_close(q->w[i]);
		if (rc && !q->write_err)
			q->write_err = rc;
		q->w[i] = NULL;
	}
	if (q->done_file[0]) {
		FILE *f = fopen(q->done_file, "w");
		if (f) {
			fprintf(f, "%s\n", q->write_err ? q->errmsg : "ok");
			fclose(f);
		}
	}
}

static void *writer_main(void *arg)
{
	struct aq *q = arg;
	int stop = 0, asked = 0;
	struct stop_probe probe;
	stop_probe_open(&probe, q->stop_file);
	while (!stop) {
		struct aq_item *list = take_all(q, &stop);
		for (struct aq_item *it = list; it; it = it->next)
			write_item(q, it);
		spare_return(q, list);
		if (!stop && !asked && stop_requested(q, &probe)) {
			asked = 1;
			/* The callback makes the event handlers return at
			 * once; what they queued so far is still written. */
			if (q->on_stop_request)
				q->on_stop_request();
			pthread_mutex_lock(&q->lock);
			q->stop = 1;
			pthread_mutex_unlock(&q->lock);
			stop = 0; /* one more drain round */
			continue;
		}
		for (int i = 0; i < AS_COUNT && !stop; i++)
			if (q->w[i])
				jpb_writer_flush(q->w[i], 0);
	}
	if (probe.dirfd >= 0)
		close(probe.dirfd);
	close_streams(q);
	return NULL;
}

int aq_start(struct aq *q, struct jpb_bundle *b, int truth, char *err,
	     size_t size)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->bundle = b;
	if (!q->max_bytes)
		q->max_bytes = 512u << 20;
	q->spare.max = SPARE_MAX;
	for (int i = 0; i < AS_COUNT; i++) {
		if (i == AS_TRUTH && !truth)
			continue;
		int rc = jpb_writer_open(b, stream_names[i], &q->w[i]);
		if (rc) {
			snprintf(err, size, "%s: %s", stream_names[i],
				 jpb_bundle_errmsg(b)[0] ? jpb_bundle_errmsg(b)
							 : jpb_errstr(rc));
			for (int j = 0; j < i; j++)
				if (q->w[j])
					jpb_writer_close(q->w[j]);
			memset(q->w, 0, sizeof(q->w));
			return rc;
		}
	}
	q->running = 1;
	/* The writer thread is unknown to the JVM: process-directed signals
	 * (SIGQUIT for attach, SIGTERM...) must go to the JVM's threads. */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&q->thread, NULL, writer_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(q->thread, "jpbpf-writer");
	if (rc != 0) {
		q->running = 0;
		snprintf(err, size, "cannot start the writer thread");
		for (int i = 0; i < AS_COUNT; i++)
			if (q->w[i])
				jpb_writer_close(q->w[i]);
		memset(q->w, 0, sizeof(q->w));
		return jpb_err_nomem;
	}
	return 0;
}

static void put_losses(struct aq *q)
{
	for (int i = 0; i < AS_COUNT; i++) {
		if (!q->dropped[i] || !q->w[i])
			continue;
		struct jpb_rec_loss l = { jpb_str_c(stream_names[i]),
					  UINT32_MAX, q->dropped[i],
					  q->dropped_first_ns,
					  q->dropped_last_ns };
		struct jpb_buf b = { 0 };
		if (jpb_rec_encode(jpb_rectype_find(JPB_REC_LOSS), &l, &b) == 0)
			jpb_writer_put(q->w[i], JPB_REC_LOSS, agent_now(),
				       b.data, (uint32_t)b.len);
		jpb_buf_fini(&b);
	}
}

/* Drain everything queued, write the loss counts, close the streams
 * (the writer thread does that as it exits).  Call once.  Returns the
 * first write error, 0 if none. */
int aq_finish(struct aq *q)
{
	if (!q->running)
		return q->write_err;
	pthread_mutex_lock(&q->lock);
	q->stop = 1;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	pthread_mutex_lock(&q->lock);
	q->running = 0;
	recycle_free(&q->spare);
	pthread_mutex_unlock(&q->lock);
	return q->write_err;
}
