/* SPDX-License-Identifier: MIT */
/*
 * A few names looked up in one pass over an ELF file's .symtab (libjvm.so
 * keeps the dispatch tables and CodeHeap's methods only there, not in
 * .dynsym, so dlsym cannot find them).  No JVM or JNI dependency: the
 * unit test runs it on its own executable.
 */
#ifndef JPBPF_AGENT_SYMTAB_H
#define JPBPF_AGENT_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct symtab_want {
	const char *name; /* in */
	uint64_t value;   /* out: st_value of the first symbol NAME */
	uint64_t size;    /* out: its st_size */
	int found;        /* out: 1 if the .symtab has NAME */
	size_t len;       /* set by symtab_find: strlen(NAME) */
};

/* Scans PATH's .symtab once for the N names of W.  0 if it was read
 * (each W[i].found says whether it has the name); -1 if PATH has no
 * .symtab (stripped), is no ELF file or cannot be read (all found 0). */
__attribute__((visibility("hidden"))) int
symtab_find(const char *path, struct symtab_want *w, size_t n);

#endif /* JPBPF_AGENT_SYMTAB_H */
