// SPDX-License-Identifier: MIT
/* Reading HotSpot's VMStructs tables and libjvm.so's symbols. */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "symtab.h"
#include "vmstructs.h"

/* Process facts, immutable after the first vms_init(): the tables are
 * part of libjvm.so and never move. */
static struct {
	int ok;
	char path[4096];
	uint64_t base;
	uint64_t structs, types, ints;
	uint64_t s_type, s_field, s_tstr, s_static, s_offset, s_addr, s_stride;
	uint64_t t_name, t_size, t_stride;
	uint64_t i_name, i_value, i_stride; /* UINT64_MAX: no int table */
	/* libjvm.so's readable PT_LOAD segments: mapped while the JVM
	 * lives, so its tables and strings are read in place. */
	unsigned nseg;
	struct { uint64_t lo, hi; } seg[16];
} vms;
static pthread_once_t vms_once = PTHREAD_ONCE_INIT;

/* Inside a readable segment of libjvm.so (its VMStructs tables, their
 * strings, flags and statics): one scan of the tables made a system
 * call per field of every entry, ~30 ms of CPU for a dozen lookups. */
static int in_libjvm(uint64_t addr, size_t len)
{
	for (unsigned i = 0; i < vms.nseg; i++)
		if (addr >= vms.seg[i].lo && len <= vms.seg[i].hi - addr)
			return 1;
	return 0;
}

int vms_read(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	if (!addr)
		return -1;
	if (in_libjvm(addr, len)) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	/* process_vm_readv may be forbidden (seccomp); then trust the
	 * caller's pointer only if it lies in a readable mapping. */
	if (n < 0) {
		int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		ssize_t k = pread(fd, buf, len, (off_t)addr);
		close(fd);
		return k == (ssize_t)len ? 0 : -1;
	}
	return -1;
}

int vms_read_u64(uint64_t addr, uint64_t *v)
{
	return vms_read(addr, v, sizeof(*v));
}

int vms_read_i32(uint64_t addr, int32_t *v)
{
	return vms_read(addr, v, sizeof(*v));
}

static int find_libjvm(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *n = info->dlpi_name;
	size_t len = n ? strlen(n) : 0;
	if (len < 9 || strcmp(n + len - 9, "libjvm.so") != 0)
		return 0;
	snprintf(vms.path, sizeof(vms.path), "%s", n);
	vms.base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && vms.nseg < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		vms.seg[vms.nseg].lo = vms.base + ph->p_vaddr;
		vms.seg[vms.nseg].hi = vms.base + ph->p_vaddr + ph->p_memsz;
		vms.nseg++;
	}
	return 1;
}

static uint64_t sym_u64(void *h, const char *name)
{
	uint64_t *p = dlsym(h, name);
	return p ? *p : UINT64_MAX;
}

static void init_once(void)
{
	if (!dl_iterate_phdr(find_libjvm, NULL))
		return;
	void *h = dlopen(vms.path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return;
	uint64_t *structs = dlsym(h, "gHotSpotVMStructs");
	uint64_t *types = dlsym(h, "gHotSpotVMTypes");
	uint64_t *ints = dlsym(h, "gHotSpotVMIntConstants");
	vms.s_type = sym_u64(h, "gHotSpotVMStructEntryTypeNameOffset");
	vms.s_field = sym_u64(h, "gHotSpotVMStructEntryFieldNameOffset");
	vms.s_tstr = sym_u64(h, "gHotSpotVMStructEntryTypeStringOffset");
	vms.s_static = sym_u64(h, "gHotSpotVMStructEntryIsStaticOffset");
	vms.s_offset = sym_u64(h, "gHotSpotVMStructEntryOffsetOffset");
	vms.s_addr = sym_u64(h, "gHotSpotVMStructEntryAddressOffset");
	vms.s_stride = sym_u64(h, "gHotSpotVMStructEntryArrayStride");
	vms.t_name = sym_u64(h, "gHotSpotVMTypeEntryTypeNameOffset");
	vms.t_size = sym_u64(h, "gHotSpotVMTypeEntrySizeOffset");
	vms.t_stride = sym_u64(h, "gHotSpotVMTypeEntryArrayStride");
	vms.i_name = sym_u64(h, "gHotSpotVMIntConstantEntryNameOffset");
	vms.i_value = sym_u64(h, "gHotSpotVMIntConstantEntryValueOffset");
	vms.i_stride = sym_u64(h, "gHotSpotVMIntConstantEntryArrayStride");
	dlclose(h);
	/* The int constants are optional: only some lookups need them. */
	vms.ints = ints && vms.i_name != UINT64_MAX &&
			   vms.i_value != UINT64_MAX &&
			   vms.i_stride != UINT64_MAX ? *ints : 0;
	if (!structs || !types || vms.s_stride == UINT64_MAX ||
	    vms.t_stride == UINT64_MAX || vms.s_type == UINT64_MAX ||
	    vms.s_field == UINT64_MAX || vms.s_static == UINT64_MAX ||
	    vms.s_offset == UINT64_MAX || vms.s_addr == UINT64_MAX ||
	    vms.t_name == UINT64_MAX || vms.t_size == UINT64_MAX)
		return;
	vms.structs = *structs;
	vms.types = *types;
	vms.ok = vms.structs && vms.types;
}

int vms_init(void)
{
	pthread_once(&vms_once, init_once);
	return vms.ok ? 0 : -1;
}

const char *vms_libjvm_path(void)
{
	return vms.path;
}

uint64_t vms_libjvm_base(void)
{
	return vms.base;
}

static int str_eq(uint64_t p, const char *s)
{
	char buf[128];
	size_t n = strlen(s) + 1;
	if (!p || n > sizeof(buf) || vms_read(p, buf, n) != 0)
		return 0;
	return memcmp(buf, s, n) == 0;
}

/* The VMStructs entry for TYPE::FIELD, or 0. */
static uint64_t find_entry(const char *type, const char *field)
{
	if (vms_init() != 0)
		return 0;
	for (uint64_t e = vms.structs;; e += vms.s_stride) {
		uint64_t tn, fn;
		if (vms_read_u64(e + vms.s_type, &tn) != 0 || !tn)
			return 0;
		if (vms_read_u64(e + vms.s_field, &fn) != 0)
			return 0;
		if (str_eq(tn, type) && str_eq(fn, field))
			return e;
	}
}

int vms_field_offset(const char *type, const char *field, uint64_t *off)
{
	uint64_t e = find_entry(type, field);
	int32_t is_static;
	if (!e || vms_read_i32(e + vms.s_static, &is_static) != 0 || is_static)
		return -1;
	return vms_read_u64(e + vms.s_offset, off);
}

/* A field's type is named by a string ("int", "CompLevel", "Method*");
 * its size comes from the type table, pointers are 8 bytes. */
static int type_string_size(uint64_t ts, uint64_t *size)
{
	char buf[128];
	size_t n = 0;
	for (; n < sizeof(buf); n++)
		if (vms_read(ts + n, &buf[n], 1) != 0 || !buf[n])
			break;
	if (n == 0 || n == sizeof(buf))
		return -1;
	if (buf[n - 1] == '*') {
		*size = sizeof(void *);
		return 0;
	}
	return vms_type_size(buf, size);
}

int vms_field_info(const char *type, const char *field, uint64_t *off,
		   uint64_t *size)
{
	uint64_t e = find_entry(type, field), ts;
	int32_t is_static;
	if (!e || vms.s_tstr == UINT64_MAX ||
	    vms_read_i32(e + vms.s_static, &is_static) != 0 || is_static ||
	    vms_read_u64(e + vms.s_offset, off) != 0 ||
	    vms_read_u64(e + vms.s_tstr, &ts) != 0 || !ts)
		return -1;
	return type_string_size(ts, size);
}

int vms_int_constant(const char *name, int32_t *v)
{
	if (vms_init() != 0 || !vms.ints)
		return -1;
	for (uint64_t e = vms.ints;; e += vms.i_stride) {
		uint64_t n;
		if (vms_read_u64(e + vms.i_name, &n) != 0 || !n)
			return -1;
		if (str_eq(n, name))
			return vms_read_i32(e + vms.i_value, v);
	}
}

int vms_static_addr(const char *type, const char *field, uint64_t *addr)
{
	uint64_t e = find_entry(type, field);
	int32_t is_static;
	if (!e || vms_read_i32(e + vms.s_static, &is_static) != 0 || !is_static)
		return -1;
	return vms_read_u64(e + vms.s_addr, addr);
}

int vms_type_size(const char *type, uint64_t *size)
{
	if (vms_init() != 0)
		return -1;
	for (uint64_t e = vms.types;; e += vms.t_stride) {
		uint64_t tn;
		if (vms_read_u64(e + vms.t_name, &tn) != 0 || !tn)
			return -1;
		if (str_eq(tn, type))
			return vms_read_u64(e + vms.t_size, size);
	}
}

/* The address of flag NAME's JVMFlag entry, and the name of its class. */
static int flag_entry(const char *name, uint64_t *entry, const char **cls)
{
	uint64_t flags_p, num_p, flags, num, size, off_name;
	/* The flag class is "JVMFlag" since JDK 11, "Flag" before. */
	*cls = vms_type_size("JVMFlag", &size) == 0 ? "JVMFlag" : "Flag";
	if (vms_static_addr(*cls, "flags", &flags_p) != 0 ||
	    vms_static_addr(*cls, "numFlags", &num_p) != 0 ||
	    vms_read_u64(flags_p, &flags) != 0 ||
	    vms_read_u64(num_p, &num) != 0 ||
	    vms_type_size(*cls, &size) != 0 ||
	    vms_field_offset(*cls, "_name", &off_name) != 0)
		return -1;
	for (uint64_t i = 0; i < num && i < 100000; i++) {
		uint64_t f = flags + i * size, np;
		if (vms_read_u64(f + off_name, &np) != 0)
			return -1;
		if (np && str_eq(np, name)) {
			*entry = f;
			return 0;
		}
	}
	return -1;
}

int vms_flag_addr(const char *name, uint64_t *addr)
{
	uint64_t f, off_addr;
	const char *cls;
	if (flag_entry(name, &f, &cls) != 0 ||
	    vms_field_offset(cls, "_addr", &off_addr) != 0)
		return -1;
	return vms_read_u64(f + off_addr, addr);
}

int vms_flag_is_default(const char *name)
{
	uint64_t f, off_flags, size;
	uint8_t b[8] = { 0 };
	const char *cls;
	/* An enum before JDK 16, a short since. */
	if (flag_entry(name, &f, &cls) != 0 ||
	    vms_field_info(cls, "_flags", &off_flags, &size) != 0 ||
	    size == 0 || size > sizeof(b) || vms_read(f + off_flags, b, size) != 0)
		return -1;
	uint8_t bits = b[0]; /* little-endian: the low byte */
	/* The value's origin is the low 4 bits, 0 for the built-in default
	 * (JVMFlag::VALUE_ORIGIN_MASK, the same since JDK 8). */
	return (bits & 0xf) == 0;
}

uint32_t vms_thread_tid(JNIEnv *jni, jobject thread)
{
	if (!jni || !thread)
		return 0;
	uint64_t off_os, off_tid, jt, os;
	int32_t tid;
	/* JDK 17 declares the field in JavaThread, later JDKs in Thread. */
	if ((vms_field_offset("JavaThread", "_osthread", &off_os) != 0 &&
	     vms_field_offset("Thread", "_osthread", &off_os) != 0) ||
	    vms_field_offset("OSThread", "_thread_id", &off_tid) != 0)
		return 0;
	jclass c = (*jni)->GetObjectClass(jni, thread);
	if (!c)
		return 0;
	jfieldID f = (*jni)->GetFieldID(jni, c, "eetop", "J");
	(*jni)->DeleteLocalRef(jni, c);
	if (!f) {
		(*jni)->ExceptionClear(jni);
		return 0;
	}
	jt = (uint64_t)(*jni)->GetLongField(jni, thread, f);
	if (!jt || vms_read_u64(jt + off_os, &os) != 0 ||
	    vms_read_i32(os + off_tid, &tid) != 0 || tid <= 0)
		return 0;
	return (uint32_t)tid;
}

/* The names of enum vms_sym, in its order. */
static const char *const sym_names[VMS_SYM_COUNT] = {
	[VMS_SYM_ACTIVE_TABLE] = "_ZN19TemplateInterpreter13_active_tableE",
	[VMS_SYM_NORMAL_TABLE] = "_ZN19TemplateInterpreter13_normal_tableE",
	[VMS_SYM_SAFEPT_TABLE] = "_ZN19TemplateInterpreter13_safept_tableE",
	[VMS_SYM_SHRINK_BY] = "_ZN8CodeHeap9shrink_byEm",
};

/* Like the tables, the symbols are process facts: one scan finds all of
 * them (they are wanted at VMStart and VMInit, by different callers). */
static struct {
	int rc; /* symtab_find's */
	struct symtab_want want[VMS_SYM_COUNT];
} syms;
static pthread_once_t syms_once = PTHREAD_ONCE_INIT;

static void syms_once_init(void)
{
	for (int i = 0; i < VMS_SYM_COUNT; i++)
		syms.want[i].name = sym_names[i];
	syms.rc = vms_init() == 0 ? symtab_find(vms.path, syms.want,
						 VMS_SYM_COUNT)
				  : -1;
}

int vms_symbol(enum vms_sym sym, uint64_t *addr, uint64_t *size)
{
	if ((unsigned)sym >= VMS_SYM_COUNT)
		return -1;
	pthread_once(&syms_once, syms_once_init);
	if (syms.rc != 0)
		return -1;
	if (!syms.want[sym].found)
		return 1;
	*addr = vms.base + syms.want[sym].value;
	*size = syms.want[sym].size;
	return 0;
}
