// SPDX-License-Identifier: MIT
/* Schemas of the "jvm" record types; see records.h for how to add one. */
#include "records_jvm.h"

#define F(st, m, k) JPB_FIELD(struct st, m, k)

static const struct jpb_field info_fields[] = {
	F(jpb_rec_jvm_info, pid, JPB_F_U32),
	F(jpb_rec_jvm_info, nspid, JPB_F_U32),
	F(jpb_rec_jvm_info, late_attach, JPB_F_U32),
	F(jpb_rec_jvm_info, flags, JPB_F_U32),
	F(jpb_rec_jvm_info, jdk_version, JPB_F_STR),
	F(jpb_rec_jvm_info, vm_name, JPB_F_STR),
	F(jpb_rec_jvm_info, vm_version, JPB_F_STR),
	F(jpb_rec_jvm_info, options, JPB_F_STR),
	F(jpb_rec_jvm_info, libjvm, JPB_F_STR),
	F(jpb_rec_jvm_info, libjvm_base, JPB_F_U64),
};

static const struct jpb_field codelet_fields[] = {
	F(jpb_rec_jvm_codelet, begin, JPB_F_U64),
	F(jpb_rec_jvm_codelet, end, JPB_F_U64),
	F(jpb_rec_jvm_codelet, bytecode, JPB_F_I32),
	F(jpb_rec_jvm_codelet, index, JPB_F_U32),
	F(jpb_rec_jvm_codelet, description, JPB_F_STR),
};

static const struct jpb_field dispatch_fields[] = {
	F(jpb_rec_jvm_dispatch, table, JPB_F_STR),
	F(jpb_rec_jvm_dispatch, tos, JPB_F_U32),
	F(jpb_rec_jvm_dispatch, entries, JPB_F_BYTES),
};

static const struct jpb_field blob_fields[] = {
	F(jpb_rec_jvm_code_blob, kind, JPB_F_U32),
	F(jpb_rec_jvm_code_blob, flags, JPB_F_U32),
	F(jpb_rec_jvm_code_blob, start, JPB_F_U64),
	F(jpb_rec_jvm_code_blob, size, JPB_F_U64),
	F(jpb_rec_jvm_code_blob, name, JPB_F_STR),
	F(jpb_rec_jvm_code_blob, code, JPB_F_BYTES),
};

static const struct jpb_field class_fields[] = {
	F(jpb_rec_jvm_class, flags, JPB_F_U32),
	F(jpb_rec_jvm_class, reserved, JPB_F_U32),
	F(jpb_rec_jvm_class, loader, JPB_F_U64),
	F(jpb_rec_jvm_class, name, JPB_F_STR),
	F(jpb_rec_jvm_class, bytes, JPB_F_BYTES),
};

static const struct jpb_field method_fields[] = {
	F(jpb_rec_jvm_method, method_id, JPB_F_U64),
	F(jpb_rec_jvm_method, access_flags, JPB_F_U32),
	F(jpb_rec_jvm_method, reserved, JPB_F_U32),
	F(jpb_rec_jvm_method, class_sig, JPB_F_STR),
	F(jpb_rec_jvm_method, name, JPB_F_STR),
	F(jpb_rec_jvm_method, signature, JPB_F_STR),
};

static const struct jpb_field nm_load_fields[] = {
	F(jpb_rec_jvm_nmethod_load, method_id, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_load, code_addr, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_load, code_size, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_load, flags, JPB_F_U32),
	F(jpb_rec_jvm_nmethod_load, level, JPB_F_I32),
	F(jpb_rec_jvm_nmethod_load, code, JPB_F_BYTES),
	F(jpb_rec_jvm_nmethod_load, pcmap, JPB_F_BYTES),
};

static const struct jpb_field nm_osr_fields[] = {
	F(jpb_rec_jvm_nmethod_osr, method_id, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_osr, code_addr, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_osr, entry_bci, JPB_F_I32),
	F(jpb_rec_jvm_nmethod_osr, reserved, JPB_F_U32),
};

static const struct jpb_field nm_unload_fields[] = {
	F(jpb_rec_jvm_nmethod_unload, method_id, JPB_F_U64),
	F(jpb_rec_jvm_nmethod_unload, code_addr, JPB_F_U64),
};

static const struct jpb_field pause_fields[] = {
	F(jpb_rec_jvm_pause, what, JPB_F_STR),
	F(jpb_rec_jvm_pause, items, JPB_F_U32),
	F(jpb_rec_jvm_pause, reserved, JPB_F_U32),
	F(jpb_rec_jvm_pause, duration_ns, JPB_F_U64),
};

static const struct jpb_field missing_fields[] = {
	F(jpb_rec_jvm_class_missing, loader, JPB_F_U64),
	F(jpb_rec_jvm_class_missing, class_sig, JPB_F_STR),
	F(jpb_rec_jvm_class_missing, reason, JPB_F_STR),
};

static const struct jpb_field mcode_fields[] = {
	F(jpb_rec_jvm_method_code, method_id, JPB_F_U64),
	F(jpb_rec_jvm_method_code, bytecode, JPB_F_BYTES),
};

#define TYPE(num, nm, st, f) \
	{ num, nm, "jvm", sizeof(struct st), f, JPB_NFIELDS(f) }

static const struct jpb_rectype jvm_types[] = {
	TYPE(JPB_REC_JVM_INFO, "jvm_info", jpb_rec_jvm_info, info_fields),
	TYPE(JPB_REC_JVM_CODELET, "jvm_codelet", jpb_rec_jvm_codelet,
	     codelet_fields),
	TYPE(JPB_REC_JVM_DISPATCH, "jvm_dispatch", jpb_rec_jvm_dispatch,
	     dispatch_fields),
	TYPE(JPB_REC_JVM_CODE_BLOB, "jvm_code_blob", jpb_rec_jvm_code_blob,
	     blob_fields),
	TYPE(JPB_REC_JVM_CLASS, "jvm_class", jpb_rec_jvm_class, class_fields),
	TYPE(JPB_REC_JVM_METHOD, "jvm_method", jpb_rec_jvm_method,
	     method_fields),
	TYPE(JPB_REC_JVM_NMETHOD_LOAD, "jvm_nmethod_load",
	     jpb_rec_jvm_nmethod_load, nm_load_fields),
	TYPE(JPB_REC_JVM_NMETHOD_UNLOAD, "jvm_nmethod_unload",
	     jpb_rec_jvm_nmethod_unload, nm_unload_fields),
	TYPE(JPB_REC_JVM_PAUSE, "jvm_pause", jpb_rec_jvm_pause, pause_fields),
	TYPE(JPB_REC_JVM_CLASS_MISSING, "jvm_class_missing",
	     jpb_rec_jvm_class_missing, missing_fields),
	TYPE(JPB_REC_JVM_METHOD_CODE, "jvm_method_code",
	     jpb_rec_jvm_method_code, mcode_fields),
	TYPE(JPB_REC_JVM_NMETHOD_OSR, "jvm_nmethod_osr",
	     jpb_rec_jvm_nmethod_osr, nm_osr_fields),
};

void jpb_rectypes_jvm(const struct jpb_rectype **types, size_t *count)
{
	*types = jvm_types;
	*count = JPB_NFIELDS(jvm_types);
}
