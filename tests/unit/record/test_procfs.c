// SPDX-License-Identifier: MIT
/* The recorder's /proc readers, on this very process. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "record/procfs.h"

static void parse_lines(void **state)
{
	(void)state;
	struct jpb_procfs_map m;
	assert_int_equal(jpb_procfs_parse_maps_line(
		"7f1c2a000000-7f1c2a1c0000 r-xp 00028000 fe:01 1234567   "
		"/usr/lib/x86_64-linux-gnu/libc.so.6\n", &m), 0);
	assert_int_equal(m.start, 0x7f1c2a000000ull);
	assert_int_equal(m.end, 0x7f1c2a1c0000ull);
	assert_int_equal(m.pgoff, 0x28000);
	assert_int_equal(m.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(m.dev_major, 0xfe);
	assert_int_equal(m.dev_minor, 1);
	assert_int_equal(m.inode, 1234567);
	assert_string_equal(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	assert_int_equal(jpb_procfs_parse_maps_line(
		"7ffd1000-7ffd2000 rw-p 00000000 00:00 0\n", &m), 0);
	assert_int_equal(m.prot, PROT_READ | PROT_WRITE);
	assert_string_equal(m.path, "");

	assert_int_equal(jpb_procfs_parse_maps_line(
		"1000-2000 r-xs 00000000 00:05 77 /tmp/a dir/lib x.so (deleted)",
		&m), 0);
	assert_string_equal(m.path, "/tmp/a dir/lib x.so (deleted)");

	assert_int_equal(jpb_procfs_parse_maps_line("garbage", &m), -EINVAL);
	assert_int_equal(jpb_procfs_parse_maps_line(
		"2000-1000 r-xp 0 00:00 0", &m), -EINVAL);
}

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int tid, go;
};

static void *named_thread(void *arg)
{
	struct waiter *w = arg;
	prctl(PR_SET_NAME, "jpb-probe", 0, 0, 0);
	pthread_mutex_lock(&w->mu);
	w->tid = (int)syscall(SYS_gettid);
	pthread_cond_broadcast(&w->cv);
	while (!w->go)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void threads_of_self(void **state)
{
	(void)state;
	struct waiter w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			    0, 0 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, named_thread, &w), 0);
	pthread_mutex_lock(&w.mu);
	while (!w.tid)
		pthread_cond_wait(&w.cv, &w.mu);
	pthread_mutex_unlock(&w.mu);

	uint32_t *tids;
	size_t n;
	assert_int_equal(jpb_procfs_tids(getpid(), &tids, &n), 0);
	int found_main = 0, found_new = 0;
	for (size_t i = 0; i < n; i++) {
		found_main |= tids[i] == (uint32_t)getpid();
		found_new |= tids[i] == (uint32_t)w.tid;
		if (i)
			assert_true(tids[i] > tids[i - 1]);
	}
	free(tids);
	assert_true(found_main && found_new);

	char name[32];
	assert_int_equal(jpb_procfs_comm(getpid(), (uint32_t)w.tid, name,
					 sizeof(name)), 0);
	assert_string_equal(name, "jpb-probe");

	/* In the namespace the test runs in, the innermost NSpid is the
	 * tid it sees: gettid(). */
	uint32_t ns;
	assert_int_equal(jpb_procfs_nstid(getpid(), (uint32_t)w.tid, &ns), 0);
	assert_int_equal(ns, (uint32_t)w.tid);

	pthread_mutex_lock(&w.mu);
	w.go = 1;
	pthread_cond_broadcast(&w.cv);
	pthread_mutex_unlock(&w.mu);
	pthread_join(th, NULL);
}

static int count_exec(const struct jpb_procfs_map *m, void *arg)
{
	if (m->prot & PROT_EXEC)
		++*(int *)arg;
	return 0;
}

static void maps_and_libs(void **state)
{
	(void)state;
	int nexec = 0;
	assert_int_equal(jpb_procfs_maps(getpid(), count_exec, &nexec), 0);
	assert_true(nexec >= 2); /* the test binary and libc at least */

	char path[4200], want[64];
	assert_int_equal(jpb_procfs_find_lib(getpid(), "libc.so.6", path,
					     sizeof(path)), 0);
	snprintf(want, sizeof(want), "/proc/%d/root/", (int)getpid());
	assert_memory_equal(path, want, strlen(want));
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(jpb_procfs_find_lib(getpid(), "libjvm.so", path,
					     sizeof(path)), -ENOENT);
}

static void process_facts(void **state)
{
	(void)state;
	char buf[4096];
	assert_int_equal(jpb_procfs_cmdline(getpid(), buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "test_procfs"));
	assert_int_equal(jpb_procfs_comm(getpid(), 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "test_procfs");

	uint64_t id = 0;
	char cg[1024];
	int rc = jpb_procfs_cgroup_id(getpid(), &id, cg, sizeof(cg));
	if (rc == -ENOENT) {
		print_message("# no cgroup v2 hierarchy\n");
	} else {
		assert_int_equal(rc, 0);
		assert_true(id > 0);
		assert_int_equal(cg[0], '/');
	}
}

static void gone_process(void **state)
{
	(void)state;
	/* Pid max is at most 2^22: this pid cannot exist. */
	uint32_t *tids;
	size_t n;
	char buf[64];
	uint32_t ns;
	assert_int_equal(jpb_procfs_tids(1 << 23, &tids, &n), -ENOENT);
	assert_int_equal(jpb_procfs_comm(1 << 23, 0, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(jpb_procfs_nstid(1 << 23, 1, &ns), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_lines),
		cmocka_unit_test(threads_of_self),
		cmocka_unit_test(maps_and_libs),
		cmocka_unit_test(process_facts),
		cmocka_unit_test(gone_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
