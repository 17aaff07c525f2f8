// SPDX-License-Identifier: MIT
/*
 * jpbpf-sim: the test oracle.
 *
 *   jpbpf-sim truth -o DIR [--agent PATH] [--from C.M] [--max N] -- java ARGS...
 *   jpbpf-sim scenario -o DIR [--threads N] [--iters N]
 *   jpbpf-sim synth DIR [options]
 *   jpbpf-sim verify DIR
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "locals.h"
#include "out.h"
#include "records_jvm.h"
#include "scenario.h"
#include "sched.h"
#include "verify.h"

static const char usage[] =
	"usage: jpbpf-sim COMMAND ...\n"
	"  truth -o DIR [--agent PATH] [--from CLASS.METHOD] [--max N] -- java ARGS...\n"
	"        run a real JVM with the agent in ground-truth mode into DIR;\n"
	"        --from: record from the first entry of CLASS.METHOD on,\n"
	"        --max: stop after N bytecodes (agent truthfrom=, truthmax=)\n"
	"  scenario -o DIR [--threads N] [--iters N] [--chaos SEED]\n"
	"        write a small hand-made truth (no JVM needed) into DIR;\n"
	"        --chaos: random events that follow no program (robustness)\n"
	"  synth DIR [options]\n"
	"        add simulated jvm, sched and pt/cpuN streams to a truth bundle\n"
	"    --seed S            random seed (default 1)\n"
	"    --cpus N            simulated CPUs (default 2)\n"
	"    --loss PCT          drop PCT%% of the bytecodes' trace (OVF, truncated AUX)\n"
	"    --aux-size BYTES    AUX buffer model: buffer per CPU (default: unlimited)\n"
	"    --drain MBPS        AUX buffer model: drain rate in MB/s (default 200)\n"
	"    --psb-period BYTES  bytes between PSB+ (default 4096)\n"
	"    --no-retcomp        no return compression\n"
	"    --no-tsc            no TSC packets\n"
	"    --mtc               MTC packets every 8 crystal ticks (320 ns), TMA after TSC\n"
	"    --cyc               CYC packets (core cycles) before TNT, TIP, PGE, PGD, MTC\n"
	"    --jitter NS         max |BPF clock - PT clock| of sched records (default 0)\n"
	"    --quantum-us US     scheduler time slice (default 3000)\n"
	"    --block-prob P      chance a thread blocks at a slice end (default 0.2)\n"
	"    --irq-every N       an interrupt every N instructions on average\n"
	"                        (FUP+PGD and PGE mid-codelet; default 0: none)\n"
	"    --no-jit            interpret everything\n"
	"    --jit-invoke N      invocations before compiling (default 500)\n"
	"    --jit-backedge N    back edges before compiling (default 5000)\n"
	"    --osr               on-stack replacement: the back edge that compiles a\n"
	"                        method moves its interpreted frame into the code\n"
	"    --inline-size N     max inlined callee bytecode size (default 35)\n"
	"    --pcmap all|safepoints\n"
	"                        pc maps of every bytecode's code (default), or\n"
	"                        only of calls and safepoint polls, as HotSpot\n"
	"                        writes them with -XX:-DebugNonSafepoints\n"
	"    --code-cache BYTES  code cache size; when full, old code is flushed,\n"
	"                        unloaded and its addresses reused (default 48 MiB)\n"
	"    --cost-interp NS    time per interpreted bytecode (default 20)\n"
	"    --cost-jit NS       time per compiled bytecode (default 2)\n"
	"    --no-itruth         do not write the instruction-level truth\n"
	"  verify DIR\n"
	"        decode each pt/cpuN with libipt (insn and block decoders) and\n"
	"        compare with sim/itruth/cpuN\n";

static int bad_usage(const char *msg)
{
	fprintf(stderr, "jpbpf-sim: %s\n%s", msg, usage);
	return 2;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*v = x;
	return 0;
}

static int parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end ? -1 : 0;
}

static struct jpb_bundle *open_bundle(const char *dir, int create)
{
	struct jpb_bundle *b;
	int rc = create ? jpb_bundle_create(&b, dir) : jpb_bundle_open(&b, dir);
	if (rc) {
		fprintf(stderr, "jpbpf-sim: %s: %s\n", dir, jpb_errstr(rc));
		return NULL;
	}
	return b;
}

/* ---- scenario ---- */

static int cmd_scenario(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "chaos", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct scenario_opts so = { 1, 50, 0 };
	const char *out = NULL;
	uint64_t v;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'c':
			if (parse_u64(optarg, &so.chaos) || !so.chaos)
				return bad_usage("--chaos: a nonzero seed");
			break;
		case 't':
		case 'i':
			if (parse_u64(optarg, &v) || v == 0 || v > 1000000)
				return bad_usage("--threads/--iters: a number from 1 to 1000000");
			*(c == 't' ? &so.threads : &so.iters) = (unsigned)v;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return bad_usage("bad option");
		}
	}
	if (!out || optind != argc)
		return bad_usage("scenario needs -o DIR and no other arguments");
	struct jpb_bundle *b = open_bundle(out, 1);
	if (!b)
		return 1;
	char err[256] = "";
	int rc = scenario_write(b, &so, err, sizeof(err));
	if (!rc) {
		json_t *meta = jpb_meta_new_base();
		json_object_set_new(meta, "truth_source", json_string("scenario"));
		rc = jpb_meta_save(b, meta);
		json_decref(meta);
		if (rc)
			snprintf(err, sizeof(err), "meta.json: %s", jpb_bundle_errmsg(b));
	}
	if (rc)
		fprintf(stderr, "jpbpf-sim: %s: %s\n", out, err);
	jpb_bundle_free(b);
	return rc ? 1 : 0;
}

/* ---- truth ---- */

static int cmd_truth(int argc, char **argv, const char *argv0)
{
	static const struct option lo[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "agent", required_argument, NULL, 'a' },
		{ "from", required_argument, NULL, 'f' },
		{ "max", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *agent = getenv("JPBPF_AGENT"), *from = NULL;
	uint64_t max = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'a':
			agent = optarg;
			break;
		case 'f':
			if (!strchr(optarg, '.') || strchr(optarg, ','))
				return bad_usage("--from: CLASS.METHOD, e.g. pkg.Main.run");
			from = optarg;
			break;
		case 'm':
			if (parse_u64(optarg, &max) || !max)
				return bad_usage("--max: a positive number of bytecodes");
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return bad_usage("bad option");
		}
	}
	if (!out || optind >= argc)
		return bad_usage("truth needs -o DIR -- java ARGS...");
	char path[PATH_MAX + 32];
	if (!agent) { /* beside this binary, as the build lays it out */
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			snprintf(self, sizeof(self), "%s", argv0);
		else
			self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		snprintf(path, sizeof(path), "%s/libjpbpf-agent.so", slash ? self : ".");
		agent = path;
	}
	if (access(agent, R_OK)) {
		fprintf(stderr, "jpbpf-sim: agent %s: %s\n", agent, strerror(errno));
		return 2;
	}
	char opt[PATH_MAX * 2 + 640], bound[600] = "";
	if (max)
		snprintf(bound, sizeof(bound), ",truthmax=%llu", (unsigned long long)max);
	if (from)
		snprintf(bound + strlen(bound), sizeof(bound) - strlen(bound),
			 ",truthfrom=%.500s", from);
	snprintf(opt, sizeof(opt), "-agentpath:%s=out=%s,truth%s", agent, out, bound);
	int n = argc - optind;
	char **av = calloc((size_t)n + 2, sizeof(char *));
	if (!av)
		return 1;
	av[0] = argv[optind];
	av[1] = opt;
	for (int i = 1; i < n; i++)
		av[i + 1] = argv[optind + i];
	pid_t pid = fork();
	if (pid < 0) {
		perror("jpbpf-sim: fork");
		free(av);
		return 1;
	}
	if (pid == 0) {
		execvp(av[0], av);
		fprintf(stderr, "jpbpf-sim: %s: %s\n", av[0], strerror(errno));
		_exit(127);
	}
	free(av);
	int st;
	if (waitpid(pid, &st, 0) < 0) {
		perror("jpbpf-sim: waitpid");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "jpbpf-sim: the JVM failed (status %d)\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return 1;
	}
	return 0;
}

/* ---- synth ---- */

enum { O_SEED = 256, O_CPUS, O_LOSS, O_AUX, O_DRAIN, O_PSB, O_NORET, O_NOTSC,
       O_JITTER, O_QUANTUM, O_BLOCK, O_NOJIT, O_JINV, O_JBE, O_INL, O_CI, O_CJ,
       O_NOIT, O_CACHE, O_IRQ, O_MTC, O_CYC, O_OSR, O_PCMAP };

static int synth_opt(struct sim_opts *o, int c, const char *arg)
{
	uint64_t v = 0;
	double d = 0;
	int num = c != O_NORET && c != O_NOTSC && c != O_NOJIT && c != O_NOIT &&
		  c != O_MTC && c != O_CYC && c != O_OSR && c != O_PCMAP;
	int dbl = c == O_LOSS || c == O_BLOCK || c == O_DRAIN;
	if (num && (dbl ? parse_double(arg, &d) : parse_u64(arg, &v)))
		return bad_usage("option needs a number");
	switch (c) {
	case O_SEED: o->seed = v; break;
	case O_CPUS:
		if (v < 1 || v > 256)
			return bad_usage("--cpus: 1 to 256");
		o->cpus = (unsigned)v;
		break;
	case O_LOSS:
		if (d < 0 || d > 99)
			return bad_usage("--loss: a percentage from 0 to 99");
		o->loss_pct = d;
		break;
	case O_AUX: o->pt.buf_size = v; break;
	case O_DRAIN:
		if (d <= 0)
			return bad_usage("--drain: MB/s > 0");
		o->pt.drain_bpns = d * 1e6 / 1e9;
		break;
	case O_PSB:
		if (v < 256 || v > (1u << 20))
			return bad_usage("--psb-period: 256 to 1048576 bytes");
		o->pt.psb_period = (uint32_t)v;
		break;
	case O_NORET: o->pt.retcomp = 0; break;
	case O_NOTSC: o->pt.tsc = 0; break;
	case O_JITTER:
		if (v > 1000000000)
			return bad_usage("--jitter: at most 1e9 ns");
		o->jitter_ns = (int64_t)v;
		break;
	case O_QUANTUM:
		if (v < 1)
			return bad_usage("--quantum-us: at least 1");
		o->quantum_ns = v * 1000;
		break;
	case O_BLOCK:
		if (d < 0 || d > 1)
			return bad_usage("--block-prob: 0 to 1");
		o->block_prob = d;
		break;
	case O_NOJIT: o->jit.enabled = 0; break;
	case O_JINV: o->jit.invoke_threshold = (uint32_t)(v ? v : 1); break;
	case O_JBE: o->jit.backedge_threshold = (uint32_t)(v ? v : 1); break;
	case O_INL: o->jit.max_inline_size = (uint32_t)v; break;
	case O_CI: o->cost_interp_ns = v; break;
	case O_CJ: o->cost_jit_ns = v; break;
	case O_NOIT: o->itruth = 0; break;
	case O_IRQ: o->irq_every = v; break;
	case O_MTC: o->pt.mtc = 1; break;
	case O_CYC: o->pt.cyc = 1; break;
	case O_OSR: o->jit.osr = 1; break;
	case O_PCMAP:
		if (strcmp(arg, "all") && strcmp(arg, "safepoints"))
			return bad_usage("--pcmap: all or safepoints");
		o->coarse_pcmaps = !strcmp(arg, "safepoints");
		break;
	case O_CACHE:
		if (v < 256 || v > (48u << 20))
			return bad_usage("--code-cache: 256 to 50331648 bytes");
		o->jit.code_cache = v;
		break;
	default:
		return bad_usage("bad option");
	}
	return 0;
}

static void default_opts(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->cpus = 2;
	o->pt = (struct ptenc_opts){ .psb_period = 4096, .retcomp = 1, .tsc = 1,
				     .cbr = 20, .mtc = 0, .mtc_freq = 3, .buf_size = 0, .drain_bpns = 0.2,
				     .aux_watermark = 64u << 10 };
	o->jit = (struct jit_opts){ 1, 500, 5000, 35, 2, 4, 48u << 20 };
	o->cost_interp_ns = 20;
	o->cost_jit_ns = 2;
	o->cost_rt_ns = 300;
	o->cost_native_ns = 500;
	o->quantum_ns = 3000000;
	o->block_prob = 0.2;
	o->block_max_ns = 2000000;
	o->loss_pct = -1;
	o->itruth = 1;
	o->start_ns = 1000000000000ull; /* 1000 s after boot */
	o->pid = 4242;
}

/* The simulated run starts where the real JVM's agent started, so its
 * records share one clock with the agent records the bundle keeps (class
 * files, threads); a bundle without them (scenario) keeps DEFAULT. */
static uint64_t agent_start_ns(struct jpb_bundle *b, uint64_t def)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	uint64_t t = def;
	if (jpb_reader_open(b, "jvm", &r))
		return def;
	while (jpb_reader_next(r, &rec) == 0)
		if (rec.type == JPB_REC_JVM_INFO) {
			t = rec.time_ns ? rec.time_ns : def;
			break;
		}
	jpb_reader_free(r);
	return t;
}

static int write_all(struct jpb_bundle *b, const struct sim *s)
{
	char err[512] = "";
	int rc = out_jvm(b, s, err, sizeof(err));
	if (!rc)
		rc = out_pt(b, s, err, sizeof(err));
	if (!rc)
		rc = out_sched(b, s, err, sizeof(err));
	if (!rc)
		rc = out_sim(b, s, err, sizeof(err));
	if (!rc)
		rc = out_meta(b, s, err, sizeof(err));
	if (rc)
		fprintf(stderr, "jpbpf-sim: %s: %s\n", jpb_bundle_dir(b), err);
	return rc;
}

static int run_synth(struct jpb_bundle *b, const struct sim_opts *o,
		     const struct truth *t)
{
	struct sim s;
	uint64_t *events = NULL;
	if (o->loss_pct > 0) {
		/* The schedule does not depend on loss: a dry run counts each
		 * CPU's bytecodes, then the plan drops PCT% of them. */
		struct sim_opts dry = *o;
		dry.itruth = 0;
		sim_init(&s, &dry, t);
		sim_run(&s);
		events = calloc(o->cpus, sizeof(uint64_t));
		if (!events)
			return 1;
		memcpy(events, s.cpu_events, o->cpus * sizeof(uint64_t));
		sim_fini(&s);
	}
	sim_init(&s, o, t);
	if (events)
		loss_plan_make(&s, events, o->loss_pct);
	free(events);
	sim_run(&s);
	int rc = write_all(b, &s);
	uint64_t lost = 0;
	for (size_t i = 0; i < s.nthr; i++)
		lost += s.thr[i].lost_bytecodes;
	size_t nn;
	jit_nmethods(s.jit, &nn);
	fprintf(stderr,
		"jpbpf-sim: %zu threads, %llu bytecodes (%llu in lost trace), "
		"%zu nmethods, %llu deopts, %llu blind frames, %llu resyncs on %u CPUs\n",
		s.nthr, (unsigned long long)t->nbytecodes, (unsigned long long)lost,
		nn, (unsigned long long)s.deopts, (unsigned long long)s.blind,
		(unsigned long long)s.resyncs,
		o->cpus);
	sim_fini(&s);
	return rc ? 1 : 0;
}

static int cmd_synth(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, O_SEED },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "loss", required_argument, NULL, O_LOSS },
		{ "aux-size", required_argument, NULL, O_AUX },
		{ "drain", required_argument, NULL, O_DRAIN },
		{ "psb-period", required_argument, NULL, O_PSB },
		{ "no-retcomp", no_argument, NULL, O_NORET },
		{ "no-tsc", no_argument, NULL, O_NOTSC },
		{ "jitter", required_argument, NULL, O_JITTER },
		{ "quantum-us", required_argument, NULL, O_QUANTUM },
		{ "block-prob", required_argument, NULL, O_BLOCK },
		{ "no-jit", no_argument, NULL, O_NOJIT },
		{ "jit-invoke", required_argument, NULL, O_JINV },
		{ "jit-backedge", required_argument, NULL, O_JBE },
		{ "inline-size", required_argument, NULL, O_INL },
		{ "cost-interp", required_argument, NULL, O_CI },
		{ "cost-jit", required_argument, NULL, O_CJ },
		{ "no-itruth", no_argument, NULL, O_NOIT },
		{ "code-cache", required_argument, NULL, O_CACHE },
		{ "irq-every", required_argument, NULL, O_IRQ },
		{ "mtc", no_argument, NULL, O_MTC },
		{ "cyc", no_argument, NULL, O_CYC },
		{ "osr", no_argument, NULL, O_OSR },
		{ "pcmap", required_argument, NULL, O_PCMAP },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sim_opts o;
	default_opts(&o);
	int c;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c == '?')
			return bad_usage("bad option");
		int rc = synth_opt(&o, c, optarg);
		if (rc)
			return rc;
	}
	if (optind + 1 != argc)
		return bad_usage("synth needs exactly one bundle directory");
	if (o.loss_pct >= 0 && o.pt.buf_size)
		return bad_usage("--loss and --aux-size are exclusive");
	struct jpb_bundle *b = open_bundle(argv[optind], 0);
	if (!b)
		return 1;
	struct truth t;
	char err[512];
	int rc = truth_load(b, &t, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "jpbpf-sim: %s: %s\n", argv[optind], err);
		jpb_bundle_free(b);
		return 1;
	}
	long unknown = locals_load(b, &t, err, sizeof(err));
	if (unknown < 0) {
		fprintf(stderr, "jpbpf-sim: %s: %s\n", argv[optind], err);
		truth_fini(&t);
		jpb_bundle_free(b);
		return 1;
	}
	t.unknown_locals = (size_t)unknown;
	if (!t.nthreads) {
		fprintf(stderr, "jpbpf-sim: %s: the truth has no threads\n", argv[optind]);
		truth_fini(&t);
		jpb_bundle_free(b);
		return 1;
	}
	o.start_ns = agent_start_ns(b, o.start_ns);
	rc = run_synth(b, &o, &t);
	truth_fini(&t);
	jpb_bundle_free(b);
	return rc;
}

/* ---- verify ---- */

static int cmd_verify(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 2)
		return bad_usage("verify needs exactly one bundle directory");
	struct jpb_bundle *b = open_bundle(argv[1], 0);
	if (!b)
		return 1;
	struct verify_stats st;
	int rc = verify_bundle(b, stderr, &st);
	jpb_bundle_free(b);
	printf("verify: %llu truth instructions, %llu decoded instructions, %llu "
	       "blocks, %llu overflows, %llu enables, %llu disables: %s\n",
	       (unsigned long long)st.truth, (unsigned long long)st.insns,
	       (unsigned long long)st.blocks, (unsigned long long)st.overflows,
	       (unsigned long long)st.enables, (unsigned long long)st.disables,
	       rc == 0 ? "match" : "MISMATCH");
	printf("packets: psb=%llu tnt=%llu tip=%llu pge=%llu pgd=%llu fup=%llu "
	       "ovf=%llu tsc=%llu mode=%llu cbr=%llu mtc=%llu tma=%llu cyc=%llu "
	       "ip16=%llu ip32=%llu ip48=%llu\n",
	       (unsigned long long)st.psb, (unsigned long long)st.tnt,
	       (unsigned long long)st.tip, (unsigned long long)st.pge,
	       (unsigned long long)st.pgd, (unsigned long long)st.fup,
	       (unsigned long long)st.ovf, (unsigned long long)st.tsc,
	       (unsigned long long)st.mode, (unsigned long long)st.cbr,
	       (unsigned long long)st.mtc, (unsigned long long)st.tma,
	       (unsigned long long)st.cyc,
	       (unsigned long long)st.ip16, (unsigned long long)st.ip32,
	       (unsigned long long)st.ip48);
	printf("sched: cpus=%llu switches=%llu migrating_threads=%llu\n",
	       (unsigned long long)st.cpus, (unsigned long long)st.switches,
	       (unsigned long long)st.migrating_threads);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return bad_usage("no command");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "synth"))
		return cmd_synth(argc - 1, argv + 1);
	if (!strcmp(cmd, "scenario"))
		return cmd_scenario(argc - 1, argv + 1);
	if (!strcmp(cmd, "truth"))
		return cmd_truth(argc - 1, argv + 1, argv[0]);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc - 1, argv + 1);
	return bad_usage("unknown command");
}
