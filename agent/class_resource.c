// SPDX-License-Identifier: MIT
/*
 * The class file of an already loaded class, read back from where its
 * loader found it (docs/AGENT.md, "Late attach"): Class.getResourceAsStream
 * on the class itself asks its defining loader, or the jimage for a JDK
 * module, for "/<name>.class".  No safepoint, unlike RetransformClasses.
 *
 * A resource is only a guess at what was loaded (another agent may have
 * changed the class, a jar may have changed since), so it is taken only
 * if it matches the loaded class: same name, same version, the same
 * methods, each with the same bytecodes as JVMTI's GetBytecodes.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "java/classfile.h"

/* Larger than any class file javac or the JDK writes. */
#define RES_MAX_BYTES (64u << 20)

const char *class_res_strs[CR_COUNT] = {
	[CR_OK] = "ok",
	[CR_NOT_TRIED] = "not tried",
	[CR_NO_RESOURCE] = "no resource",
	[CR_EXCEPTION] = "exception",
	[CR_PARSE] = "does not parse",
	[CR_NAME] = "other class name",
	[CR_VERSION] = "other version",
	[CR_METHODS] = "other methods",
	[CR_BYTECODE] = "other bytecodes",
	[CR_JVMTI] = "JVMTI refused (not prepared)",
};

/* The JDK's own reader of its runtime image (lib/modules), the one the
 * boot loader uses: libjimage.so's exported C functions, declared in the
 * JDK's sources only (jimage.hpp), so their types are spelled here. */
typedef struct JImageFile JImageFile;
typedef JImageFile *(*jimage_open_fn)(const char *name, jint *error);
typedef void (*jimage_close_fn)(JImageFile *img);
typedef const char *(*jimage_p2m_fn)(JImageFile *img, const char *package);
typedef jlong (*jimage_find_fn)(JImageFile *img, const char *module,
				const char *version, const char *name,
				jlong *size);
typedef jlong (*jimage_get_fn)(JImageFile *img, jlong loc, char *buf,
			       jlong size);

struct class_jimage {
	void *lib;
	JImageFile *img;
	jimage_close_fn close;
	jimage_p2m_fn p2m;
	jimage_find_fn find;
	jimage_get_fn get;
};

static void jimage_free(struct class_jimage *j)
{
	if (j->img)
		j->close(j->img);
	if (j->lib)
		dlclose(j->lib);
	free(j);
}

/* JAVA.HOME/lib/libjimage.so (loaded already: the boot loader uses it)
 * and JAVA.HOME/lib/modules, or NULL. */
static struct class_jimage *jimage_open(jvmtiEnv *e)
{
	char *home = NULL, path[4096];
	struct class_jimage *j = calloc(1, sizeof(*j));
	if (!j || (*e)->GetSystemProperty(e, "java.home", &home) !=
			  JVMTI_ERROR_NONE) {
		free(j);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/lib/libjimage.so", home);
	j->lib = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	jimage_open_fn open = j->lib ? (jimage_open_fn)dlsym(j->lib,
						"JIMAGE_Open") : NULL;
	j->close = j->lib ? (jimage_close_fn)dlsym(j->lib, "JIMAGE_Close") : NULL;
	j->p2m = j->lib ? (jimage_p2m_fn)dlsym(j->lib,
					      "JIMAGE_PackageToModule") : NULL;
	j->find = j->lib ? (jimage_find_fn)dlsym(j->lib,
						"JIMAGE_FindResource") : NULL;
	j->get = j->lib ? (jimage_get_fn)dlsym(j->lib, "JIMAGE_GetResource")
			: NULL;
	snprintf(path, sizeof(path), "%s/lib/modules", home);
	(*e)->Deallocate(e, (unsigned char *)home);
	jint err = 0;
	if (open && j->close && j->p2m && j->find && j->get)
		j->img = open(path, &err);
	if (!j->img) {
		jimage_free(j);
		return NULL;
	}
	return j;
}

int class_res_read_jimage(struct class_res *r, const char *name, size_t len,
			  uint8_t **data, size_t *size)
{
	struct class_jimage *j = r->jimage;
	char pkg[1024], file[1100];
	const char *slash = memrchr(name, '/', len);
	*data = NULL;
	if (!j)
		return CR_NOT_TRIED;
	if (!slash || len >= sizeof(pkg))
		return CR_NO_RESOURCE; /* the unnamed package: not in the image */
	snprintf(pkg, sizeof(pkg), "%.*s", (int)(slash - name), name);
	snprintf(file, sizeof(file), "%.*s.class", (int)len, name);
	const char *module = j->p2m(j->img, pkg);
	jlong n = 0;
	jlong loc = module ? j->find(j->img, module, "9.0", file, &n) : 0;
	if (!loc || n <= 0 || (uint64_t)n > RES_MAX_BYTES)
		return CR_NO_RESOURCE;
	if (!(*data = malloc((size_t)n)))
		return CR_EXCEPTION;
	if (j->get(j->img, loc, (char *)*data, n) != n) {
		free(*data);
		*data = NULL;
		return CR_EXCEPTION;
	}
	*size = (size_t)n;
	return CR_OK;
}

void class_res_fini(struct class_res *r)
{
	if (r->jimage)
		jimage_free(r->jimage);
	r->jimage = NULL;
}

int class_res_init(struct class_res *r, JNIEnv *jni, jvmtiEnv *je)
{
	memset(r, 0, sizeof(*r));
	if (je)
		r->jimage = jimage_open(je);
	if (!jni)
		return -1;
	jclass cls = (*jni)->FindClass(jni, "java/lang/Class");
	jclass in = cls ? (*jni)->FindClass(jni, "java/io/InputStream") : NULL;
	if (cls && in) {
		r->get_res = (*jni)->GetMethodID(jni, cls, "getResourceAsStream",
						 "(Ljava/lang/String;)Ljava/io/InputStream;");
		r->read_all = (*jni)->GetMethodID(jni, in, "readAllBytes", "()[B");
		r->close = (*jni)->GetMethodID(jni, in, "close", "()V");
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (cls)
		(*jni)->DeleteLocalRef(jni, cls);
	if (in)
		(*jni)->DeleteLocalRef(jni, in);
	r->jni = r->get_res && r->read_all && r->close ? jni : NULL;
	return r->jni ? 0 : -1;
}

/* A pending exception means the call failed: clear it and say so. */
static int threw(JNIEnv *jni)
{
	if (!(*jni)->ExceptionCheck(jni))
		return 0;
	(*jni)->ExceptionClear(jni);
	return 1;
}

static jstring resource_name(JNIEnv *jni, const char *name, size_t len)
{
	char *path = malloc(len + 8);
	if (!path)
		return NULL;
	path[0] = '/';
	memcpy(path + 1, name, len);
	memcpy(path + 1 + len, ".class", 7);
	jstring s = (*jni)->NewStringUTF(jni, path);
	free(path);
	return s;
}

/* Copy a Java byte[] out; NULL if too large or out of memory. */
static uint8_t *copy_bytes(JNIEnv *jni, jbyteArray arr, size_t *size)
{
	jsize n = (*jni)->GetArrayLength(jni, arr);
	if (n <= 0 || (size_t)n > RES_MAX_BYTES)
		return NULL;
	uint8_t *data = malloc((size_t)n);
	if (!data)
		return NULL;
	(*jni)->GetByteArrayRegion(jni, arr, 0, n, (jbyte *)data);
	if (threw(jni)) {
		free(data);
		return NULL;
	}
	*size = (size_t)n;
	return data;
}

/* Runs Java code, the loader's own included: the caller holds no lock
 * and no raw monitor.  One local frame per class keeps local references
 * bounded whatever the number of classes. */
int class_res_read(struct class_res *r, jclass k, const char *name,
		   size_t len, uint8_t **data, size_t *size)
{
	JNIEnv *jni = r->jni;
	int rc = CR_NO_RESOURCE;
	*data = NULL;
	if (!jni)
		return CR_NOT_TRIED;
	if ((*jni)->PushLocalFrame(jni, 8) != 0) {
		threw(jni);
		return CR_EXCEPTION;
	}
	jstring path = resource_name(jni, name, len);
	jobject in = path ? (*jni)->CallObjectMethod(jni, k, r->get_res, path)
			  : NULL;
	if (threw(jni)) {
		rc = CR_EXCEPTION;
	} else if (in) {
		jobject arr = (*jni)->CallObjectMethod(jni, in, r->read_all);
		rc = threw(jni) || !arr ? CR_EXCEPTION : CR_OK;
		if (rc == CR_OK && !(*data = copy_bytes(jni, arr, size)))
			rc = CR_EXCEPTION;
		(*jni)->CallVoidMethod(jni, in, r->close);
		threw(jni);
	}
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}

/* HotSpot adds to java.lang.invoke.MethodHandle a native method for each
 * signature a polymorphic native (linkToStatic...) is linked with; they
 * have no bytecode and are not in the class file. */
#define MATCH_INTRINSIC (-1)
static int intrinsic(jvmtiEnv *e, jmethodID m, const struct jcf_method *poly)
{
	jint mods = 0;
	return poly && (poly->access_flags & JCF_ACC_NATIVE) &&
	       (*e)->GetMethodModifiers(e, m, &mods) == JVMTI_ERROR_NONE &&
	       (mods & JCF_ACC_NATIVE);
}

/* M's bytecodes equal the class file's method of the same name and
 * descriptor: CR_OK, MATCH_INTRINSIC, else why not. */
static int match_method(jvmtiEnv *e, jmethodID m, const struct jcf *cf,
			const struct jcf_method **found)
{
	char *name = NULL, *sig = NULL;
	if ((*e)->GetMethodName(e, m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return CR_JVMTI;
	const struct jcf_method *f = jcf_method_find(cf, name, sig);
	const struct jcf_method *poly = f ? NULL : jcf_method_find(cf, name, NULL);
	(*e)->Deallocate(e, (unsigned char *)name);
	(*e)->Deallocate(e, (unsigned char *)sig);
	if (!f)
		return intrinsic(e, m, poly) ? MATCH_INTRINSIC : CR_METHODS;
	*found = f;
	jint len = 0;
	unsigned char *code = NULL;
	if ((*e)->GetBytecodes(e, m, &len, &code) != JVMTI_ERROR_NONE)
		return f->code ? CR_BYTECODE : CR_OK; /* native, abstract */
	int same = f->code ? (uint32_t)len == f->code_length &&
				     !memcmp(code, f->code, (size_t)len)
			   : len == 0;
	(*e)->Deallocate(e, code);
	return same ? CR_OK : CR_BYTECODE;
}

static int match_version(jvmtiEnv *e, jclass k, const struct jcf *cf)
{
	jint minor = 0, major = 0;
	unsigned cmaj, cmin;
	jcf_version(cf, &cmaj, &cmin);
	if ((*e)->GetClassVersionNumbers(e, k, &minor, &major) != JVMTI_ERROR_NONE)
		return CR_JVMTI;
	return (unsigned)major == cmaj && (unsigned)minor == cmin ? CR_OK
								  : CR_VERSION;
}

static int match_methods(jvmtiEnv *e, jclass k, const struct jcf *cf)
{
	jint n = 0;
	jmethodID *ms = NULL;
	if ((*e)->GetClassMethods(e, k, &n, &ms) != JVMTI_ERROR_NONE)
		return CR_JVMTI;
	int rc = CR_OK;
	unsigned matched = 0, with_code = 0;
	for (jint i = 0; i < n && rc == CR_OK; i++) {
		const struct jcf_method *f = NULL;
		rc = match_method(e, ms[i], cf, &f);
		matched += rc == CR_OK && f->code;
		rc = rc == MATCH_INTRINSIC ? CR_OK : rc;
	}
	(*e)->Deallocate(e, (unsigned char *)ms);
	/* Every method of the class file that has code is loaded with the
	 * same code.  A native one may be absent: HotSpot leaves out one of
	 * MethodHandle's. */
	for (unsigned i = 0; i < jcf_method_count(cf); i++)
		with_code += jcf_method(cf, i)->code != NULL;
	return rc == CR_OK && matched != with_code ? CR_METHODS : rc;
}

int class_res_match(jvmtiEnv *e, jclass k, const char *name, size_t len,
		    const uint8_t *data, size_t size, int methods)
{
	struct jcf *cf = NULL;
	if (jcf_parse(&cf, data, size, NULL) != java_ok)
		return CR_PARSE;
	const char *own = jcf_this_class(cf);
	int rc = own && strlen(own) == len && !memcmp(own, name, len)
			 ? match_version(e, k, cf)
			 : CR_NAME;
	if (rc == CR_OK && methods)
		rc = match_methods(e, k, cf);
	jcf_free(cf);
	return rc;
}
