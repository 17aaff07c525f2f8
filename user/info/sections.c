// SPDX-License-Identifier: MIT
/* The `jpbpf info` sections, one per writer domain. */
#include "info.h"

extern const struct info_section info_section_jvm;
extern const struct info_section info_section_truth;
extern const struct info_section info_section_sched;
extern const struct info_section info_section_usdt;
extern const struct info_section info_section_pt;
extern const struct info_section info_section_decoded;
extern const struct info_section info_section_flow;
extern const struct info_section info_section_java_threads;

const struct info_section *const info_sections[] = {
	&info_section_jvm,
	&info_section_truth,
	&info_section_sched,
	&info_section_usdt,
	&info_section_pt,
	&info_section_decoded,
	&info_section_flow,
	&info_section_java_threads,
	NULL,
};
