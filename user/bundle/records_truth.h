/* SPDX-License-Identifier: MIT */
/* Record types of the "truth" domain, written by the simulator (docs/FORMAT.md). */
#ifndef JPBPF_RECORDS_TRUTH_H
#define JPBPF_RECORDS_TRUTH_H

#include "records.h"

#endif /* JPBPF_RECORDS_TRUTH_H */
