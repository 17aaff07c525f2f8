// SPDX-License-Identifier: MIT
/* meta.json "pt": everything the decoder needs to configure libipt
 * (cpu, cpuid 0x15 ratio, nominal frequency, MTC period) and what a bug
 * report needs to reproduce the configuration. */
#include <inttypes.h>
#include <stdio.h>

#include "record/pt/pt.h"

static json_t *formats_json(const struct jpb_pt_caps *caps)
{
	json_t *o = json_object();
	static const char *const word[] = { "config", "config1", "config2",
					    "config3" };
	for (size_t i = 0; o && i < caps->nformats; i++) {
		const struct jpb_pt_format *f = &caps->formats[i];
		char text[48];
		if (f->lo == f->hi)
			snprintf(text, sizeof(text), "%s:%u", word[f->word], f->lo);
		else
			snprintf(text, sizeof(text), "%s:%u-%u", word[f->word],
				 f->lo, f->hi);
		json_object_set_new(o, f->name, json_string(text));
	}
	return o;
}

static json_t *caps_json(const struct jpb_pt_caps *caps)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < caps->ncaps; i++)
		json_object_set_new(o, caps->caps[i].name,
				    json_integer(caps->caps[i].value));
	return o;
}

static json_t *regs_json(const uint32_t r[4])
{
	return json_pack("[IIII]", (json_int_t)r[0], (json_int_t)r[1],
			 (json_int_t)r[2], (json_int_t)r[3]);
}

static json_t *cpuid_json(const struct jpb_pt_cpuid *c)
{
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:b, s:b}",
			      "vendor", c->vendor, "max_leaf", (json_int_t)c->max_leaf,
			      "family", (json_int_t)c->family,
			      "model", (json_int_t)c->model,
			      "stepping", (json_int_t)c->stepping,
			      "hypervisor", c->hypervisor, "pt", c->pt_bit);
	if (!o)
		return NULL;
	if (c->has_leaf14) {
		json_object_set_new(o, "leaf14_0", regs_json(c->leaf14_0));
		json_object_set_new(o, "leaf14_1", regs_json(c->leaf14_1));
	}
	if (c->has_leaf15) {
		/* libipt pt_config.cpuid_0x15_eax / _ebx */
		json_object_set_new(o, "cpuid_0x15_eax", json_integer(c->tsc_ctc_den));
		json_object_set_new(o, "cpuid_0x15_ebx", json_integer(c->tsc_ctc_num));
		json_object_set_new(o, "crystal_hz", json_integer(c->crystal_hz));
	}
	if (c->base_mhz)
		json_object_set_new(o, "base_mhz", json_integer(c->base_mhz));
	return o;
}

static json_t *config_json(const struct jpb_pt_config *cfg, uint64_t config)
{
	char hex[24];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, config);
	return json_pack("{s:s, s:s, s:I, s:b, s:b, s:i, s:I, s:b, s:I, s:b, "
			 "s:i, s:b, s:b, s:I, s:I, s:I}",
			 "mode", cfg->mode == JPB_PT_MODE_PER_THREAD ? "per-thread"
								  : "per-cpu",
			 "config_hex", hex, "config", (json_int_t)config,
			 "branch", cfg->branch, "tsc", cfg->tsc, "mtc", cfg->mtc,
			 "mtc_period", (json_int_t)cfg->mtc_period,
			 "cyc", cfg->cyc, "cyc_thresh", (json_int_t)cfg->cyc_thresh,
			 "noretcomp", cfg->noretcomp,
			 "psb_period", cfg->psb_period,
			 "exclude_kernel", cfg->exclude_kernel,
			 "context_switch", cfg->context_switch,
			 "aux_size", (json_int_t)cfg->aux_size,
			 "data_size", (json_int_t)cfg->data_size,
			 "snapshot_size", (json_int_t)cfg->snapshot_size);
}

json_t *jpb_pt_meta_json(const struct jpb_pt_caps *caps, const struct jpb_pt_config *cfg,
		     uint64_t config)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "pmu_type", json_integer(caps->pmu_type));
	json_object_set_new(o, "format", formats_json(caps));
	json_object_set_new(o, "caps", caps_json(caps));
	json_object_set_new(o, "cpuid", cpuid_json(&caps->cpuid));
	if (caps->max_nonturbo_ratio)
		json_object_set_new(o, "max_nonturbo_ratio",
				    json_integer(caps->max_nonturbo_ratio));
	if (caps->tsc_art_den)
		json_object_set_new(o, "tsc_art_ratio",
				    json_pack("[II]", (json_int_t)caps->tsc_art_num,
					      (json_int_t)caps->tsc_art_den));
	json_object_set_new(o, "perf_event_paranoid", json_integer(caps->paranoid));
	if (cfg)
		json_object_set_new(o, "config", config_json(cfg, config));
	if (json_object_size(o) < 5) { /* a json_*_new above ran out of memory */
		json_decref(o);
		return NULL;
	}
	return o;
}
