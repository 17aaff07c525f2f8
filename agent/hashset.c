// SPDX-License-Identifier: MIT
/*
 * A small thread-safe set: the method ids already described (methods.c)
 * and the class names the hook delivered (classes.c).  Open addressing on
 * a 64-bit key; a name's key is its hash, and the name itself is kept to
 * tell two names with one hash apart.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hashset.h"

struct hset_slot {
	uint64_t key;  /* 0 = empty */
	char *name;    /* names only */
	uint32_t len;
};

struct hset {
	pthread_mutex_t lock;
	struct hset_slot *slots;
	size_t cap, used;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int grow(struct hset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4096;
	struct hset_slot *n = calloc(cap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slots[i].key)
			continue;
		size_t j = slot_of(s->slots[i].key, cap);
		while (n[j].key)
			j = (j + 1) & (cap - 1);
		n[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = n;
	s->cap = cap;
	return 0;
}

struct hset *hset_new(void)
{
	struct hset *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (grow(s) != 0) {
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void hset_free(struct hset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i].name);
	pthread_mutex_destroy(&s->lock);
	free(s->slots);
	free(s);
}

static int same(const struct hset_slot *sl, uint64_t key, const char *name,
		size_t len)
{
	if (sl->key != key)
		return 0;
	if (!name)
		return !sl->name;
	return sl->name && sl->len == len && !memcmp(sl->name, name, len);
}

/* Look KEY (and NAME, if any) up and add it if ADD; returns 1 if it was
 * present, 0 if not, -1 if it could not be added. */
static int lookup(struct hset *s, uint64_t key, const char *name, size_t len,
		  int add)
{
	int rc = 0;
	key = key ? key : 1;
	pthread_mutex_lock(&s->lock);
	if (add && (s->used + 1) * 2 > s->cap && grow(s) != 0) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	size_t i = slot_of(key, s->cap);
	while (s->slots[i].key && !same(&s->slots[i], key, name, len))
		i = (i + 1) & (s->cap - 1);
	if (s->slots[i].key) {
		rc = 1;
	} else if (add) {
		char *copy = name ? strndup(name, len) : NULL;
		if (name && !copy) {
			rc = -1;
		} else {
			s->slots[i] = (struct hset_slot){ key, copy, (uint32_t)len };
			s->used++;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int hset_add(struct hset *s, uint64_t key)
{
	int rc = lookup(s, key, NULL, 0, 1);
	return rc < 0 ? -1 : !rc;
}

static uint64_t hash_name(const char *p, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
	return h;
}

int hset_add_name(struct hset *s, const char *name, size_t len)
{
	int rc = lookup(s, hash_name(name, len), name, len, 1);
	return rc < 0 ? -1 : !rc;
}

int hset_has_name(struct hset *s, const char *name, size_t len)
{
	return lookup(s, hash_name(name, len), name, len, 0) == 1;
}
