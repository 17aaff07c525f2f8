/* SPDX-License-Identifier: MIT */
/*
 * libbpf's usdt.bpf.h includes <linux/errno.h>, which wants the
 * arch-specific <asm/errno.h>; with `-target bpf` clang does not search the
 * multiarch directory (/usr/include/x86_64-linux-gnu) where Debian keeps it.
 * The errno values are the generic ones on every arch jpbpf builds for.
 */
#include <asm-generic/errno.h>
