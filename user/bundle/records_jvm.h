/* SPDX-License-Identifier: MIT */
/* Record types of the "jvm" domain, written by the agent (docs/FORMAT.md). */
#ifndef JPBPF_RECORDS_JVM_H
#define JPBPF_RECORDS_JVM_H

#include "records.h"

#endif /* JPBPF_RECORDS_JVM_H */
