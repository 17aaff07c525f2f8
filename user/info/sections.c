// SPDX-License-Identifier: MIT
/* The `jpbpf info` sections, one per writer domain. */
#include "info.h"

const struct info_section *const info_sections[] = {
	NULL,
};
