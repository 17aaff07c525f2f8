/* SPDX-License-Identifier: MIT */
/*
 * Flow unit tests run on real class files: the Java source of a case is
 * compiled by javac at test time into a scratch directory, and its
 * classes are loaded into a program model.  Header-only: each test is its
 * own executable.
 */
#ifndef JPBPF_TESTS_FLOW_JAVA_FIXTURE_H
#define JPBPF_TESTS_FLOW_JAVA_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "java/program.h"

/* Write SRC as CLASS.java under $TESTTMP (or /tmp) and compile it; the
 * directory goes to DIR.  -1: no javac or a compile error, so the caller
 * skips its cases. */
static inline int java_fixture_compile(const char *cls, const char *src,
				       char *dir, size_t size)
{
	const char *tmp = getenv("TESTTMP");
	char path[1024], cmd[2600];
	snprintf(dir, size, "%s/flow-%s-%d", tmp ? tmp : "/tmp", cls, (int)getpid());
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s.java", dir, cls);
	FILE *fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(src, fp);
	fclose(fp);
	const char *javac = "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac";
	if (access(javac, X_OK))
		javac = "javac";
	snprintf(cmd, sizeof(cmd), "%s -d %s %s 2>/dev/null", javac, dir, path);
	return system(cmd) ? -1 : 0;
}

/* Add DIR/NAME.class to P. */
static inline int java_fixture_load(struct jprog *p, const char *dir,
				    const char *name)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.class", dir, name);
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return -1;
	uint8_t buf[65536];
	size_t len = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	struct java_diag d;
	return jprog_add_class(p, buf, len, 0, &d) < 0 ? -1 : 0;
}

/* A program of SRC's classes CLS[0..N), CLS[0] being the file's top-level
 * class, loaded in that order (the hierarchy's candidate order), or NULL
 * when there is no javac (the caller's cases skip).  A class that does
 * not load aborts the test: the fixture itself is wrong. */
static inline struct jprog *java_fixture_program(const char *src,
						 const char *const *cls, size_t n)
{
	char dir[512];
	struct jprog *p;
	if (java_fixture_compile(cls[0], src, dir, sizeof(dir)))
		return NULL;
	if (jprog_alloc(&p))
		abort();
	for (size_t i = 0; i < n; i++) {
		if (java_fixture_load(p, dir, cls[i])) {
			fprintf(stderr, "java_fixture: %s/%s.class does not load\n", dir, cls[i]);
			abort();
		}
	}
	return p;
}

#endif
