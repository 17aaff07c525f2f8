/* SPDX-License-Identifier: MIT */
/*
 * Record types of the jpbpf bundle, described by a schema.
 *
 * Every record type has a C struct and a schema (a field table).  The
 * schema drives encoding, decoding, the JSON dump used by `jpbpf info` and
 * `report --format raw`, and the round-trip tests, so a new record type is
 * one struct, one table and one line in its domain's registry
 * (records/records_<domain>.c).  docs/FORMAT.md documents each type.
 *
 * Payload encoding: fields in schema order, little-endian, unaligned;
 * STR and BYTES are a u32 length then the bytes (strings without NUL).
 * Readers ignore bytes past the last field they know, so a minor format
 * version may append fields.
 */
#ifndef JPBPF_RECORDS_H
#define JPBPF_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Type numbers are grouped by the writer that owns them.  Numbers are
 * never reused; a retired type keeps its number. */
enum jpb_rec_type {
	/* 0x00xx: any writer */
	JPB_REC_THREAD = 0x0001,     /* a thread's identity and life span */
	JPB_REC_NOTE = 0x0002,       /* a human-readable fact or warning */
	JPB_REC_LOSS = 0x0003,       /* data a writer knows it lost */
	JPB_REC_MMAP = 0x0004,       /* one executable mapping of the target */
	JPB_REC_FILE = 0x0005,       /* a copied file: path in bundle + origin */

	/* 0x01xx: the JVMTI agent (stream "jvm") */
	JPB_REC_JVM_FIRST = 0x0100,
	/* 0x02xx: BPF scheduling and USDT events (stream "sched") */
	JPB_REC_SCHED_FIRST = 0x0200,
	/* 0x03xx: Intel PT (streams "pt/...") */
	JPB_REC_PT_FIRST = 0x0300,
	/* 0x04xx: ground truth (stream "truth", simulator only) */
	JPB_REC_TRUTH_FIRST = 0x0400,
	/* 0x05xx: decoder outputs (streams "decoded/...") */
	JPB_REC_DECODED_FIRST = 0x0500,
	/* 0x06xx: reconstructed flows (streams "flow/...") */
	JPB_REC_FLOW_FIRST = 0x0600,
};

enum jpb_field_kind {
	JPB_F_U8,
	JPB_F_U16,
	JPB_F_U32,
	JPB_F_U64,
	JPB_F_I32,
	JPB_F_I64,
	JPB_F_STR,   /* struct jpb_str */
	JPB_F_BYTES, /* struct jpb_bytes */
};

struct jpb_field {
	const char *name;
	enum jpb_field_kind kind;
	size_t offset; /* offsetof() in the record's C struct */
};

struct jpb_rectype {
	uint16_t type;
	const char *name;   /* snake_case, used in JSON and docs */
	const char *stream; /* the stream it normally lives in, "" = any */
	size_t struct_size;
	const struct jpb_field *fields;
	size_t nfields;
};

#define JPB_FIELD(st, member, kind) { #member, kind, offsetof(st, member) }
#define JPB_NFIELDS(arr) (sizeof(arr) / sizeof((arr)[0]))

/* The schema of TYPE, or NULL if unknown to this build. */
const struct jpb_rectype *jpb_rectype_find(uint16_t type);
const struct jpb_rectype *jpb_rectype_by_name(const char *name);

/* All known types, in type order: index 0 .. jpb_rectype_count() - 1. */
size_t jpb_rectype_count(void);
const struct jpb_rectype *jpb_rectype_at(size_t index);

/* Each writer's domain registers its types in records_<domain>.c through
 * one of these (the core types live in records.c). */
void jpb_rectypes_jvm(const struct jpb_rectype **types, size_t *count);
void jpb_rectypes_sched(const struct jpb_rectype **types, size_t *count);
void jpb_rectypes_pt(const struct jpb_rectype **types, size_t *count);
void jpb_rectypes_truth(const struct jpb_rectype **types, size_t *count);
void jpb_rectypes_decoded(const struct jpb_rectype **types, size_t *count);
void jpb_rectypes_flow(const struct jpb_rectype **types, size_t *count);

/* Encode the struct at REC (of TYPE's C struct) into BUF (appended). */
int jpb_rec_encode(const struct jpb_rectype *t, const void *rec,
		   struct jpb_buf *buf);

/* Decode a payload into the struct at REC.  STR/BYTES fields point into
 * the payload (zero copy).  Returns jpb_err_corrupt if the payload ends
 * before the last field. */
int jpb_rec_decode(const struct jpb_rectype *t, const void *payload,
		   uint32_t size, void *rec);

/* Write one record of TYPE from its struct; encodes into SCRATCH. */
struct jpb_writer;
int jpb_writer_put_rec(struct jpb_writer *w, const struct jpb_rectype *t,
		       uint64_t time_ns, const void *rec,
		       struct jpb_buf *scratch);

/* ------------------------------------------------------------------ */
/* Core records (any writer).                                          */

enum jpb_thread_event {
	JPB_THREAD_START = 1,
	JPB_THREAD_END = 2,
	JPB_THREAD_SEEN = 3, /* already running when recording began */
	JPB_THREAD_NAME = 4, /* renamed */
};

struct jpb_rec_thread {
	uint32_t tid;   /* in the host pid namespace; 0 if unknown */
	uint32_t nstid; /* in the target's pid namespace; 0 if unknown */
	uint32_t pid;   /* host tgid; 0 if unknown */
	uint32_t event; /* enum jpb_thread_event */
	struct jpb_str name;
};

enum jpb_note_level { JPB_NOTE_INFO = 0, JPB_NOTE_WARN = 1, JPB_NOTE_ERROR = 2 };

struct jpb_rec_note {
	uint32_t level;
	struct jpb_str source; /* "agent", "bpf", "pt", ... */
	struct jpb_str text;
};

/* Known loss: a writer that drops data writes one of these, so nothing is
 * lost silently. */
struct jpb_rec_loss {
	struct jpb_str what; /* "ringbuf", "aux", "classes", ... */
	uint32_t cpu;        /* or UINT32_MAX if not per CPU */
	uint64_t count;      /* records (or bytes, per `what`) lost */
	uint64_t first_ns;   /* time range the loss covers, if known */
	uint64_t last_ns;
};

struct jpb_rec_mmap {
	uint32_t pid;
	uint32_t prot;     /* PROT_* */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	struct jpb_str path;      /* as the target sees it; "" if anonymous */
	struct jpb_str build_id;  /* hex, "" if none */
	struct jpb_str copy;      /* bundle-relative copy, "" if not copied */
};

struct jpb_rec_file {
	struct jpb_str path; /* bundle-relative */
	struct jpb_str origin;
	uint64_t size;
	struct jpb_str build_id;
};

#ifdef __cplusplus
}
#endif
#endif /* JPBPF_RECORDS_H */
