// SPDX-License-Identifier: MIT
/*
 * One pass over a .symtab for several names (symtab.h).  libjvm.so's has
 * ~58,000 symbols on JDK 17 and ~70,000 on 25 (1.4-1.7 MB, names 2.7-3.3
 * MB): reading and walking it was ~2-2.5 ms of CPU per name when each
 * name had its own pass.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "symtab.h"

/* The string table of a symbol table, checked once so that every name in
 * it ends inside it. */
static const char *strtab_of(Elf *elf, const GElf_Shdr *sh, size_t *len)
{
	Elf_Data *d = elf_getdata(elf_getscn(elf, sh->sh_link), NULL);
	if (!d || !d->d_buf || !d->d_size ||
	    ((const char *)d->d_buf)[d->d_size - 1] != 0)
		return NULL;
	*len = d->d_size;
	return d->d_buf;
}

/* Marks W[i] found with S if it is still wanted and named by the string
 * at OFF of STR (LEN bytes, NUL-terminated); returns how many were
 * marked.  The length is checked first: a byte load instead of a call
 * to strcmp for nearly every symbol. */
static size_t take(struct symtab_want *w, size_t n,
		   const char *str, size_t len, size_t off, const GElf_Sym *s)
{
	size_t got = 0;
	for (size_t i = 0; i < n; i++) {
		if (w[i].found || w[i].len >= len - off ||
		    str[off + w[i].len] != 0 ||
		    memcmp(w[i].name, str + off, w[i].len) != 0)
			continue;
		w[i].value = s->st_value;
		w[i].size = s->st_size;
		w[i].found = 1;
		got++;
	}
	return got;
}

/* Returns the number of names still missing, or -1 if the section
 * cannot be read. */
static long scan_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct symtab_want *w, size_t n, size_t missing)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t slen;
	const char *str = strtab_of(elf, sh, &slen);
	if (!d || !str || !sh->sh_entsize)
		return -1;
	size_t nsym = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < nsym && missing; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || !s.st_name ||
		    s.st_name >= slen)
			continue;
		missing -= take(w, n, str, slen, s.st_name, &s);
	}
	return (long)missing;
}

static int scan(Elf *elf, struct symtab_want *w, size_t n)
{
	Elf_Scn *scn = NULL;
	size_t missing = n;
	int seen = 0;
	/* Every .symtab is scanned until all names are found, but at least
	 * one is, to tell "absent" from "stripped". */
	while ((!seen || missing) && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		long left = scan_section(elf, scn, &sh, w, n, missing);
		if (left < 0)
			return -1;
		missing = (size_t)left;
		seen = 1;
	}
	return seen ? 0 : -1;
}

int symtab_find(const char *path, struct symtab_want *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		w[i].found = 0;
		w[i].len = strlen(w[i].name);
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Mapped, not read: only the two tables' pages are touched. */
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = elf ? scan(elf, w, n) : -1;
	elf_end(elf);
	close(fd);
	if (rc != 0)
		for (size_t i = 0; i < n; i++)
			w[i].found = 0;
	return rc;
}
