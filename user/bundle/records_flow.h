/* SPDX-License-Identifier: MIT */
/* Record types of the "flow" domain (0x06xx): the reconstructed per-thread
 * bytecode-level flow, written by reconstruction and recovery
 * (docs/FORMAT.md, "Stream: flow"). */
#ifndef JPBPF_RECORDS_FLOW_H
#define JPBPF_RECORDS_FLOW_H

#include "records.h"

#endif /* JPBPF_RECORDS_FLOW_H */
