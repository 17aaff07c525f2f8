// SPDX-License-Identifier: MIT
/* The u64 -> u32 open-addressing map of the reconstruction and recovery. */
#include <stdlib.h>
#include <string.h>

#include "flow/flow_int.h"

/* ---- u64 map ----------------------------------------------------------- */

static size_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* M's entries rehashed into NCAP slots (a power of two, more than
 * twice the entries). */
static int u64map_resize(struct u64map *m, size_t ncap)
{
	struct u64slot *v = calloc(ncap, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->v[i].key)
			continue;
		size_t j = hash64(m->v[i].key) & (ncap - 1);
		while (v[j].key)
			j = (j + 1) & (ncap - 1);
		v[j] = m->v[i];
	}
	free(m->v);
	m->v = v;
	m->cap = ncap;
	return 0;
}

static int u64map_grow(struct u64map *m)
{
	return u64map_resize(m, m->cap ? m->cap * 2 : 64);
}

int u64map_reserve(struct u64map *m, size_t n)
{
	size_t ncap = m->cap ? m->cap : 64;
	while (n * 2 > ncap)
		ncap *= 2;
	return ncap == m->cap ? 0 : u64map_resize(m, ncap);
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
		return -1;
	size_t j = hash64(key) & (m->cap - 1);
	while (m->v[j].key && m->v[j].key != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->v[j].key)
		m->n++;
	m->v[j] = (struct u64slot){ key, val };
	return 0;
}

int u64map_get(const struct u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	size_t j = hash64(key) & (m->cap - 1);
	while (m->v[j].key) {
		if (m->v[j].key == key) {
			*val = m->v[j].val;
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}

void u64map_fini(struct u64map *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}
