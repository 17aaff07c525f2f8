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
	uint64_t *k = calloc(ncap, sizeof(*k));
	uint32_t *v = calloc(ncap, sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash64(m->keys[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
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
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->n++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

int u64map_get(const struct u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	size_t j = hash64(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*val = m->vals[j];
			return 1;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}

void u64map_fini(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
