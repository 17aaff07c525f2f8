// SPDX-License-Identifier: MIT
/*
 * decode_entryloop BUNDLE: the locals-zeroing loops the decoder finds in
 * a bundle's interpreter method entries (image.c, entryloop.c), loaded as
 * `jpbpf decode` loads them.  One line per method-entry codelet:
 *
 *	DESCRIPTION<TAB>zerolocals|other<TAB>loop +0xOFF BYTES|none
 *
 * OFF is the loop's jcc from the codelet's start and BYTES its encoding
 * (hex).  Needs only the jvm stream: an agent-only bundle will do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/decode_int.h"
#include "records_jvm.h"

/* The jcc's two first bytes, from the code file the image wrote. */
static void jcc_bytes(const struct jpd_image *im, uint64_t at, char *out)
{
	strcpy(out, "?");
	for (size_t i = 1; i < im->nsects; i++) {
		const struct jpd_sect *s = &im->sects[i];
		if (s->kind != SK_INTERP || at < s->begin || at + 2 > s->end)
			continue;
		FILE *f = fopen(im->codefile, "rb");
		uint8_t b[2];
		if (f && !fseek(f, (long)(s->file_off + at - s->begin), SEEK_SET) &&
		    fread(b, 1, 2, f) == 2)
			snprintf(out, 8, "%02x%02x", b[0], b[1]);
		if (f)
			fclose(f);
		return;
	}
}

static int print_entries(struct jpb_bundle *b, const struct jpd_image *im)
{
	struct jpb_reader *r;
	struct jpb_record rec;
	if (jpb_reader_open(b, "jvm", &r))
		return 1;
	while (jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_jvm_codelet c;
		if (rec.type != JPB_REC_JVM_CODELET ||
		    jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &c))
			continue;
		const struct jpd_codelet *k = jpd_find_codelet(im, c.begin);
		if (!k || k->begin != c.begin || k->what != JPB_TR_METHOD_ENTRY)
			continue;
		printf("%.*s\t%s\t", (int)c.description.len, c.description.ptr,
		       k->zerolocals ? "zerolocals" : "other");
		if (k->loop_jcc) {
			char hex[8];
			jcc_bytes(im, k->loop_jcc, hex);
			printf("loop +0x%llx %s\n",
			       (unsigned long long)(k->loop_jcc - k->begin), hex);
		} else {
			printf("none\n");
		}
	}
	jpb_reader_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct jpb_bundle *b;
	if (argc != 2 || jpb_bundle_open(&b, argv[1])) {
		fprintf(stderr, "usage: decode_entryloop BUNDLE\n");
		return 2;
	}
	static struct jpd_image im;
	struct jpd_clock clk = { 0 };
	char err[512] = "";
	snprintf(im.codefile, sizeof(im.codefile), "/tmp/entryloop-%d.code", (int)getpid());
	int rc = jpd_image_load(&im, b, &clk, err, sizeof(err));
	if (rc)
		fprintf(stderr, "decode_entryloop: %s\n", err[0] ? err : jpb_errstr(rc));
	else
		rc = print_entries(b, &im);
	unlink(im.codefile);
	jpd_image_fini(&im);
	jpb_bundle_free(b);
	return rc ? 1 : 0;
}
