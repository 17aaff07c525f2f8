// SPDX-License-Identifier: MIT
/*
 * Compile level of an nmethod from its code address (nmethod_level.h).
 *
 * HotSpot finds the blob of a pc with the code heap's segment map: one
 * byte per segment (CodeCacheSegmentSize, 64 or 128 bytes), 0xFF for a
 * free segment, 0 for a block's first segment and otherwise a hop back
 * towards it.  The block starts with a HeapBlock header (length in
 * segments, used flag) and the CodeBlob follows it.  A CompiledMethodLoad
 * address is the nmethod's code begin, a few hundred bytes to a few KiB
 * past the header (relocations and constants come first), so the walk
 * reads one window of the map and then one span of the header.
 *
 * The layout is read from VMStructs once per process (the tables and the
 * code heaps never move), by nml_init, which the agent calls before the
 * first compile is posted where it can.  Field sizes come from the type
 * table because they differ between JDKs (_comp_level: int on 17, 1-byte
 * CompLevel on 25; CodeBlob's code begin: an address on 17, an int
 * offset on 25).
 *
 * Reads: a code heap and its segment map are committed upwards from their
 * low end and, where libjvm.so has no CodeHeap::shrink_by (checked in its
 * .symtab: none on 17 or 25), never uncommitted.  So below a heap's
 * committed high (read from the CodeHeap, which lives as long as the VM)
 * memory can be read in place; that halves the callback's cost (two
 * process_vm_readv calls were ~8 us of its ~18 us, measured on a javac
 * loop).  Without a .symtab, or past the high, reads use vms_read.
 */
#include <pthread.h>
#include <string.h>

#include "nmethod_level.h"
#include "vmstructs.h"

#define MAX_HEAPS 8
#define MAP_WINDOW 64   /* segment map bytes read at a time */
#define MAX_HOPS 64     /* a code begin is rarely more than 2 hops away */
#define MAX_SPAN 1024   /* header bytes read: HeapBlock + nmethod fields */

struct field {
	uint64_t off, size; /* size 0: absent */
};

struct heap {
	uint64_t low, high;       /* reserved code memory */
	uint64_t map_low, map_high;
	uint64_t mem_top, map_top; /* where the committed highs are read */
	int log2_seg;
};

static struct {
	int ok;
	unsigned nheaps;
	struct heap heap[MAX_HEAPS];
	uint64_t hb_size; /* sizeof(HeapBlock): the blob follows it */
	struct field len, used;
	/* CodeBlob: code begin is either an address or an offset */
	struct field code_begin, code_offset, name, kind, blob_size;
	struct field level, entry_bci;
	int32_t kind_nmethod, invocation_bci, max_level;
	uint64_t span;
	uint64_t name_ptr[2]; /* "_name" pointers known to name nmethods */
	int in_place; /* heaps never shrink: committed memory read directly */
} L;
static pthread_once_t l_once = PTHREAD_ONCE_INIT;

static const char *const why_strs[NML_WHY_COUNT] = {
	[NML_OK] = "ok",
	[NML_NO_LAYOUT] = "VMStructs lack a needed field",
	[NML_NOT_IN_HEAP] = "address in no code heap",
	[NML_UNREADABLE] = "VM memory unreadable",
	[NML_FREE] = "segment map: no used block",
	[NML_NO_BACKPOINTER] = "header does not point back to the code",
	[NML_NOT_NMETHOD] = "blob is not an nmethod",
	[NML_BAD_FIELDS] = "level or entry bci out of range",
};

const char *nml_whystr(int why)
{
	return why >= 0 && why < NML_WHY_COUNT ? why_strs[why] : "?";
}

static void field(const char *type, const char *name, struct field *f)
{
	if (vms_field_info(type, name, &f->off, &f->size) != 0 ||
	    f->size > 8)
		f->size = 0;
}

/* A signed integer field of SIZE bytes at P (little-endian host). */
static int64_t get_int(const uint8_t *p, struct field f)
{
	switch (f.size) {
	case 1: return (int8_t)p[f.off];
	case 2: { int16_t v; memcpy(&v, p + f.off, 2); return v; }
	case 4: { int32_t v; memcpy(&v, p + f.off, 4); return v; }
	default: { int64_t v; memcpy(&v, p + f.off, 8); return v; }
	}
}

static int read_heap(uint64_t ch, uint64_t mem, uint64_t map, uint64_t lg,
		     uint64_t lo, uint64_t hi, struct heap *h)
{
	int32_t log2;
	uint64_t top;
	if (vms_field_offset("VirtualSpace", "_high", &top) != 0)
		return -1;
	h->mem_top = ch + mem + top;
	h->map_top = ch + map + top;
	uint64_t v;
	if (vms_read_u64(h->mem_top, &v) != 0 || vms_read_u64(h->map_top, &v))
		return -1;
	if (vms_read_u64(ch + mem + lo, &h->low) != 0 ||
	    vms_read_u64(ch + mem + hi, &h->high) != 0 ||
	    vms_read_u64(ch + map + lo, &h->map_low) != 0 ||
	    vms_read_u64(ch + map + hi, &h->map_high) != 0 ||
	    vms_read_i32(ch + lg, &log2) != 0)
		return -1;
	h->log2_seg = log2;
	return log2 >= 4 && log2 <= 16 && h->low < h->high &&
			       h->map_low < h->map_high ? 0 : -1;
}

/* CodeCache::_heaps, a GrowableArray<CodeHeap*>; the array type's
 * _data offset is the one of GrowableArray<int> (same template). */
static int load_heaps(void)
{
	uint64_t heaps_p, arr, data, len_off, data_off, mem, map, lg, lo, hi;
	int32_t n;
	if (vms_static_addr("CodeCache", "_heaps", &heaps_p) != 0 ||
	    vms_field_offset("GrowableArrayBase", "_len", &len_off) != 0 ||
	    vms_field_offset("GrowableArray<int>", "_data", &data_off) != 0 ||
	    vms_field_offset("CodeHeap", "_memory", &mem) != 0 ||
	    vms_field_offset("CodeHeap", "_segmap", &map) != 0 ||
	    vms_field_offset("CodeHeap", "_log2_segment_size", &lg) != 0 ||
	    vms_field_offset("VirtualSpace", "_low", &lo) != 0 ||
	    vms_field_offset("VirtualSpace", "_high_boundary", &hi) != 0 ||
	    vms_read_u64(heaps_p, &arr) != 0 ||
	    vms_read_i32(arr + len_off, &n) != 0 ||
	    vms_read_u64(arr + data_off, &data) != 0 || n <= 0)
		return -1;
	for (int32_t i = 0; i < n && L.nheaps < MAX_HEAPS; i++) {
		uint64_t ch;
		if (vms_read_u64(data + 8 * (uint64_t)i, &ch) != 0 ||
		    read_heap(ch, mem, map, lg, lo, hi, &L.heap[L.nheaps]) != 0)
			return -1;
		L.nheaps++;
	}
	return 0;
}

static void load_blob_fields(void)
{
	field("HeapBlock::Header", "_length", &L.len);
	field("HeapBlock::Header", "_used", &L.used);
	field("CodeBlob", "_code_begin", &L.code_begin);   /* JDK 17 */
	field("CodeBlob", "_code_offset", &L.code_offset); /* JDK 25 */
	field("CodeBlob", "_name", &L.name);
	field("CodeBlob", "_kind", &L.kind);
	field("CodeBlob", "_size", &L.blob_size);
	field("nmethod", "_comp_level", &L.level);
	field("nmethod", "_entry_bci", &L.entry_bci);
	if (vms_int_constant("CodeBlobKind::Nmethod", &L.kind_nmethod) != 0)
		L.kind.size = 0;
	if (vms_int_constant("InvocationEntryBci", &L.invocation_bci) != 0)
		L.invocation_bci = -1;
	if (vms_int_constant("CompLevel_full_optimization", &L.max_level) != 0)
		L.max_level = 4;
}

static uint64_t field_end(struct field f)
{
	return f.size ? f.off + f.size : 0;
}

static void init_once(void)
{
	if (vms_init() != 0 || vms_type_size("HeapBlock", &L.hb_size) != 0 ||
	    load_heaps() != 0)
		return;
	load_blob_fields();
	struct field need[] = { L.len, L.used, L.blob_size, L.level,
				L.entry_bci, L.code_begin, L.code_offset,
				L.name, L.kind };
	uint64_t end = 0;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (field_end(need[i]) > end)
			end = field_end(need[i]);
	L.span = L.hb_size + end;
	/* A .symtab without CodeHeap::shrink_by(size_t). */
	uint64_t a, n;
	L.in_place = vms_symbol(VMS_SYM_SHRINK_BY, &a, &n) == 1;
	L.ok = L.len.size && L.used.size && L.blob_size.size &&
	       L.level.size && L.entry_bci.size &&
	       (L.code_begin.size == 8 || L.code_offset.size) &&
	       (L.name.size == 8 || L.kind.size) && L.span <= MAX_SPAN;
}

/* The committed high of a heap's code or map: only grows (L.in_place). */
static uint64_t committed(uint64_t top_field)
{
	return __atomic_load_n((const uint64_t *)(uintptr_t)top_field,
			       __ATOMIC_ACQUIRE);
}

/* [ADDR, ADDR+LEN) of a heap's code or map, in place when committed. */
static int heap_read(uint64_t top_field, uint64_t addr, void *buf,
		     size_t len)
{
	if (L.in_place && addr + len <= committed(top_field)) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	return vms_read(addr, buf, len);
}

static const struct heap *heap_of(uint64_t addr)
{
	for (unsigned i = 0; i < L.nheaps; i++)
		if (addr >= L.heap[i].low && addr < L.heap[i].high)
			return &L.heap[i];
	return NULL;
}

/* The first segment of the block holding segment IDX, walking the map's
 * hops back a window at a time, or -1. */
static int64_t block_segment(const struct heap *h, uint64_t idx, int *why)
{
	uint8_t win[MAP_WINDOW];
	uint64_t start = UINT64_MAX;
	for (int hop = 0; hop < MAX_HOPS; hop++) {
		if (start == UINT64_MAX || idx < start) {
			start = idx >= MAP_WINDOW - 1 ? idx - (MAP_WINDOW - 1) : 0;
			if (h->map_low + idx >= h->map_high ||
			    heap_read(h->map_top, h->map_low + start, win,
				      idx - start + 1)) {
				*why = NML_UNREADABLE;
				return -1;
			}
		}
		uint8_t v = win[idx - start];
		if (v == 0)
			return (int64_t)idx;
		if (v == 0xFF || v > idx)
			break;
		idx -= v;
	}
	*why = NML_FREE;
	return -1;
}

/* JDK 17 names nmethods "nmethod" and native wrappers "native nmethod"
 * (both string literals); JDK 25 has a kind field. */
static int name_is_nmethod(uint64_t p)
{
	char s[16];
	if (vms_read(p, s, 8) != 0)
		return 0;
	if (!memcmp(s, "nmethod", 8))
		return 1;
	return !memcmp(s, "native n", 8) && vms_read(p, s, 15) == 0 &&
	       !memcmp(s, "native nmethod", 15);
}

static int is_nmethod(const uint8_t *blob)
{
	if (L.kind.size)
		return get_int(blob, L.kind) == L.kind_nmethod;
	uint64_t p;
	memcpy(&p, blob + L.name.off, 8);
	if (!p)
		return 0;
	for (int i = 0; i < 2; i++)
		if (p == __atomic_load_n(&L.name_ptr[i], __ATOMIC_RELAXED))
			return 1;
	if (!name_is_nmethod(p))
		return 0;
	/* Remember it; a race only costs another string read later. */
	int slot = __atomic_load_n(&L.name_ptr[0], __ATOMIC_RELAXED) != 0;
	__atomic_store_n(&L.name_ptr[slot], p, __ATOMIC_RELAXED);
	return 1;
}

/* The header at BLOCK checks out for code [ADDR, ADDR+SIZE): a used
 * block that contains the code, an nmethod, whose code begin is ADDR. */
static int check_header(uint64_t block, const uint8_t *buf, uint64_t blocklen,
			uint64_t addr, uint64_t size)
{
	const uint8_t *blob = buf + L.hb_size;
	uint64_t begin;
	if (!get_int(buf, L.used) || addr + size > block + blocklen)
		return NML_FREE;
	if (L.code_begin.size == 8)
		memcpy(&begin, blob + L.code_begin.off, 8);
	else
		begin = block + L.hb_size + (uint64_t)get_int(blob, L.code_offset);
	int64_t bsize = get_int(blob, L.blob_size);
	if (begin != addr || bsize <= 0 ||
	    block + L.hb_size + (uint64_t)bsize < addr + size)
		return NML_NO_BACKPOINTER;
	return is_nmethod(blob) ? NML_OK : NML_NOT_NMETHOD;
}

static int lookup(uint64_t addr, uint64_t size, struct nml_result *r)
{
	if (nml_init() != 0)
		return NML_NO_LAYOUT;
	const struct heap *h = heap_of(addr);
	if (!h || addr + size > h->high)
		return NML_NOT_IN_HEAP;
	int why = NML_OK;
	int64_t seg = block_segment(h, (addr - h->low) >> h->log2_seg, &why);
	if (seg < 0)
		return why;
	uint64_t block = h->low + ((uint64_t)seg << h->log2_seg);
	uint8_t buf[MAX_SPAN];
	if (heap_read(h->mem_top, block, buf, L.span) != 0)
		return NML_UNREADABLE;
	uint64_t blocklen = (uint64_t)get_int(buf, L.len) << h->log2_seg;
	why = check_header(block, buf, blocklen, addr, size);
	if (why != NML_OK)
		return why;
	const uint8_t *blob = buf + L.hb_size;
	int64_t level = get_int(blob, L.level);
	int64_t bci = get_int(blob, L.entry_bci);
	if (level < 0 || level > L.max_level || bci < -1 || bci > 65535)
		return NML_BAD_FIELDS;
	r->level = (int)level;
	r->entry_bci = (int)bci;
	r->osr = bci != L.invocation_bci;
	return NML_OK;
}

int nml_init(void)
{
	pthread_once(&l_once, init_once);
	return L.ok ? 0 : -1;
}

int nml_reads_in_place(void)
{
	return L.in_place;
}

int nml_lookup(uint64_t addr, uint64_t size, struct nml_result *r)
{
	r->level = -1;
	r->entry_bci = -1;
	r->osr = 0;
	int why = lookup(addr, size, r);
	if (why != NML_OK)
		r->level = -1;
	return why;
}
