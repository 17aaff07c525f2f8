/* SPDX-License-Identifier: MIT */
/* Record types of the "sched" domain, written by the BPF loader (docs/FORMAT.md). */
#ifndef JPBPF_RECORDS_SCHED_H
#define JPBPF_RECORDS_SCHED_H

#include "records.h"

#endif /* JPBPF_RECORDS_SCHED_H */
