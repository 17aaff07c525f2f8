// SPDX-License-Identifier: MIT
/*
 * Test helper for agent_cds: write the class files the agent read back
 * for boot-loader classes (jvm_class flag bit 2, loader 0) whose name
 * starts with PREFIX to OUTDIR/NAME.class, so the suite can compare them
 * byte for byte with the JDK's own `jimage extract` of the same classes.
 *
 *   cds_check DIR OUTDIR PREFIX
 *
 * Prints the number of files written; exit 0 if the bundle was read and
 * every file written, 1 otherwise, 2 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bundle.h"
#include "records.h"
#include "records_jvm.h"

static int mkdirs(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		int rc = mkdir(path, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

static int write_class(const char *out, const struct jpb_rec_jvm_class *c)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%.*s.class", out, (int)c->name.len,
		 c->name.ptr);
	if (mkdirs(path) != 0)
		return -1;
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = fwrite(c->bytes.ptr, 1, c->bytes.len, f);
	return fclose(f) == 0 && n == c->bytes.len ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: cds_check DIR OUTDIR PREFIX\n");
		return 2;
	}
	struct jpb_bundle *b;
	struct jpb_reader *r;
	struct jpb_record rec;
	size_t plen = strlen(argv[3]);
	unsigned long written = 0, failed = 0;
	int err = jpb_bundle_open(&b, argv[1]);
	if (err || (err = jpb_reader_open(b, "jvm", &r)) != 0) {
		fprintf(stderr, "%s: %s\n", argv[1], jpb_errstr(err));
		return 1;
	}
	while ((err = jpb_reader_next(r, &rec)) == 0) {
		struct jpb_rec_jvm_class c;
		if (rec.type != JPB_REC_JVM_CLASS ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload,
				   rec.size, &c) ||
		    !(c.flags & JPB_CLASS_F_RESOURCE) || c.loader != 0 ||
		    c.name.len < plen || memcmp(c.name.ptr, argv[3], plen))
			continue;
		if (write_class(argv[2], &c) == 0)
			written++;
		else
			failed++;
	}
	if (err != jpb_err_eos)
		fprintf(stderr, "%s\n", jpb_reader_errmsg(r));
	jpb_reader_free(r);
	jpb_bundle_free(b);
	printf("%lu\n", written);
	return err == jpb_err_eos && !failed ? 0 : 1;
}
