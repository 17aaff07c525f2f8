// SPDX-License-Identifier: MIT
/* The recorder's system-call path, as far as a machine without Intel PT
 * can drive it: argument checks, a PMU that does not exist, and a
 * software event standing in for intel_pt, which the kernel accepts with
 * jpbpf's exact attr (clockid, sample_id_all, inherit, context_switch,
 * watermarks) and maps the data area for, but which has no AUX area. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "bundle.h"
#include "records_pt.h"
#include "record/pt/pt.h"

struct fixture {
	char dir[256];
	struct jpb_bundle *b;
	struct jpb_pt_caps caps;
	struct jpb_pt_config cfg;
	struct jpb_pt_target target;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TESTTMP");
	snprintf(f->dir, sizeof(f->dir), "%s/ptrec.XXXXXX", tmp ? tmp : "/tmp");
	if (!f || !mkdtemp(f->dir) || jpb_bundle_create(&f->b, f->dir))
		return -1;
	/* A PMU whose only field is "branch" at config bit 3: with TSC off
	 * the config word is 8, PERF_COUNT_SW_EMULATION_FAULTS for the
	 * software PMU. */
	assert_int_equal(jpb_pt_format_parse("branch", "config:3", &f->caps.formats[0]), 0);
	f->caps.nformats = 1;
	f->caps.paranoid = 2;
	f->caps.ncpus_online = f->caps.nr_cpus = 1;
	f->caps.cap_ipc_lock = 1;
	jpb_pt_config_default(&f->cfg);
	f->cfg.tsc = 0;
	f->cfg.aux_size = 64u << 10;
	f->cfg.data_size = 8u << 10;
	f->target.pid = getpid();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[300];
	jpb_bundle_free(f->b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void bad_arguments(void **state)
{
	struct fixture *f = *state;
	struct jpb_pt_recorder *r = (void *)1;
	char why[256];
	f->target.pid = 0;
	assert_int_equal(jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), jpb_pt_err_invalid);
	assert_null(r);
	f->target.pid = getpid();
	f->cfg.aux_size = 3000;
	assert_int_equal(jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), jpb_pt_err_invalid);
	assert_non_null(strstr(why, "power of two"));
	assert_null(r);
	jpb_pt_config_default(&f->cfg); /* tsc on: this PMU has no format/tsc */
	assert_int_equal(jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target,
					  why, sizeof(why)), jpb_pt_err_unsupported);
	assert_non_null(strstr(why, "format/tsc"));
	assert_int_equal(jpb_pt_recorder_close(NULL), 0);
}

static void no_such_pmu(void **state)
{
	struct fixture *f = *state;
	struct jpb_pt_recorder *r = (void *)1;
	char why[512] = "";
	f->caps.pmu_type = 0x7ffff000; /* no PMU has this type */
	int err = jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target, why,
				   sizeof(why));
	assert_null(r);
	if (err == jpb_pt_err_perm) {
		print_message("# perf_event_open not permitted here: %s\n", why);
		skip();
	}
	assert_int_equal(err, jpb_pt_err_io);
	assert_non_null(strstr(why, "perf_event_open(type 2147479552"));
	/* nothing that looks like a PT stream was left */
	const char *const *names;
	size_t n;
	assert_int_equal(jpb_bundle_list_streams(f->b, &names, &n), 0);
	assert_int_equal(n, 0);
}

static void software_stand_in(void **state)
{
	struct fixture *f = *state;
	struct jpb_pt_recorder *r = (void *)1;
	char why[512] = "";
	f->caps.pmu_type = PERF_TYPE_SOFTWARE;
	int err = jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target, why,
				   sizeof(why));
	assert_null(r);
	if (err == jpb_pt_err_perm && strstr(why, "perf_event_open")) {
		print_message("# perf_event_open not permitted here: %s\n", why);
		skip();
	}
	/* The kernel took the attr (no EINVAL) and the data mmap; only the
	 * AUX mmap, which software events lack, failed. */
	assert_int_equal(err, jpb_pt_err_io);
	assert_non_null(strstr(why, "AUX area"));
	assert_null(strstr(why, "perf_event_open"));
}

/* A target that context-switches (short sleeps) and, after a while,
 * creates a thread that does too. */
static void *spin(void *arg)
{
	(void)arg;
	for (int i = 0; i < 400; i++)
		usleep(1000);
	return NULL;
}

static pid_t start_target(int pipefd[2])
{
	if (pipe(pipefd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(pipefd[1]);
		/* wait until the recorder is attached */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(1);
		usleep(20000);
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
		spin(NULL);
		pthread_join(t, NULL);
		_exit(0);
	}
	close(pipefd[0]);
	return pid;
}

struct seen {
	unsigned rings, switches, other_tid_switches, bad_time;
	uint64_t t0;
};

static void count_stream(struct jpb_bundle *b, const char *name, pid_t pid,
			 struct seen *s)
{
	struct jpb_reader *rd;
	struct jpb_record rec;
	assert_int_equal(jpb_reader_open(b, name, &rd), 0);
	while (jpb_reader_next(rd, &rec) == 0) {
		const struct jpb_rectype *t = jpb_rectype_find(rec.type);
		if (rec.type == JPB_REC_PT_RING) {
			s->rings++;
		} else if (rec.type == JPB_REC_PT_SWITCH) {
			struct jpb_rec_pt_switch w;
			assert_int_equal(jpb_rec_decode(t, rec.payload, rec.size, &w), 0);
			/* a software event stands in for intel_pt: the kernel's
			 * own records, parsed by jpb_pt_sb_parse */
			assert_int_equal(w.pid, (uint32_t)pid);
			s->switches++;
			s->other_tid_switches += w.tid != (uint32_t)pid;
			/* use_clockid: CLOCK_MONOTONIC, after the test began */
			s->bad_time += rec.time_ns < s->t0 ||
				       rec.time_ns > s->t0 + 60000000000ull;
		}
	}
	jpb_reader_free(rd);
}

/* What the BPF fork events would do: hand new threads to the recorder. */
static void add_threads(struct jpb_pt_recorder *r, pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (atoi(e->d_name) > 0)
			assert_int_equal(jpb_pt_recorder_add_thread(r, atoi(e->d_name)), 0);
	if (d)
		closedir(d);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The whole recorder path with real kernel sideband: open on a live
 * process, enable, poll, drain, retire exited threads, close. */
static void sideband_only(void **state, enum jpb_pt_mode mode, int add)
{
	struct fixture *f = *state;
	struct jpb_pt_recorder *r;
	char why[512] = "";
	int pipefd[2];
	struct seen s = { .t0 = mono_ns() };
	/* "branch" at bit 0 and "tsc" at bit 3: config 9, the dummy event */
	assert_int_equal(jpb_pt_format_parse("tsc", "config:3", &f->caps.formats[1]), 0);
	assert_int_equal(jpb_pt_format_parse("branch", "config:0", &f->caps.formats[0]), 0);
	f->caps.nformats = 2;
	f->caps.pmu_type = PERF_TYPE_SOFTWARE;
	f->caps.nr_cpus = f->caps.ncpus_online = (int)sysconf(_SC_NPROCESSORS_CONF);
	jpb_pt_config_default(&f->cfg);
	f->cfg.mode = mode;
	f->cfg.no_aux = 1;
	f->cfg.data_size = 64u << 10;
	pid_t pid = start_target(pipefd);
	assert_true(pid > 0);
	f->target.pid = pid;
	int err = jpb_pt_recorder_open(&r, f->b, &f->caps, &f->cfg, &f->target, why,
				   sizeof(why));
	if (err == jpb_pt_err_perm) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		print_message("# perf_event_open not permitted here: %s\n", why);
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(write(pipefd[1], "x", 1), 1);
	int fds[4];
	assert_int_equal(jpb_pt_recorder_fds(r, fds, 4), 1);
	int status, exited = 0;
	/* the target needs about a second; allow a loaded machine 30 */
	uint64_t deadline = mono_ns() + 30000000000ull;
	while (!exited && mono_ns() < deadline) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		poll(&p, 1, 10);
		if (add)
			add_threads(r, pid);
		assert_int_equal(jpb_pt_recorder_drain(r), 0);
		exited = waitpid(pid, &status, WNOHANG) == pid;
	}
	assert_true(exited);
	/* After the exit is reaped, nothing keeps the poll set busy. */
	assert_int_equal(jpb_pt_recorder_drain(r), 0);
	struct pollfd p = { fds[0], POLLIN, 0 };
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(jpb_pt_recorder_stop(r), 0);
	assert_int_equal(jpb_pt_recorder_stop(r), 0); /* idempotent */
	struct jpb_pt_stats st;
	jpb_pt_recorder_stats(r, &st);
	assert_int_equal(st.lost, 0);
	json_t *m = jpb_pt_recorder_meta(r);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(m, "config"), "mode")),
		mode == JPB_PT_MODE_PER_CPU ? "per-cpu" : "per-thread");
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(m, "stats"), "lost")), 0);
	assert_true(json_integer_value(json_object_get(m, "threads_opened")) >= 1);
	json_decref(m);
	assert_int_equal(jpb_pt_recorder_close(r), 0);
	close(pipefd[1]);

	const char *const *names;
	size_t n;
	assert_int_equal(jpb_bundle_list_streams(f->b, &names, &n), 0);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		if (mode == JPB_PT_MODE_PER_CPU)
			assert_int_equal(strncmp(names[i], "pt/cpu", 6), 0);
		else
			assert_int_equal(strncmp(names[i], "pt/tid", 6), 0);
		count_stream(f->b, names[i], pid, &s);
	}
	print_message("# %zu streams, %u switch records, %u of the new thread\n",
		      n, s.switches, s.other_tid_switches);
	assert_int_equal(s.rings, n);
	assert_true(s.switches > 100);
	assert_int_equal(s.bad_time, 0);
	if (mode == JPB_PT_MODE_PER_CPU || add)
		/* the thread created after attaching was followed: by
		 * inheritance, or by jpb_pt_recorder_add_thread */
		assert_true(s.other_tid_switches > 100);
	else
		/* per-thread and nobody added the new thread */
		assert_int_equal(s.other_tid_switches, 0);
}

static void sideband_per_cpu(void **state)
{
	sideband_only(state, JPB_PT_MODE_PER_CPU, 0);
}

static void sideband_per_thread(void **state)
{
	sideband_only(state, JPB_PT_MODE_PER_THREAD, 0);
}

static void sideband_per_thread_added(void **state)
{
	sideband_only(state, JPB_PT_MODE_PER_THREAD, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(no_such_pmu, setup, teardown),
		cmocka_unit_test_setup_teardown(software_stand_in, setup, teardown),
		cmocka_unit_test_setup_teardown(sideband_per_cpu, setup, teardown),
		cmocka_unit_test_setup_teardown(sideband_per_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(sideband_per_thread_added, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
