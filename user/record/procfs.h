/* SPDX-License-Identifier: MIT */
/*
 * What the recorder reads about its target from /proc: threads, pid
 * namespace ids, names, executable mappings, the cgroup.  Functions return
 * 0 or a negative errno (-ENOENT: the process or thread is gone).
 */
#ifndef JPBPF_PROCFS_H
#define JPBPF_PROCFS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The thread ids in /proc/PID/task, sorted; *tids is malloc'd. */
int jpb_procfs_tids(pid_t pid, uint32_t **tids, size_t *n);

/* The innermost NSpid of TID (the id the thread sees itself as). */
int jpb_procfs_nstid(pid_t pid, uint32_t tid, uint32_t *nstid);

/* /proc/PID/task/TID/comm (TID 0: the process), without the newline. */
int jpb_procfs_comm(pid_t pid, uint32_t tid, char *buf, size_t size);

/* /proc/PID/cmdline with NULs as spaces. */
int jpb_procfs_cmdline(pid_t pid, char *buf, size_t size);

struct jpb_procfs_map {
	uint64_t start, end, pgoff, inode;
	uint32_t prot; /* PROT_READ | PROT_WRITE | PROT_EXEC */
	uint32_t dev_major, dev_minor;
	char path[PATH_MAX]; /* "" if anonymous; as the target sees it */
};

/* One line of /proc/PID/maps; -EINVAL if it is not one. */
int jpb_procfs_parse_maps_line(const char *line, struct jpb_procfs_map *m);

/* Calls FN for each mapping of PID, in address order; a non-zero return
 * from FN stops the walk and is returned. */
int jpb_procfs_maps(pid_t pid,
		    int (*fn)(const struct jpb_procfs_map *m, void *arg),
		    void *arg);

/* The host path of the first mapped file whose name ends in "/BASENAME",
 * through /proc/PID/root so it works for containers.  -ENOENT if none. */
int jpb_procfs_find_lib(pid_t pid, const char *basename, char *buf,
			size_t size);

/* The cgroup-v2 id (the cgroup directory's inode) of PID, and its path
 * relative to the cgroup root.  -ENOENT without a v2 hierarchy. */
int jpb_procfs_cgroup_id(pid_t pid, uint64_t *id, char *path, size_t size);

#endif /* JPBPF_PROCFS_H */
