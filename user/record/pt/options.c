// SPDX-License-Identifier: MIT
/* The PT recorder's command-line settings, parsed into struct jpb_pt_config
 * so that `jpbpf record` (which owns the command line) wires them with a
 * loop instead of knowing each one. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "record/pt/pt.h"

const struct jpb_pt_option jpb_pt_options[] = {
	{ "snapshot", 2, "--snapshot[=SIZE]   flight recorder: keep the newest SIZE of "
	  "trace per ring (default: the whole buffer), write it on SIGUSR2 or at the end" },
	{ "buffer-size", 1, "--buffer-size SIZE  AUX buffer per ring, a power of two "
	  "(default 4M)" },
	{ "pt-per-thread", 0, "--pt-per-thread     one buffer per thread instead of "
	  "per CPU" },
	{ "kernel", 0, "--kernel            trace kernel code too (needs "
	  "perf_event_paranoid <= 1)" },
	{ "cyc", 2, "--cyc[=THRESH]      cycle-accurate timing (CYC packets)" },
	{ "noretcomp", 0, "--noretcomp         no return compression" },
	{ "mtc-period", 1, "--mtc-period N      MTC packet period, 0..15 (default 3)" },
	{ "no-mtc", 0, "--no-mtc            no MTC timing packets" },
	{ "psb-period", 1, "--psb-period N      a PSB every 2^(N+11) bytes (default 3)" },
	{ "no-switch-events", 0, "--no-switch-events  no perf context-switch records "
	  "(the BPF sched stream still has them)" },
	{ NULL, 0, NULL },
};

int jpb_pt_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return jpb_pt_err_invalid;
	errno = 0;
	uint64_t v = strtoull(s, &end, 10);
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (shift && (!strcasecmp(end, "B") || !strcasecmp(end, "iB")))
		end += strlen(end); /* 4MB, 4MiB */
	if (errno || *end || !v || v > (UINT64_MAX >> shift))
		return jpb_pt_err_invalid;
	*out = v << shift;
	return 0;
}

static int small(const char *name, const char *arg, unsigned *out, char *why,
		 size_t size)
{
	char *end;
	unsigned long v = arg ? strtoul(arg, &end, 10) : 0;
	if (!arg || !isdigit((unsigned char)*arg) || *end || v > 15) {
		snprintf(why, size, "--%s: '%s' is not a number in 0..15", name,
			 arg ? arg : "");
		return jpb_pt_err_invalid;
	}
	*out = (unsigned)v;
	return 0;
}

static int size_opt(const char *name, const char *arg, uint64_t *out,
		    char *why, size_t size)
{
	if (jpb_pt_parse_size(arg, out)) {
		snprintf(why, size, "--%s: '%s' is not a size (e.g. 4M, 512K)",
			 name, arg ? arg : "");
		return jpb_pt_err_invalid;
	}
	return 0;
}

int jpb_pt_config_option(struct jpb_pt_config *cfg, const char *name, const char *arg,
		     char *why, size_t size)
{
	unsigned v;
	int err = 0;
	if (!strcmp(name, "snapshot")) {
		if (!arg) {
			cfg->snapshot_size = cfg->aux_size;
			return 0;
		}
		return size_opt(name, arg, &cfg->snapshot_size, why, size);
	}
	if (!strcmp(name, "buffer-size")) {
		/* a snapshot of "the whole buffer" follows the buffer */
		int whole = cfg->snapshot_size && cfg->snapshot_size == cfg->aux_size;
		err = size_opt(name, arg, &cfg->aux_size, why, size);
		if (!err && whole)
			cfg->snapshot_size = cfg->aux_size;
		return err;
	}
	if (!strcmp(name, "pt-per-thread"))
		cfg->mode = JPB_PT_MODE_PER_THREAD;
	else if (!strcmp(name, "kernel"))
		cfg->exclude_kernel = 0;
	else if (!strcmp(name, "cyc")) {
		cfg->cyc = 1;
		if (arg && !(err = small(name, arg, &v, why, size)))
			cfg->cyc_thresh = v;
	} else if (!strcmp(name, "noretcomp"))
		cfg->noretcomp = 1;
	else if (!strcmp(name, "mtc-period")) {
		if (!(err = small(name, arg, &v, why, size))) {
			cfg->mtc_period = v;
			cfg->mtc = 1;
		}
	} else if (!strcmp(name, "no-mtc"))
		cfg->mtc = 0;
	else if (!strcmp(name, "psb-period")) {
		if (!(err = small(name, arg, &v, why, size)))
			cfg->psb_period = (int)v;
	} else if (!strcmp(name, "no-switch-events"))
		cfg->context_switch = 0;
	else {
		snprintf(why, size, "--%s: not a PT option", name);
		err = jpb_pt_err_invalid;
	}
	return err;
}
