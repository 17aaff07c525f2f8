// SPDX-License-Identifier: MIT
/* The bundle directory: creation, opening, listing streams. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "bundle.h"
#include "bundle_int.h"

struct jpb_bundle {
	char dir[4096];
	char errmsg[1024];
	json_t *meta;
	char **streams;
	size_t nstreams;
};

int jpb_errno_code(int errnum)
{
	switch (errnum) {
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return jpb_err_nospc;
	case ENOMEM:
		return jpb_err_nomem;
	case ENOENT:
		return jpb_err_not_found;
	case EEXIST:
		return jpb_err_exists;
	default:
		return jpb_err_io;
	}
}

void jpb_bundle_set_err(struct jpb_bundle *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->errmsg, sizeof(b->errmsg), fmt, ap);
	va_end(ap);
}

static int mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = mkdir(path, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -1;
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

int jpb_mkdirs_for(struct jpb_bundle *b, const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	if (mkdir_p(dir) != 0) {
		int e = errno;
		jpb_bundle_set_err(b, "%s: cannot create directory: %s", dir,
				   strerror(e));
		return jpb_errno_code(e);
	}
	return 0;
}

static int bundle_alloc(struct jpb_bundle **out, const char *dir)
{
	if (!out || !dir || !*dir || strlen(dir) >= 4000)
		return jpb_err_invalid;
	struct jpb_bundle *b = calloc(1, sizeof(*b));
	if (!b)
		return jpb_err_nomem;
	snprintf(b->dir, sizeof(b->dir), "%s", dir);
	size_t n = strlen(b->dir);
	while (n > 1 && b->dir[n - 1] == '/')
		b->dir[--n] = '\0';
	*out = b;
	return 0;
}

int jpb_bundle_create(struct jpb_bundle **out, const char *dir)
{
	int err = bundle_alloc(out, dir);
	if (err)
		return err;
	struct jpb_bundle *b = *out;
	char path[4096];
	snprintf(path, sizeof(path), "%s", b->dir);
	if (mkdir_p(path) != 0) {
		int e = errno;
		jpb_bundle_set_err(b, "%s: cannot create directory: %s", b->dir,
				   strerror(e));
		*out = NULL;
		jpb_bundle_free(b);
		return jpb_errno_code(e);
	}
	return 0;
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n > m && strcmp(s + n - m, suf) == 0;
}

static void free_streams(struct jpb_bundle *b)
{
	for (size_t i = 0; i < b->nstreams; i++)
		free(b->streams[i]);
	free(b->streams);
	b->streams = NULL;
	b->nstreams = 0;
}

static int add_stream(struct jpb_bundle *b, const char *rel, size_t *cap)
{
	if (b->nstreams == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		char **p = realloc(b->streams, ncap * sizeof(*p));
		if (!p)
			return jpb_err_nomem;
		b->streams = p;
		*cap = ncap;
	}
	char *name = strdup(rel);
	if (!name)
		return jpb_err_nomem;
	name[strlen(name) - 4] = '\0'; /* drop ".jpb" */
	b->streams[b->nstreams++] = name;
	return 0;
}

/* A "/" B into BUF (just A if B is empty); -1 if it does not fit. */
static int join_path(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s%s%s", a, *a && *b ? "/" : "", b);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Walk DIR/REL (REL "" for the top) collecting *.jpb files, depth <= 3. */
static int scan(struct jpb_bundle *b, const char *rel, int depth, size_t *cap)
{
	char path[4096];
	if (join_path(path, sizeof(path), b->dir, rel))
		return 0;
	DIR *d = opendir(path);
	if (!d)
		return depth == 0 ? jpb_errno_code(errno) : 0;
	int err = 0;
	struct dirent *e;
	while (!err && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[4096], full[4096];
		struct stat st;
		if (join_path(sub, sizeof(sub), rel, e->d_name) ||
		    join_path(full, sizeof(full), b->dir, sub) ||
		    stat(full, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 3)
			err = scan(b, sub, depth + 1, cap);
		else if (S_ISREG(st.st_mode) && has_suffix(e->d_name, ".jpb"))
			err = add_stream(b, sub, cap);
	}
	closedir(d);
	return err;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int jpb_bundle_list_streams(struct jpb_bundle *b, const char *const **names,
			    size_t *count)
{
	if (!b || !names || !count)
		return jpb_err_invalid;
	free_streams(b);
	size_t cap = 0;
	int err = scan(b, "", 0, &cap);
	if (err) {
		jpb_bundle_set_err(b, "%s: cannot list: %s", b->dir,
				   jpb_errstr(err));
		free_streams(b);
		return err;
	}
	if (b->nstreams)
		qsort(b->streams, b->nstreams, sizeof(*b->streams), cmp_names);
	*names = (const char *const *)b->streams;
	*count = b->nstreams;
	return 0;
}

int jpb_bundle_open(struct jpb_bundle **out, const char *dir)
{
	int err = bundle_alloc(out, dir);
	if (err)
		return err;
	struct jpb_bundle *b = *out;
	struct stat st;
	char meta[4200];
	const char *const *names;
	size_t n;
	snprintf(meta, sizeof(meta), "%s/meta.json", b->dir);
	if (stat(b->dir, &st) != 0 || !S_ISDIR(st.st_mode))
		err = jpb_err_not_found;
	else if (stat(meta, &st) != 0 &&
		 (jpb_bundle_list_streams(b, &names, &n) != 0 || n == 0))
		err = jpb_err_bad_magic;
	if (err) {
		*out = NULL;
		jpb_bundle_free(b);
	}
	return err;
}

void jpb_bundle_free(struct jpb_bundle *b)
{
	if (!b)
		return;
	free_streams(b);
	json_decref(b->meta);
	free(b);
}

const char *jpb_bundle_dir(const struct jpb_bundle *b)
{
	return b->dir;
}

const char *jpb_bundle_errmsg(const struct jpb_bundle *b)
{
	return b->errmsg;
}

int jpb_bundle_path(const struct jpb_bundle *b, const char *rel, char *buf,
		    size_t size)
{
	int n = snprintf(buf, size, "%s/%s", b->dir, rel);
	return n < 0 || (size_t)n >= size ? jpb_err_invalid : 0;
}

uint64_t jpb_bundle_stream_size(const struct jpb_bundle *b, const char *name)
{
	char path[4200];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/%s.jpb", b->dir, name);
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st))
		return 0;
	return (uint64_t)st.st_size;
}

/* meta.json lives here rather than in its own file because it shares the
 * bundle's private state (the cached object). */
int jpb_meta_load(struct jpb_bundle *b, void **meta)
{
	char path[4200];
	json_error_t jerr;
	if (!b || !meta)
		return jpb_err_invalid;
	snprintf(path, sizeof(path), "%s/meta.json", b->dir);
	json_t *m = json_load_file(path, 0, &jerr);
	if (!m) {
		struct stat st;
		if (stat(path, &st) != 0) {
			jpb_bundle_set_err(b, "%s: missing", path);
			return jpb_err_not_found;
		}
		jpb_bundle_set_err(b, "%s: line %d: %s", path, jerr.line,
				   jerr.text);
		return jpb_err_bad_meta;
	}
	if (!json_is_object(m) ||
	    !json_is_integer(json_object_get(m, "format_version"))) {
		json_decref(m);
		jpb_bundle_set_err(b, "%s: no integer format_version", path);
		return jpb_err_bad_meta;
	}
	json_decref(b->meta);
	b->meta = m;
	*meta = m;
	return 0;
}
