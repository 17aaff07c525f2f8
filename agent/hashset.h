/* SPDX-License-Identifier: MIT */
/*
 * A small thread-safe set (agent/hashset.c): the method ids the agent has
 * described, the class names the hook delivered.  Keys are 64-bit
 * integers or names (byte strings, not NUL-terminated).
 */
#ifndef JPBPF_AGENT_HASHSET_H
#define JPBPF_AGENT_HASHSET_H

#include <stddef.h>
#include <stdint.h>

#define HSET_LOCAL __attribute__((visibility("hidden")))

struct hset;

HSET_LOCAL struct hset *hset_new(void);
HSET_LOCAL void hset_free(struct hset *s);
/* Add KEY or NAME: 1 if it is new, 0 if it was there, -1 on no memory. */
HSET_LOCAL int hset_add(struct hset *s, uint64_t key);
HSET_LOCAL int hset_add_name(struct hset *s, const char *name, size_t len);
HSET_LOCAL int hset_has_name(struct hset *s, const char *name, size_t len);

#endif /* JPBPF_AGENT_HASHSET_H */
