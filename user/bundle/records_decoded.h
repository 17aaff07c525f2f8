/* SPDX-License-Identifier: MIT */
/* Record types of the "decoded" domain, written by the decoder (docs/FORMAT.md). */
#ifndef JPBPF_RECORDS_DECODED_H
#define JPBPF_RECORDS_DECODED_H

#include "records.h"

#endif /* JPBPF_RECORDS_DECODED_H */
