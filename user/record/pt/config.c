// SPDX-License-Identifier: MIT
/* attr.config from the intel_pt PMU's format/ bit positions, and the
 * checks that turn a kernel EINVAL/EPERM into a reason before opening. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "record/pt/pt.h"

void jpb_pt_config_default(struct jpb_pt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = JPB_PT_MODE_PER_CPU;
	cfg->branch = 1;
	cfg->tsc = 1;
	cfg->mtc = -1;
	cfg->mtc_period = 3;
	cfg->psb_period = -1;
	cfg->exclude_kernel = 1;
	cfg->context_switch = 1;
	cfg->aux_size = 4u << 20;   /* perf's default for privileged users */
	cfg->data_size = 64u << 10;
}

int jpb_pt_format_set(const struct jpb_pt_caps *caps, const char *name, uint64_t val,
		  uint64_t words[4])
{
	const struct jpb_pt_format *f = jpb_pt_caps_format(caps, name);
	if (!f)
		return jpb_pt_err_unsupported;
	unsigned width = f->hi - f->lo + 1;
	uint64_t mask = width == 64 ? UINT64_MAX : ((1ull << width) - 1);
	if (val & ~mask)
		return jpb_pt_err_invalid;
	words[f->word] = (words[f->word] & ~(mask << f->lo)) | (val << f->lo);
	return 0;
}

static int set(const struct jpb_pt_caps *caps, const char *name, uint64_t val,
	       uint64_t words[4], char *why, size_t size)
{
	int err = jpb_pt_format_set(caps, name, val, words);
	if (err == jpb_pt_err_unsupported)
		snprintf(why, size, "this kernel's intel_pt PMU has no format/%s "
			 "field", name);
	else if (err)
		snprintf(why, size, "intel_pt %s=%" PRIu64 " does not fit its "
			 "format field", name, val);
	return err;
}

/* Is encoded VALUE one the CPU lists in caps/BITMAP?  0 is the hardware
 * default for cyc_thresh and psb_period and needs no bit; MTC periods
 * always do. */
static int allowed(const struct jpb_pt_caps *caps, const char *bitmap,
		   unsigned value, int zero_ok)
{
	uint32_t bits;
	if (value > 15)
		return 0;
	if (value == 0 && zero_ok)
		return 1;
	return jpb_pt_caps_get(caps, bitmap, &bits) == 0 && (bits >> value) & 1;
}

static int has_cap(const struct jpb_pt_caps *caps, const char *name)
{
	uint32_t v;
	return jpb_pt_caps_get(caps, name, &v) == 0 && v;
}

static int timing_bits(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		       uint64_t w[4], char *why, size_t size)
{
	int err = 0;
	int mtc = cfg->mtc < 0 ? has_cap(caps, "mtc") : cfg->mtc;
	if (mtc) {
		if (!has_cap(caps, "mtc") ||
		    !allowed(caps, "mtc_periods", cfg->mtc_period, 0)) {
			snprintf(why, size, "this CPU has no MTC with period %u "
				 "(caps/mtc, caps/mtc_periods)", cfg->mtc_period);
			return jpb_pt_err_unsupported;
		}
		if ((err = set(caps, "mtc", 1, w, why, size)) ||
		    (err = set(caps, "mtc_period", cfg->mtc_period, w, why, size)))
			return err;
	}
	if (cfg->cyc) {
		if (!has_cap(caps, "psb_cyc") ||
		    !allowed(caps, "cycle_thresholds", cfg->cyc_thresh, 1)) {
			snprintf(why, size, "this CPU has no CYC with threshold "
				 "%u (caps/psb_cyc, caps/cycle_thresholds)",
				 cfg->cyc_thresh);
			return jpb_pt_err_unsupported;
		}
		if ((err = set(caps, "cyc", 1, w, why, size)) ||
		    (err = set(caps, "cyc_thresh", cfg->cyc_thresh, w, why, size)))
			return err;
	}
	int psb = cfg->psb_period;
	if (psb < 0) /* perf's choice: a PSB every 16 KiB if configurable */
		psb = has_cap(caps, "psb_cyc") && allowed(caps, "psb_periods", 3, 0)
			? 3 : -1;
	if (psb >= 0) {
		if (!has_cap(caps, "psb_cyc") ||
		    !allowed(caps, "psb_periods", (unsigned)psb, 1)) {
			snprintf(why, size, "this CPU cannot set PSB period %d "
				 "(caps/psb_cyc, caps/psb_periods)", psb);
			return jpb_pt_err_unsupported;
		}
		err = set(caps, "psb_period", (uint64_t)psb, w, why, size);
	}
	return err;
}

int jpb_pt_config_word(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		   uint64_t *config, char *why, size_t size)
{
	uint64_t w[4] = { 0 };
	int err;
	*config = 0;
	/* "pt" (config bit 0) tells the kernel the other bits are meant as
	 * given; without it the kernel forces branch tracing on. */
	if (jpb_pt_caps_format(caps, "pt") && (err = set(caps, "pt", 1, w, why, size)))
		return err;
	if (!jpb_pt_caps_format(caps, "pt") && !cfg->branch) {
		snprintf(why, size, "this kernel cannot turn branch tracing off "
			 "(no format/pt)");
		return jpb_pt_err_unsupported;
	}
	if (cfg->branch && (err = set(caps, "branch", 1, w, why, size)))
		return err;
	if (cfg->tsc && (err = set(caps, "tsc", 1, w, why, size)))
		return err;
	if (cfg->noretcomp && (err = set(caps, "noretcomp", 1, w, why, size)))
		return err;
	if ((err = timing_bits(caps, cfg, w, why, size)))
		return err;
	if (w[1] || w[2] || w[3]) {
		snprintf(why, size, "intel_pt fields outside attr.config are not "
			 "supported by jpbpf");
		return jpb_pt_err_unsupported;
	}
	*config = w[0];
	return 0;
}

static int pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void fmt_size(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (1u << 20) && !(bytes & ((1u << 20) - 1)))
		snprintf(buf, size, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, size, "%" PRIu64 " KiB", bytes >> 10);
}

static int check_sizes(const struct jpb_pt_config *cfg, char *why, size_t size)
{
	uint64_t min = cfg->snapshot_size ? 4096 : 8192;
	if (!cfg->no_aux && (!pow2(cfg->aux_size) || cfg->aux_size < min)) {
		snprintf(why, size, "--buffer-size %" PRIu64 ": the AUX buffer "
			 "must be a power of two of at least %" PRIu64 " KiB",
			 cfg->aux_size, min >> 10);
		return jpb_pt_err_invalid;
	}
	if (!pow2(cfg->data_size) || cfg->data_size < 4096) {
		snprintf(why, size, "data area of %" PRIu64 " bytes: must be a "
			 "power of two of at least 4 KiB", cfg->data_size);
		return jpb_pt_err_invalid;
	}
	if (cfg->snapshot_size > cfg->aux_size || (cfg->no_aux && cfg->snapshot_size)) {
		snprintf(why, size, "--snapshot=%" PRIu64 " is larger than the "
			 "AUX buffer (--buffer-size %" PRIu64 ")",
			 cfg->snapshot_size, cfg->aux_size);
		return jpb_pt_err_invalid;
	}
	return 0;
}

int jpb_pt_config_check(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		    unsigned nrings, char *why, size_t size)
{
	int err = check_sizes(cfg, why, size);
	if (err)
		return err;
	if (!cfg->exclude_kernel && caps->paranoid > 1 && !caps->cap_perfmon) {
		snprintf(why, size, "tracing the kernel needs "
			 "kernel.perf_event_paranoid <= 1 (it is %d) or "
			 "CAP_PERFMON; drop --kernel to trace user space only",
			 caps->paranoid);
		return jpb_pt_err_paranoid;
	}
	/* The kernel charges each ring's pages (+1 header page) to the user's
	 * perf_event_mlock_kb x online CPUs, then to RLIMIT_MEMLOCK, and says
	 * EPERM beyond that unless CAP_IPC_LOCK (or paranoid -1). */
	if (caps->cap_ipc_lock || caps->paranoid < 0 || !caps->mlock_kb)
		return 0;
	uint64_t aux_bytes = cfg->no_aux ? 0 : cfg->aux_size;
	uint64_t per_ring = (aux_bytes + cfg->data_size + 4096) >> 10;
	uint64_t need = per_ring * nrings;
	uint64_t budget = caps->mlock_kb * (uint64_t)(caps->ncpus_online ?
						       caps->ncpus_online : 1);
	budget = caps->memlock_kb > UINT64_MAX - budget ? UINT64_MAX :
		budget + caps->memlock_kb;
	if (need > budget) {
		char aux[32];
		fmt_size(cfg->aux_size, aux, sizeof(aux));
		snprintf(why, size, "%u AUX buffers of %s need %" PRIu64 " KiB of "
			 "locked memory but kernel.perf_event_mlock_kb and "
			 "RLIMIT_MEMLOCK allow %" PRIu64 " KiB without "
			 "CAP_IPC_LOCK: run as root, grant CAP_IPC_LOCK, or use "
			 "a smaller --buffer-size", nrings, aux, need, budget);
		return jpb_pt_err_perm;
	}
	return 0;
}
