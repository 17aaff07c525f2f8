// SPDX-License-Identifier: MIT
/* The `jpbpf info` sections, one per writer domain. */
#include "info.h"
extern const struct info_section info_section_sched;
extern const struct info_section info_section_usdt;

const struct info_section *const info_sections[] = {
	&info_section_sched,
	&info_section_usdt,
	NULL,
};
