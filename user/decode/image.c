// SPDX-License-Identifier: MIT
/*
 * The code the trace ran through, from the jvm stream: interpreter and
 * stubs (code blobs), codelets and dispatch tables for classification, and
 * compiled methods with their pc maps.  All code bytes go into one scratch
 * file so libipt maps them as file sections through its section cache:
 * that keeps libipt's block cache (attached to cached sections) effective,
 * which a read callback would defeat.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode_int.h"
#include "records_jvm.h"

struct pending {
	uint64_t off, size, vaddr;
	uint8_t kind;
	uint32_t index;
	const char *file; /* NULL: the code file */
};

struct loader {
	struct jpd_image *im;
	const struct jpd_clock *clk;
	FILE *code;
	uint64_t codelen;
	struct pending *pend;
	size_t npend, cappend;
	size_t capcl, capdis, capnm;
	uint32_t nblobs;
	char *err;
	size_t errsize;
};

static int add_code(struct loader *l, const uint8_t *p, uint64_t size,
		    uint64_t vaddr, uint8_t kind, uint32_t index)
{
	if (!size)
		return 0;
	if (JPB_GROW(l->pend, l->npend, l->cappend))
		return jpb_err_nomem;
	if (fwrite(p, 1, size, l->code) != size)
		return jpb_err_io;
	l->pend[l->npend++] = (struct pending){ l->codelen, size, vaddr, kind,
						index, NULL };
	l->codelen += size;
	return 0;
}

static uint8_t codelet_what(const struct jpb_str *d)
{
	static const char *const entries[] = { "entry point (kind", "zerolocals",
					       "native", "intrinsic",
					       "accessor", "empty" };
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
		if (memmem(d->ptr, d->len, entries[i], strlen(entries[i])) &&
		    !memmem(d->ptr, d->len, "return", 6))
			return JPB_TR_METHOD_ENTRY;
	return JPB_TR_INTERP_STUB;
}

static int on_codelet(struct loader *l, const struct jpb_rec_jvm_codelet *c)
{
	struct jpd_image *im = l->im;
	if (c->end <= c->begin)
		return 0;
	if (JPB_GROW(im->codelets, im->ncodelets, l->capcl))
		return jpb_err_nomem;
	uint8_t what = codelet_what(&c->description);
	im->codelets[im->ncodelets++] = (struct jpd_codelet){
		c->begin, c->end, c->bytecode, c->index, what,
		what == JPB_TR_METHOD_ENTRY &&
			memmem(c->description.ptr, c->description.len, "zerolocals", 10),
		0
	};
	return 0;
}

static int on_dispatch(struct loader *l, const struct jpb_rec_jvm_dispatch *d)
{
	struct jpd_image *im = l->im;
	/* The safepoint table sends every bytecode to the same code: it says
	 * nothing about the opcode. */
	if (d->table.len == 6 && !memcmp(d->table.ptr, "safept", 6))
		return 0;
	for (uint32_t op = 0; op < 256 && (op + 1) * 8 <= d->entries.len; op++) {
		uint64_t a = jpb_le64(d->entries.ptr + op * 8);
		if (!a)
			continue;
		if (JPB_GROW(im->dispatch, im->ndispatch, l->capdis))
			return jpb_err_nomem;
		im->dispatch[im->ndispatch++] =
			(struct jpd_dispatch){ a, (uint8_t)op, (uint8_t)d->tos };
	}
	return 0;
}

/* pc map: u64 pc, u32 nframes, nframes x (u64 method, i32 bci). */
static int parse_pcmap(struct jpd_nmethod *nm, const struct jpb_bytes *m)
{
	struct jpb_cur c = jpb_cur_init(m->ptr, m->len);
	size_t cap = 0, fcap = 0;
	while (jpb_cur_left(&c) >= 12) {
		uint64_t pc;
		uint32_t nf;
		jpb_cur_u64(&c, &pc);
		jpb_cur_u32(&c, &nf);
		if ((uint64_t)nf * 12 > jpb_cur_left(&c))
			return jpb_err_corrupt;
		if (JPB_GROW(nm->pcs, nm->npcs, cap))
			return jpb_err_nomem;
		uint32_t keep = nf < JPB_DECODED_MAX_FRAMES ? nf : JPB_DECODED_MAX_FRAMES;
		nm->pcs[nm->npcs++] = (struct jpd_pcentry){ pc, nm->nframes, keep };
		for (uint32_t i = 0; i < nf; i++) {
			uint64_t mid;
			uint32_t bci;
			jpb_cur_u64(&c, &mid);
			jpb_cur_u32(&c, &bci);
			if (i >= keep)
				continue;
			size_t nfr = nm->nframes;
			if (JPB_GROW(nm->frames, nfr, fcap))
				return jpb_err_nomem;
			nm->frames[nm->nframes++] =
				(struct jpb_decoded_frame){ mid, (int32_t)bci };
		}
	}
	return jpb_cur_left(&c) ? jpb_err_corrupt : 0;
}

static int cmp_pc(const void *a, const void *b)
{
	const struct jpd_pcentry *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Every pc's event bytes after its kind and time, encoded once, each
 * followed by the kind and zero time delta of a compiled event: the events
 * of pcs k..m-1 at one time are then the first one's kind and delta and
 * one copy of tails[tail_off[k], tail_off[m] - 2) (jpd_nm_run). */
static int encode_tails(struct jpd_nmethod *nm)
{
	nm->tail_off = calloc(nm->npcs + 1, sizeof(*nm->tail_off));
	if (!nm->tail_off)
		return jpb_err_nomem;
	struct jpb_buf b = { 0 };
	struct jpb_decoded_event e = { .kind = JPB_DEV_COMPILED };
	const uint8_t next[2] = { JPB_DEV_COMPILED, 0 };
	for (uint32_t k = 0; k < nm->npcs; k++) {
		const struct jpd_pcentry *pe = &nm->pcs[k];
		e.ip = pe->pc;
		e.nframes = pe->nframes;
		memcpy(e.frames, nm->frames + pe->frame0, pe->nframes * sizeof(*e.frames));
		nm->tail_off[k] = (uint32_t)b.len;
		if (jpb_decoded_event_tail(&b, &e) || jpb_buf_put(&b, next, sizeof(next))) {
			jpb_buf_fini(&b);
			return jpb_err_nomem;
		}
	}
	nm->tail_off[nm->npcs] = (uint32_t)b.len;
	nm->tails = b.data;
	return 0;
}

static int on_nmethod(struct loader *l, const struct jpb_rec_jvm_nmethod_load *n,
		      uint64_t ns)
{
	struct jpd_image *im = l->im;
	if (JPB_GROW(im->nm, im->nnm, l->capnm))
		return jpb_err_nomem;
	struct jpd_nmethod *nm = &im->nm[im->nnm];
	memset(nm, 0, sizeof(*nm));
	nm->method_id = n->method_id;
	nm->begin = n->code_addr;
	nm->end = n->code_addr + n->code_size;
	nm->load_tsc = jpd_ns_to_tsc(l->clk, ns);
	nm->unload_tsc = UINT64_MAX;
	im->coarse_pcmaps += (n->flags & JPB_NM_F_COARSE) != 0;
	int rc = parse_pcmap(nm, &n->pcmap);
	if (rc == jpb_err_corrupt || !nm->npcs) {
		/* Its code still decodes; its events just carry no frames. */
		im->missing_pcmaps++;
		rc = 0;
	}
	if (rc)
		return rc;
	if (nm->npcs) /* qsort's array must not be NULL (UBSan) */
		qsort(nm->pcs, nm->npcs, sizeof(*nm->pcs), cmp_pc);
	rc = encode_tails(nm);
	if (rc)
		return rc;
	uint64_t size = n->code.len < n->code_size ? n->code.len : n->code_size;
	rc = add_code(l, n->code.ptr, size, n->code_addr, SK_NMETHOD,
		      (uint32_t)im->nnm);
	im->nnm++;
	return rc;
}

static void on_unload(struct loader *l, const struct jpb_rec_jvm_nmethod_unload *u,
		      uint64_t ns)
{
	struct jpd_image *im = l->im;
	for (size_t i = im->nnm; i-- > 0;)
		if (im->nm[i].begin == u->code_addr &&
		    im->nm[i].unload_tsc == UINT64_MAX) {
			if (im->nm[i].method_id != u->method_id)
				im->unload_mismatch++;
			im->nm[i].unload_tsc = jpd_ns_to_tsc(l->clk, ns);
			return;
		}
	im->unload_mismatch++;
}

static int on_record(struct loader *l, const struct jpb_record *rec)
{
	const struct jpb_rectype *t = jpb_rectype_find(rec->type);
	union {
		struct jpb_rec_jvm_codelet cl;
		struct jpb_rec_jvm_dispatch d;
		struct jpb_rec_jvm_code_blob cb;
		struct jpb_rec_jvm_nmethod_load nl;
		struct jpb_rec_jvm_nmethod_unload nu;
	} u;
	if (!t || rec->type < JPB_REC_JVM_CODELET ||
	    rec->type > JPB_REC_JVM_NMETHOD_UNLOAD)
		return 0;
	if (jpb_rec_decode(t, rec->payload, rec->size, &u))
		return jpb_err_corrupt;
	switch (rec->type) {
	case JPB_REC_JVM_CODELET:
		return on_codelet(l, &u.cl);
	case JPB_REC_JVM_DISPATCH:
		return on_dispatch(l, &u.d);
	case JPB_REC_JVM_CODE_BLOB: {
		uint64_t size = u.cb.code.len < u.cb.size ? u.cb.code.len : u.cb.size;
		return add_code(l, u.cb.code.ptr, size, u.cb.start,
				u.cb.kind == JPB_BLOB_INTERPRETER ? SK_INTERP : SK_STUB,
				l->nblobs++);
	}
	case JPB_REC_JVM_NMETHOD_LOAD:
		return on_nmethod(l, &u.nl, rec->time_ns);
	case JPB_REC_JVM_NMETHOD_UNLOAD:
		on_unload(l, &u.nu, rec->time_ns);
		return 0;
	}
	return 0;
}

/* The interpreter code holding [BEGIN, END), read from the code file
 * into BUF: 0, or 1 if no interpreter blob holds it all. */
static int interp_bytes(const struct loader *l, int fd, uint64_t begin,
			uint64_t end, uint8_t *buf)
{
	for (size_t i = 0; i < l->npend; i++) {
		const struct pending *p = &l->pend[i];
		if (p->kind != SK_INTERP || begin < p->vaddr || end > p->vaddr + p->size)
			continue;
		ssize_t want = (ssize_t)(end - begin);
		return pread(fd, buf, (size_t)want, (off_t)(p->off + begin - p->vaddr)) != want;
	}
	return 1;
}

/* Each zerolocals entry's locals loop, found in its bytes (entryloop.c):
 * the decoder counts the loop's jcc at every interpreted entry. */
static int find_entry_loops(struct loader *l)
{
	struct jpd_image *im = l->im;
	int fd = open(im->codefile, O_RDONLY | O_CLOEXEC), rc = 0;
	if (fd < 0) {
		snprintf(l->err, l->errsize, "decode: %s: %s", im->codefile, strerror(errno));
		return jpb_err_io;
	}
	for (size_t i = 0; i < im->ncodelets && !rc; i++) {
		struct jpd_codelet *c = &im->codelets[i];
		uint8_t buf[8192];
		if (!c->zerolocals)
			continue;
		im->zl_entries++;
		if (c->end - c->begin > sizeof(buf) ||
		    interp_bytes(l, fd, c->begin, c->end, buf))
			continue; /* not known: counted as not found */
		rc = jpd_entry_loop(buf, c->end - c->begin, c->begin, &c->loop_jcc);
		im->zl_loops += c->loop_jcc != 0;
	}
	close(fd);
	if (rc)
		snprintf(l->err, l->errsize, "decode: x86 disassembler (capstone): %s",
			 jpb_errstr(rc));
	return rc;
}

static int cmp_codelet(const void *a, const void *b)
{
	const struct jpd_codelet *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static uint32_t dispatch_slot(const struct jpd_image *im, uint64_t ip);

/* Every block in the interpreter asks whether it starts a bytecode: a
 * hash table of the dispatch entries (index + 1; 0 is empty). */
int jpd_image_hash_dispatch(struct jpd_image *im)
{
	size_t size = 16;
	while (size < 2 * im->ndispatch)
		size *= 2;
	im->dhash = calloc(size, sizeof(*im->dhash));
	if (!im->dhash)
		return jpb_err_nomem;
	im->dmask = (uint32_t)size - 1;
	for (size_t k = 0; k < im->ndispatch; k++) {
		uint32_t i = dispatch_slot(im, im->dispatch[k].addr);
		while (im->dhash[i])
			i = (i + 1) & im->dmask;
		im->dhash[i] = (uint32_t)k + 1;
	}
	return 0;
}

static int cmp_dispatch(const void *a, const void *b)
{
	const struct jpd_dispatch *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Two tables may name the same entry; one address naming two opcodes is
 * dropped (it would be a guess). */
static void dedupe_dispatch(struct jpd_image *im)
{
	size_t w = 0;
	for (size_t i = 0; i < im->ndispatch;) {
		size_t j = i + 1;
		int conflict = 0;
		while (j < im->ndispatch && im->dispatch[j].addr == im->dispatch[i].addr) {
			conflict |= im->dispatch[j].opcode != im->dispatch[i].opcode;
			j++;
		}
		if (!conflict)
			im->dispatch[w++] = im->dispatch[i];
		i = j;
	}
	im->ndispatch = w;
}

/* Address reuse: a method loaded over code still in the map becomes
 * visible only from its switch time (the older code's unload, else its
 * own load), see DECODER.md "Image over time". */
static int mark_reuse(struct jpd_image *im)
{
	size_t *live = malloc((im->nnm + 1) * sizeof(*live)), n = 0;
	if (!live)
		return jpb_err_nomem;
	for (size_t i = 0; i < im->nnm; i++) {
		struct jpd_nmethod *nm = &im->nm[i];
		nm->switch_tsc = nm->load_tsc;
		/* first live entry that ends after nm->begin (sorted by begin,
		 * non-overlapping) */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (im->nm[live[mid]].end <= nm->begin)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t k = lo;
		uint64_t sw = 0;
		while (k < n && im->nm[live[k]].begin < nm->end) {
			const struct jpd_nmethod *old = &im->nm[live[k]];
			nm->reuse = 1;
			if (old->unload_tsc != UINT64_MAX && old->unload_tsc > sw)
				sw = old->unload_tsc;
			k++;
		}
		if (nm->reuse && sw && sw < nm->load_tsc)
			nm->switch_tsc = sw;
		memmove(&live[lo + 1], &live[k], (n - k) * sizeof(*live));
		live[lo] = i;
		n = n - (k - lo) + 1;
	}
	free(live);
	return 0;
}

static int cmp_nmref(const void *a, const void *b)
{
	const struct jpd_nmref *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

int jpd_image_index_nmethods(struct jpd_image *im)
{
	im->nm_by_begin = malloc((im->nnm + 1) * sizeof(*im->nm_by_begin));
	if (!im->nm_by_begin)
		return jpb_err_nomem;
	for (size_t i = 0; i < im->nnm; i++) {
		im->nm_by_begin[i] = (struct jpd_nmref){ im->nm[i].begin, i };
		if (im->nm[i].end - im->nm[i].begin > im->nm_maxlen)
			im->nm_maxlen = im->nm[i].end - im->nm[i].begin;
	}
	if (im->nnm)
		qsort(im->nm_by_begin, im->nnm, sizeof(*im->nm_by_begin), cmp_nmref);
	return 0;
}

static int add_sections(struct loader *l)
{
	struct jpd_image *im = l->im;
	im->sects = calloc(l->npend + 1, sizeof(*im->sects));
	im->static_isids = calloc(l->npend + 1, sizeof(int));
	if (!im->sects || !im->static_isids)
		return jpb_err_nomem;
	for (size_t i = 0; i < l->npend; i++) {
		const struct pending *p = &l->pend[i];
		int isid = pt_iscache_add_file(im->iscache,
					       p->file ? p->file : im->codefile,
					       p->off, p->size, p->vaddr);
		if (isid < 0 || (size_t)isid > l->npend) {
			snprintf(l->err, l->errsize, "decode: jvm: libipt section: %s",
				 pt_errstr(pt_errcode(isid)));
			return jpb_err_internal;
		}
		im->sects[isid] = (struct jpd_sect){ p->kind, p->index, p->vaddr,
						      p->vaddr + p->size, p->off, p->file };
		if ((size_t)isid >= im->nsects)
			im->nsects = (size_t)isid + 1;
		if (p->kind == SK_NMETHOD)
			im->nm[p->index].isid = isid;
		else
			im->static_isids[im->nstatic++] = isid;
	}
	return 0;
}

/* Executable file mappings (libjvm.so, libc...) from the maps stream, as
 * file sections: the bundle's copy if it has one, else the path itself
 * when it is readable here (decoding on the recording host).  A missing
 * file is counted; its code then decodes as errors until the next PSB. */
static int on_mmap(struct loader *l, struct jpb_bundle *b,
		   const struct jpb_rec_mmap *m)
{
	struct jpd_image *im = l->im;
	char path[4096];
	if (m->end <= m->start || (!m->path.len && !m->copy.len) ||
	    (m->path.len && m->path.ptr[0] != '/'))
		return 0; /* anonymous, [vdso], [heap]... */
	if (m->copy.len) {
		char rel[4096];
		snprintf(rel, sizeof(rel), "%.*s", (int)m->copy.len, m->copy.ptr);
		if (jpb_bundle_path(b, rel, path, sizeof(path)))
			return 0;
	} else {
		snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.ptr);
	}
	if (access(path, R_OK)) {
		im->files_missing++;
		return 0;
	}
	size_t cap = im->nfiles;
	char **nf = realloc(im->files, (cap + 1) * sizeof(*nf));
	if (!nf)
		return jpb_err_nomem;
	im->files = nf;
	if (!(im->files[im->nfiles] = strdup(path)))
		return jpb_err_nomem;
	if (JPB_GROW(l->pend, l->npend, l->cappend))
		return jpb_err_nomem;
	l->pend[l->npend++] = (struct pending){ m->pgoff, m->end - m->start, m->start,
						SK_FILE, (uint32_t)im->nfiles,
						im->files[im->nfiles] };
	im->nfiles++;
	return 0;
}

static int read_maps(struct loader *l, struct jpb_bundle *b)
{
	struct jpb_reader *r;
	if (jpb_reader_open(b, "maps", &r))
		return 0; /* no maps: JIT and interpreter code only */
	struct jpb_record rec;
	int rc = 0;
	while (!rc && jpb_reader_next(r, &rec) == 0) {
		struct jpb_rec_mmap m;
		if (rec.type == JPB_REC_MMAP &&
		    !jpb_rec_decode(jpb_rectype_find(rec.type), rec.payload, rec.size, &m))
			rc = on_mmap(l, b, &m);
	}
	jpb_reader_free(r);
	return rc;
}

static void note_jvm_damage(struct jpd_image *im, const struct jpb_reader *r, int rc)
{
	char what[600];
	im->jvm_damaged = jpb_reader_damaged(r) + (rc != jpb_err_eos);
	snprintf(im->jvm_damage, sizeof(im->jvm_damage),
		 "decode: %s; what the damage held is missing",
		 jpb_reader_damage(r, rc, what, sizeof(what)));
}

static int read_jvm(struct loader *l, struct jpb_bundle *b)
{
	struct jpb_reader *r;
	int rc = jpb_reader_open(b, "jvm", &r);
	if (rc) {
		snprintf(l->err, l->errsize, "decode: jvm: %s", jpb_errstr(rc));
		return rc;
	}
	struct jpb_record rec;
	/* one damaged record loses its own metadata, not what follows */
	jpb_reader_skip_damaged(r);
	while ((rc = jpb_reader_next(r, &rec)) == 0)
		if ((rc = on_record(l, &rec))) {
			snprintf(l->err, l->errsize,
				 "decode: jvm: record at offset %llu: %s",
				 (unsigned long long)rec.offset, jpb_errstr(rc));
			break;
		}
	/* A damaged tail loses the metadata after it, not what came before;
	 * either loss is said (jpd_decode's warning). */
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt || jpb_reader_damaged(r))
		note_jvm_damage(l->im, r, rc);
	if (rc == jpb_err_truncated || rc == jpb_err_corrupt)
		rc = jpb_err_eos;
	jpb_reader_free(r);
	return rc == jpb_err_eos ? 0 : rc;
}

int jpd_image_load(struct jpd_image *im, struct jpb_bundle *b,
		   const struct jpd_clock *clk, char *err, size_t errsize)
{
	struct loader l = { .im = im, .clk = clk, .err = err, .errsize = errsize };
	im->iscache = pt_iscache_alloc("jpbpf");
	l.code = fopen(im->codefile, "w+");
	if (!im->iscache || !l.code) {
		snprintf(err, errsize, "decode: %s: %s", im->codefile, strerror(errno));
		if (l.code)
			fclose(l.code);
		return jpb_err_io;
	}
	int rc = read_jvm(&l, b);
	if (!rc)
		rc = read_maps(&l, b);
	if (fclose(l.code) && !rc) {
		snprintf(err, errsize, "decode: %s: write failed", im->codefile);
		rc = jpb_err_io;
	}
	if (!rc) {
		/* qsort's array must not be NULL, even when empty (UBSan):
		 * a jvm stream may have no interpreter metadata */
		if (im->ncodelets)
			qsort(im->codelets, im->ncodelets, sizeof(*im->codelets),
			      cmp_codelet);
		if (im->ndispatch)
			qsort(im->dispatch, im->ndispatch, sizeof(*im->dispatch),
			      cmp_dispatch);
		dedupe_dispatch(im);
		rc = find_entry_loops(&l);
		if (!rc)
			rc = jpd_image_hash_dispatch(im);
		if (!rc)
			rc = mark_reuse(im);
		if (!rc)
			rc = jpd_image_index_nmethods(im);
	}
	/* Keep every section mapped (with its block cache): the default
	 * limit of 0 unmaps a section after each use. */
	im->codelen = l.codelen;
	if (!rc && pt_iscache_set_limit(im->iscache, l.codelen + (64u << 20)) < 0)
		rc = jpb_err_internal;
	if (!rc)
		rc = add_sections(&l);
	free(l.pend);
	return rc;
}

void jpd_image_fini(struct jpd_image *im)
{
	if (im->iscache)
		pt_iscache_free(im->iscache);
	for (size_t i = 0; i < im->nnm; i++) {
		free(im->nm[i].pcs);
		free(im->nm[i].frames);
		free(im->nm[i].tails);
		free(im->nm[i].tail_off);
	}
	free(im->nm);
	free(im->nm_by_begin);
	free(im->codelets);
	free(im->dispatch);
	free(im->dhash);
	free(im->sects);
	free(im->static_isids);
	for (size_t i = 0; i < im->nfiles; i++)
		free(im->files[i]);
	free(im->files);
	memset(im, 0, sizeof(*im));
}

/* Every section stays mapped: the default limit 0 unmaps a section, and
 * drops its block cache, after each use. */
static uint64_t iscache_limit(const struct jpd_image *im)
{
	return im->codelen + (64u << 20);
}

int jpd_image_iscache_reset(const struct jpd_image *im,
			    struct pt_image_section_cache *c)
{
	/* a limit of 0 unmaps every section no decoder holds, which frees
	 * its block cache */
	if (pt_iscache_set_limit(c, 0) < 0 ||
	    pt_iscache_set_limit(c, iscache_limit(im)) < 0)
		return jpb_err_internal;
	return 0;
}

struct pt_image_section_cache *jpd_image_iscache(const struct jpd_image *im)
{
	struct pt_image_section_cache *c = pt_iscache_alloc("jpbpf-worker");
	if (!c || pt_iscache_set_limit(c, iscache_limit(im)) < 0)
		goto fail;
	/* Same files, same order: the same ids (checked). */
	for (size_t isid = 1; isid < im->nsects; isid++) {
		const struct jpd_sect *sec = &im->sects[isid];
		if (!sec->kind)
			goto fail;
		int id = pt_iscache_add_file(c, sec->file ? sec->file : im->codefile,
					     sec->file_off, sec->end - sec->begin,
					     sec->begin);
		if (id != (int)isid)
			goto fail;
	}
	return c;
fail:
	if (c)
		pt_iscache_free(c);
	return NULL;
}

static uint32_t dispatch_slot(const struct jpd_image *im, uint64_t ip)
{
	return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 40) & im->dmask;
}

const struct jpd_dispatch *jpd_find_dispatch(const struct jpd_image *im,
					     uint64_t ip)
{
	if (!im->dhash)
		return NULL;
	/* open addressing, at most half full: a probe or two */
	for (uint32_t i = dispatch_slot(im, ip);; i = (i + 1) & im->dmask) {
		uint32_t k = im->dhash[i];
		if (!k)
			return NULL;
		if (im->dispatch[k - 1].addr == ip)
			return &im->dispatch[k - 1];
	}
}

const struct jpd_codelet *jpd_find_codelet(const struct jpd_image *im,
					   uint64_t ip)
{
	size_t lo = 0, hi = im->ncodelets;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (im->codelets[mid].begin <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= im->codelets[lo - 1].end)
		return NULL;
	return &im->codelets[lo - 1];
}

const struct jpd_nmethod *jpd_find_nmethod(const struct jpd_image *im, uint64_t ip,
					   size_t nadded)
{
	size_t lo = 0, hi = im->nnm;
	while (lo < hi) { /* past the last nmethod beginning at or before ip */
		size_t mid = (lo + hi) / 2;
		if (im->nm_by_begin[mid].begin <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* code reused over time overlaps: any beginning less than the
	 * longest nmethod before ip may hold it */
	const struct jpd_nmethod *best = NULL;
	for (size_t k = lo; k-- > 0 && ip - im->nm_by_begin[k].begin < im->nm_maxlen;) {
		const struct jpd_nmethod *nm = &im->nm[im->nm_by_begin[k].i];
		if (ip < nm->end && im->nm_by_begin[k].i < nadded && (!best || nm > best))
			best = nm;
	}
	return best;
}

uint32_t jpd_pc_lower(const struct jpd_nmethod *nm, uint64_t pc)
{
	uint32_t lo = 0, hi = nm->npcs;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (nm->pcs[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
