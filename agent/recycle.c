// SPDX-License-Identifier: MIT
/* Size-classed stacks of free blocks (recycle.h). */
#include <stdlib.h>

#include "recycle.h"

static size_t class_size(int c)
{
	return (size_t)1 << (RECYCLE_MIN_LOG2 + c);
}

/* The smallest class whose blocks all hold N bytes, or -1. */
static int class_for(size_t n)
{
	for (int i = 0; i < RECYCLE_CLASSES; i++)
		if (n <= class_size(i))
			return i;
	return -1;
}

/* The largest class a block of CAP bytes can serve, or -1. */
static int class_of(size_t cap)
{
	int c = -1;
	for (int i = 0; i < RECYCLE_CLASSES && cap >= class_size(i); i++)
		c = i;
	return c;
}

/* From N's class, or the next one up (at most twice the size asked) if
 * that is empty: records of one kind vary in size around a class edge. */
void *recycle_take(struct recycle *r, size_t n, size_t *cap)
{
	int c = class_for(n);
	for (int i = c; c >= 0 && i <= c + 1 && i < RECYCLE_CLASSES; i++) {
		if (!r->n[i])
			continue;
		r->bytes -= class_size(i);
		*cap = class_size(i);
		return r->blk[i][--r->n[i]];
	}
	return NULL;
}

int recycle_give(struct recycle *r, void *p, size_t cap)
{
	int c = class_of(cap);
	if (!p || c < 0 || cap > class_size(RECYCLE_CLASSES - 1) ||
	    r->n[c] == RECYCLE_SLOTS || r->bytes + class_size(c) > r->max)
		return 0;
	r->blk[c][r->n[c]++] = p;
	r->bytes += class_size(c);
	return 1;
}

void recycle_free(struct recycle *r)
{
	for (int i = 0; i < RECYCLE_CLASSES; i++)
		while (r->n[i])
			free(r->blk[i][--r->n[i]]);
	r->bytes = 0;
}
