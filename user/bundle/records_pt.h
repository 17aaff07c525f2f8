/* SPDX-License-Identifier: MIT */
/* Record types of the "pt" domain, written by the PT recorder (docs/FORMAT.md). */
#ifndef JPBPF_RECORDS_PT_H
#define JPBPF_RECORDS_PT_H

#include "records.h"

#endif /* JPBPF_RECORDS_PT_H */
