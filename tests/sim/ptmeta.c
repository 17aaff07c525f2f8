// SPDX-License-Identifier: MIT
#include "ptmeta.h"

#include <stdio.h>
#include <string.h>

#include "record/pt/pt.h"
#include "util.h"

static void fmt(struct jpb_pt_caps *c, const char *name, unsigned lo, unsigned hi)
{
	struct jpb_pt_format *f = &c->formats[c->nformats++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->word = 0;
	f->lo = lo;
	f->hi = hi;
}

static void cap(struct jpb_pt_caps *c, const char *name, uint32_t v)
{
	struct jpb_pt_cap *p = &c->caps[c->ncaps++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->value = v;
}

/* A 2 GHz Skylake server: TSC = 25 MHz crystal x 160 / 2. */
static void skylake(struct jpb_pt_caps *c, unsigned cpus)
{
	memset(c, 0, sizeof(*c));
	c->pmu_type = 8;
	fmt(c, "pt", 0, 0);
	fmt(c, "cyc", 1, 1);
	fmt(c, "pwr_evt", 4, 4);
	fmt(c, "fup_on_ptw", 5, 5);
	fmt(c, "mtc", 9, 9);
	fmt(c, "tsc", 10, 10);
	fmt(c, "noretcomp", 11, 11);
	fmt(c, "ptw", 12, 12);
	fmt(c, "branch", 13, 13);
	fmt(c, "mtc_period", 14, 17);
	fmt(c, "cyc_thresh", 19, 22);
	fmt(c, "psb_period", 24, 27);
	fmt(c, "event", 31, 31);
	cap(c, "cr3_filtering", 1);
	cap(c, "cycle_thresholds", 0x3fff);
	cap(c, "ip_filtering", 1);
	cap(c, "max_subleaf", 1);
	cap(c, "mtc", 1);
	cap(c, "mtc_periods", 0x249);
	cap(c, "num_address_ranges", 2);
	cap(c, "psb_cyc", 1);
	cap(c, "psb_periods", 0x3f);
	cap(c, "ptwrite", 0);
	cap(c, "single_range_output", 1);
	cap(c, "topa_multiple_entries", 1);
	cap(c, "topa_output", 1);
	c->max_nonturbo_ratio = 20;
	c->tsc_art_num = 160;
	c->tsc_art_den = 2;
	c->paranoid = -1;
	c->cap_perfmon = 1;
	c->nr_cpus = c->ncpus_online = (int)cpus;
	struct jpb_pt_cpuid *id = &c->cpuid;
	snprintf(id->vendor, sizeof(id->vendor), "GenuineIntel");
	id->max_leaf = 0x16;
	id->pt_bit = 1;
	id->family = 6;
	id->model = 0x55;
	id->stepping = 4;
	id->has_leaf14 = 1;
	id->leaf14_0[0] = 1;
	id->leaf14_0[1] = 0xf;
	id->leaf14_0[2] = 0x7;
	id->leaf14_1[0] = 0x249 << 16 | 2;
	id->leaf14_1[1] = 0x3f << 16 | 0x3fff;
	id->has_leaf15 = 1;
	id->tsc_ctc_den = 2;
	id->tsc_ctc_num = 160;
	id->crystal_hz = 25000000;
	id->base_mhz = 2000;
}

json_t *ptmeta_json(const struct sim_opts *o, uint64_t *config)
{
	struct jpb_pt_caps caps;
	skylake(&caps, o->cpus);
	struct jpb_pt_config cfg;
	jpb_pt_config_default(&cfg);
	cfg.tsc = o->pt.tsc;
	cfg.mtc = o->pt.mtc && o->pt.tsc;
	cfg.mtc_period = o->pt.mtc_freq;
	cfg.cyc = o->pt.cyc;
	cfg.cyc_thresh = 0; /* a CYC before every eligible packet */
	cfg.noretcomp = !o->pt.retcomp;
	/* a PSB every 2^(n+11) bytes; smaller test periods report 0 */
	int n = 0;
	while (n < 15 && (2048u << (n + 1)) <= o->pt.psb_period)
		n++;
	cfg.psb_period = n;
	cfg.aux_size = o->pt.buf_size ? o->pt.buf_size : 4u << 20;
	char why[256];
	if (jpb_pt_config_word(&caps, &cfg, config, why, sizeof(why)))
		die("simulated PT configuration: %s", why);
	json_t *j = jpb_pt_meta_json(&caps, &cfg, *config);
	if (!j)
		die_nomem();
	return j;
}
