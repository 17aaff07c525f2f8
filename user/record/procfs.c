// SPDX-License-Identifier: MIT
/* /proc readers for the recorder. */
#include "record/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int jpb_procfs_tids(pid_t pid, uint32_t **tids, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	uint32_t *v = NULL;
	size_t len = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		unsigned long t = strtoul(e->d_name, &end, 10);
		if (*end || !t)
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 64;
			uint32_t *p = realloc(v, cap * sizeof(*v));
			if (!p) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = p;
		}
		v[len++] = (uint32_t)t;
	}
	closedir(d);
	if (len)
		qsort(v, len, sizeof(*v), cmp_u32);
	*tids = v;
	*n = len;
	return 0;
}

/* Reads a small proc file into BUF, NUL-terminated; returns bytes read. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < size) {
		ssize_t k = read(fd, buf + got, size - 1 - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

int jpb_procfs_nstid(pid_t pid, uint32_t tid, uint32_t *nstid)
{
	char path[96], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%u/status", (int)pid, tid);
	ssize_t n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	const char *line = strstr(buf, "\nNSpid:");
	if (!line)
		return -ENOTSUP; /* kernel before 4.1 */
	/* NSpid lists the id from the outermost to the innermost namespace. */
	const char *p = line + 7;
	unsigned long last = 0;
	for (;;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p)
			break;
		last = v;
		p = end;
		if (*p == '\n')
			break;
	}
	if (!last)
		return -EINVAL;
	*nstid = (uint32_t)last;
	return 0;
}

int jpb_procfs_comm(pid_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[96];
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	ssize_t n = read_small(path, buf, size);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int jpb_procfs_cmdline(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	ssize_t n = read_small(path, buf, size);
	if (n < 0)
		return (int)n;
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
	return 0;
}

int jpb_procfs_parse_maps_line(const char *line, struct jpb_procfs_map *m)
{
	char perms[8];
	unsigned maj, min;
	int off = 0;
	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &m->start, &m->end, perms, &m->pgoff, &maj, &min, &m->inode,
		   &off) != 7 || strlen(perms) < 3 || m->end < m->start)
		return -EINVAL;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
		  (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->dev_major = maj;
	m->dev_minor = min;
	const char *p = line + off;
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(m->path, sizeof(m->path), "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

int jpb_procfs_maps(pid_t pid,
		    int (*fn)(const struct jpb_procfs_map *m, void *arg),
		    void *arg)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	struct jpb_procfs_map *m = malloc(sizeof(*m));
	char *line = NULL;
	size_t cap = 0;
	int rc = m ? 0 : -ENOMEM;
	while (!rc && getline(&line, &cap, f) > 0)
		if (jpb_procfs_parse_maps_line(line, m) == 0)
			rc = fn(m, arg);
	free(line);
	free(m);
	fclose(f);
	return rc;
}

struct find_lib {
	const char *suffix;
	char *found;
	size_t size;
};

static int match_lib(const struct jpb_procfs_map *m, void *arg)
{
	struct find_lib *fl = arg;
	size_t n = strlen(m->path), k = strlen(fl->suffix);
	if (n < k || strcmp(m->path + n - k, fl->suffix) != 0)
		return 0;
	snprintf(fl->found, fl->size, "%s", m->path);
	return 1;
}

int jpb_procfs_find_lib(pid_t pid, const char *basename, char *buf,
			size_t size)
{
	char suffix[256], found[PATH_MAX] = "";
	snprintf(suffix, sizeof(suffix), "/%s", basename);
	struct find_lib fl = { suffix, found, sizeof(found) };
	int rc = jpb_procfs_maps(pid, match_lib, &fl);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -ENOENT;
	int n = snprintf(buf, size, "/proc/%d/root%s", (int)pid, found);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Where the cgroup-v2 hierarchy is mounted: /sys/fs/cgroup on pure-v2
 * systems, /sys/fs/cgroup/unified on hybrid ones. */
static int cgroup2_root(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = -ENOENT;
	if (!f)
		return -errno;
	while (rc && getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX];
		const char *sep = strstr(line, " - cgroup2 ");
		/* Fields: id parent major:minor root mount-point ... */
		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(buf, size, "%s", mnt);
			rc = 0;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

int jpb_procfs_cgroup_id(pid_t pid, uint64_t *id, char *path, size_t size)
{
	char file[64], buf[4096], root[PATH_MAX], dir[2 * PATH_MAX];
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	ssize_t n = read_small(file, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* The v2 entry is "0::/path". */
	const char *p = strncmp(buf, "0::", 3) == 0 ? buf : strstr(buf, "\n0::");
	if (!p || cgroup2_root(root, sizeof(root)) != 0)
		return -ENOENT;
	p += (*p == '\n') + 3;
	int len = (int)strcspn(p, "\n");
	snprintf(path, size, "%.*s", len, p);
	snprintf(dir, sizeof(dir), "%s%.*s", root, len, p);
	struct stat st;
	if (stat(dir, &st) != 0)
		return -errno;
	/* The v2 cgroup id, as BPF reads it (kernfs node id), is the
	 * directory's inode number. */
	*id = st.st_ino;
	return 0;
}
