// SPDX-License-Identifier: MIT
/* jpbpf record: options, the PT check, and the recorder (user/record/). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "record/pt/pt.h"
#include "record/record.h"

static void usage(FILE *f)
{
	fputs("Usage: jpbpf record -p PID [-d SECONDS] [-o DIR] [--no-pt] [OPTIONS]\n"
	      "Record a running JVM into bundle DIR.\n"
	      "  -p, --pid PID          the JVM to trace (host pid)\n"
	      "  -d, --duration SECONDS stop after SECONDS (default: until Ctrl-C\n"
	      "                         or the target exits)\n"
	      "  -o, --output DIR       bundle directory (default: jpbpf-PID-YYYYmmdd-HHMMSS)\n"
	      "      --no-pt            record everything but Intel PT: scheduling,\n"
	      "                         thread lifecycle, JIT code-cache USDT events,\n"
	      "                         clock calibration, memory maps and the agent\n"
	      "      --cgroup           also trace every task in the target's cgroup\n"
	      "      --agent PATH       the JVMTI agent library (default: next to jpbpf)\n"
	      "      --no-agent         do not attach the agent\n"
	      "      --btf PATH         kernel BTF to use (default: /sys/kernel/btf/vmlinux;\n"
	      "                         also $JPBPF_BTF)\n"
	      "      --ringbuf-kb N     BPF ring buffer size, a power of two (default 16384)\n"
	      "  -q, --quiet            no status line on a terminal\n"
	      "Intel PT options:\n",
	      f);
	for (const struct jpb_pt_option *po = jpb_pt_options; po->name; po++)
		fprintf(f, "      %s\n", po->help);
	fputs(
	      "Exit status: 0 recorded, 1 runtime failure (e.g. no such pid),\n"
	      "2 usage error or unsupported environment (no PT without --no-pt, no BTF,\n"
	      "no permission).\n",
	      f);
}

struct record_args {
	struct jpb_record_opts o;
	struct jpb_pt_config pt_cfg;
	int no_pt;
	int quiet;
	char outbuf[64];
};

/* getopt values of the PT options: PT_OPT_BASE + index in jpb_pt_options. */
#define PT_OPT_BASE 0x100
#define MAX_OPTS 48

/* The fixed options, then the PT recorder's, then the terminator. */
static void build_options(struct option *opts, const struct option *fixed)
{
	size_t n = 0;
	for (; fixed[n].name; n++)
		opts[n] = fixed[n];
	for (size_t i = 0; jpb_pt_options[i].name && n + 1 < MAX_OPTS; i++, n++)
		opts[n] = (struct option){ jpb_pt_options[i].name, jpb_pt_options[i].has_arg,
					   NULL, PT_OPT_BASE + (int)i };
	opts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static int jpb_pt_option(struct record_args *a, int c)
{
	char why[256] = "";
	const char *name = jpb_pt_options[c - PT_OPT_BASE].name;
	if (jpb_pt_config_option(&a->pt_cfg, name, optarg, why, sizeof(why)) == 0)
		return 0;
	cli_err("%s", why);
	return -1;
}

static int parse_ringbuf(const char *s, uint32_t *kb)
{
	unsigned long long v;
	if (cli_parse_u64("--ringbuf-kb", s, &v))
		return -1;
	if (v < 4 || v > (1u << 20) || (v & (v - 1))) {
		cli_err("--ringbuf-kb: %s is not a power of two in 4..1048576", s);
		return -1;
	}
	*kb = (uint32_t)v;
	return 0;
}

/* Returns -1 to go on, else an exit code. */
static int parse(int argc, char **argv, struct record_args *a)
{
	static const struct option fixed[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-pt", no_argument, NULL, 1 },
		{ "cgroup", no_argument, NULL, 2 },
		{ "agent", required_argument, NULL, 3 },
		{ "no-agent", no_argument, NULL, 4 },
		{ "btf", required_argument, NULL, 5 },
		{ "ringbuf-kb", required_argument, NULL, 6 },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct option opts[MAX_OPTS];
	unsigned long long pid = 0, secs = 0;
	int c;
	build_options(opts, fixed);
	jpb_pt_config_default(&a->pt_cfg);
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:d:o:qh", opts, NULL)) != -1) {
		if (c >= PT_OPT_BASE) {
			if (jpb_pt_option(a, c))
				return CLI_USAGE;
			continue;
		}
		switch (c) {
		case 'p':
			if (cli_parse_u64("--pid", optarg, &pid))
				return CLI_USAGE;
			break;
		case 'd':
			if (cli_parse_u64("--duration", optarg, &secs))
				return CLI_USAGE;
			break;
		case 'o': a->o.output = optarg; break;
		case 1: a->no_pt = 1; break;
		case 2: a->o.cgroup = 1; break;
		case 3: a->o.agent_path = optarg; break;
		case 4: a->o.agent_path = ""; break;
		case 5: a->o.btf_path = optarg; break;
		case 6:
			if (parse_ringbuf(optarg, &a->o.ringbuf_kb))
				return CLI_USAGE;
			break;
		case 'q': a->quiet = 1; break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (!pid || pid > 0x7fffffff || optind != argc) {
		if (!pid && optind == argc)
			cli_err("record: -p PID is required");
		usage(stderr);
		return CLI_USAGE;
	}
	a->o.pid = (pid_t)pid;
	a->o.duration_ms = secs * 1000u;
	if (!a->o.btf_path && getenv("JPBPF_BTF") && *getenv("JPBPF_BTF"))
		a->o.btf_path = getenv("JPBPF_BTF");
	if (!a->o.output) {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S",
			 localtime_r(&now, &tm));
		snprintf(a->outbuf, sizeof(a->outbuf), "jpbpf-%d-%s", (int)pid,
			 stamp);
		a->o.output = a->outbuf;
	}
	a->o.status_line = !a->quiet && isatty(STDERR_FILENO);
	return -1;
}

/* PT is required unless --no-pt; its probe says why it cannot be used,
 * and the configuration is checked against the PMU before anything is
 * recorded, so a refusal leaves no bundle behind. */
static int check_pt(struct record_args *a, struct jpb_pt_caps *caps)
{
	char why[512] = "";
	uint64_t word;
	int err = jpb_pt_probe("/", caps, why, sizeof(why));
	if (err) {
		cli_err("Intel PT cannot be used: %s", why);
		cli_err("without PT, 'jpbpf record --no-pt' still records scheduling, "
			"thread lifecycle, JIT code-cache events, clock calibration "
			"and the agent's data");
		return CLI_USAGE;
	}
	unsigned rings = a->pt_cfg.mode == JPB_PT_MODE_PER_CPU
				 ? (unsigned)caps->nr_cpus : 64;
	if (jpb_pt_config_word(caps, &a->pt_cfg, &word, why, sizeof(why)) ||
	    jpb_pt_config_check(caps, &a->pt_cfg, rings, why, sizeof(why))) {
		cli_err("Intel PT: %s", why);
		return CLI_USAGE;
	}
	a->o.pt_caps = caps;
	a->o.pt_cfg = &a->pt_cfg;
	return -1;
}

static int run(struct record_args *a)
{
	struct jpb_record_result res;
	char err[1024] = "";
	int rc = jpb_record_run(&a->o, &res, err, sizeof(err));
	if (rc) {
		cli_err("record: %s", err);
		return rc == jpb_record_err_env ? CLI_USAGE : CLI_FAIL;
	}
	fprintf(stderr, "jpbpf: recorded pid %d into %s: %llu events, %llu lost, "
		"%llu bytes, %llu bytes of PT%s%s%s\n", (int)a->o.pid, a->o.output,
		(unsigned long long)res.events, (unsigned long long)res.lost,
		(unsigned long long)res.bytes, (unsigned long long)res.pt_bytes,
		res.target_exited ? " (target exited)" : "",
		res.usdt ? "" : " (no USDT)", res.agent ? "" : " (no agent)");
	return CLI_OK;
}

int cli_record_main(int argc, char **argv, int oneshot, char *outdir,
		    size_t size)
{
	struct record_args a;
	memset(&a, 0, sizeof(a));
	int rc = parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (oneshot && a.no_pt) {
		cli_err("the one-shot mode decodes PT, so --no-pt does not fit it: "
			"use 'jpbpf record --no-pt'");
		return CLI_USAGE;
	}
	if (outdir)
		snprintf(outdir, size, "%s", a.o.output ? a.o.output : "");
	if (a.no_pt)
		return run(&a);
	struct jpb_pt_caps *caps = calloc(1, sizeof(*caps));
	if (!caps)
		return CLI_FAIL;
	rc = check_pt(&a, caps);
	if (rc < 0)
		rc = run(&a);
	free(caps);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	return cli_record_main(argc, argv, 0, NULL, 0);
}
