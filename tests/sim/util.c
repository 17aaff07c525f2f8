// SPDX-License-Identifier: MIT
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("jpbpf-sim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void die_nomem(void)
{
	die("out of memory");
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_nomem();
	return q;
}

void *xcalloc(size_t n, size_t size)
{
	void *q = calloc(n ? n : 1, size ? size : 1);
	if (!q)
		die_nomem();
	return q;
}
