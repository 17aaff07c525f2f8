/* SPDX-License-Identifier: MIT */
/*
 * jpbpf bundle: the on-disk form of a recording.
 *
 * A bundle is a directory holding meta.json and stream files of framed
 * binary records (docs/FORMAT.md).  This header is the only way any part of
 * jpbpf (agent, BPF loader, PT recorder, simulator, decoder, info) reads or
 * writes a bundle.
 *
 * Conventions follow libipt: opaque objects with alloc/free, negative error
 * codes named by jpb_errstr(), no hidden global state.  Objects are not
 * thread-safe; a caller that shares one across threads serialises access.
 */
#ifndef JPBPF_BUNDLE_H
#define JPBPF_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the stream framing and of meta.json.  A reader accepts any file
 * with the same major version; minor versions only add record types or
 * append fields to the end of a payload. */
#define JPB_FORMAT_MAJOR 1
#define JPB_FORMAT_MINOR 1

/* Largest payload a record may carry.  A larger length field is corruption,
 * never a reason to allocate. */
#define JPB_MAX_PAYLOAD (64u << 20)

enum jpb_error {
	jpb_ok = 0,
	jpb_err_internal = -1,  /* a bug in jpbpf */
	jpb_err_nomem = -2,
	jpb_err_io = -3,        /* system call failed; see the errmsg */
	jpb_err_nospc = -4,     /* disk full or quota exceeded */
	jpb_err_bad_magic = -5, /* not a jpbpf stream file */
	jpb_err_bad_version = -6,
	jpb_err_truncated = -7, /* file ends inside a record */
	jpb_err_corrupt = -8,   /* a record fails its checksum or bounds */
	jpb_err_eos = -9,       /* end of stream: not an error for callers */
	jpb_err_invalid = -10,  /* bad argument */
	jpb_err_not_found = -11,
	jpb_err_exists = -12,
	jpb_err_bad_meta = -13, /* meta.json missing keys or not JSON */
	jpb_err_unknown_type = -14,
};

/* A static English name for an error code. */
const char *jpb_errstr(int err);

/* ------------------------------------------------------------------ */
/* Record framing, shared with the reader and the writer.             */

/* Stream files start with this 16-byte header. */
#define JPB_STREAM_MAGIC "JPBPFSTM"
#define JPB_STREAM_HDR_SIZE 16u

/* Each record: this 24-byte header, then `size` payload bytes, then zero
 * padding to a multiple of 8 so every header is aligned. */
struct jpb_rec_hdr {
	uint16_t type;
	uint16_t flags;   /* reserved, 0 */
	uint32_t size;    /* payload bytes, without padding */
	uint64_t time_ns; /* CLOCK_MONOTONIC nanoseconds; 0 if none */
	uint32_t crc;     /* CRC-32 of header (crc = 0) and payload */
	uint32_t reserved;
};
#define JPB_REC_HDR_SIZE 24u

static inline uint64_t jpb_padded(uint64_t size)
{
	return (size + 7u) & ~(uint64_t)7u;
}

/* ------------------------------------------------------------------ */
/* The bundle directory.                                              */

struct jpb_bundle;

/* Create DIR (and missing parents) as a new bundle for writing.  Existing
 * directories are accepted only if empty or if they already hold a bundle
 * (a second writer, e.g. the agent beside the recorder, adds its streams). */
int jpb_bundle_create(struct jpb_bundle **out, const char *dir);
/* (On failure *out is NULL; the error code says why.) */

/* Open an existing bundle for reading.  Fails with jpb_err_not_found when
 * DIR is not a directory, jpb_err_bad_magic when it has neither meta.json
 * nor any stream file.  On failure *out is NULL. */
int jpb_bundle_open(struct jpb_bundle **out, const char *dir);

void jpb_bundle_free(struct jpb_bundle *b);

const char *jpb_bundle_dir(const struct jpb_bundle *b);

/* The last error's message with context (path, offset), or "" if none. */
const char *jpb_bundle_errmsg(const struct jpb_bundle *b);

/* Stream names are bundle-relative paths without the ".jpb" suffix,
 * e.g. "jvm", "sched", "pt/cpu3".  Lists every stream file, sorted.
 * The array and strings are owned by the bundle and valid until it is freed
 * or listed again. */
int jpb_bundle_list_streams(struct jpb_bundle *b, const char *const **names,
			    size_t *count);

/* Absolute-or-relative path of a file inside the bundle, into buf. */
int jpb_bundle_path(const struct jpb_bundle *b, const char *rel, char *buf,
		    size_t size);

/* Size in bytes of stream NAME's file (e.g. "flow/tid7"), 0 if it has
 * none: the unit of progress for passes that read whole streams. */
uint64_t jpb_bundle_stream_size(const struct jpb_bundle *b, const char *name);

/* ------------------------------------------------------------------ */
/* meta.json.  The bundle keeps it as a jansson object (json_t *); the  */
/* declaration is void * so that users need not include jansson.h.      */

/* Load meta.json; *meta is owned by the bundle.  Missing file:
 * jpb_err_not_found; unparsable: jpb_err_bad_meta with the parser's line. */
int jpb_meta_load(struct jpb_bundle *b, void **meta);

/* Write meta.json atomically (temp file, fsync, rename). */
int jpb_meta_save(struct jpb_bundle *b, const void *meta);

/* A fresh meta object with the keys every writer fills the same way:
 * format_version, tool_version, host, kernel, cpu{vendor,family,model,
 * stepping}, created_ns.  The caller owns the result (json_decref). */
void *jpb_meta_new_base(void);

/* ------------------------------------------------------------------ */
/* Writing a stream.                                                  */

struct jpb_writer;

/* Create (truncate) stream NAME in the bundle, e.g. "pt/cpu0".  Parent
 * directories are created.  The writer buffers whole records and writes
 * them with write(2), so a process killed at any point leaves a file whose
 * complete prefix reads back. */
int jpb_writer_open(struct jpb_bundle *b, const char *name,
		    struct jpb_writer **out);

/* Append one record.  Payload up to JPB_MAX_PAYLOAD. */
int jpb_writer_put(struct jpb_writer *w, uint16_t type, uint64_t time_ns,
		   const void *payload, uint32_t size);

/* Push buffered records to the kernel; fsync if `durable`. */
int jpb_writer_flush(struct jpb_writer *w, int durable);

/* Flush, fsync and close.  Returns the first error seen over the writer's
 * life, so a caller that checks only this call still learns of a full disk.
 * Frees the writer in all cases. */
int jpb_writer_close(struct jpb_writer *w);

/* Close without the fsync, for derived data a crash only costs a rerun
 * (decoded/).  Write and close errors are still returned by close. */
void jpb_writer_set_nosync(struct jpb_writer *w);

/* Records and bytes written so far (bytes include framing). */
uint64_t jpb_writer_records(const struct jpb_writer *w);
uint64_t jpb_writer_bytes(const struct jpb_writer *w);
const char *jpb_writer_errmsg(const struct jpb_writer *w);

/* ------------------------------------------------------------------ */
/* Reading a stream.                                                  */

struct jpb_reader;

struct jpb_record {
	uint16_t type;
	uint64_t time_ns;
	uint64_t offset;        /* file offset of the record header */
	const uint8_t *payload; /* valid until the next jpb_reader_next() */
	uint32_t size;
};

int jpb_reader_open(struct jpb_bundle *b, const char *name,
		    struct jpb_reader **out);

/* Open a stream file by path, outside any bundle (tests, tools). */
int jpb_reader_open_path(const char *path, struct jpb_reader **out);

/* Next record.  Returns 0 with *rec filled, jpb_err_eos at a clean end, or
 * jpb_err_truncated / jpb_err_corrupt at the first damaged record, whose
 * offset jpb_reader_bad_offset() gives; every record before it was
 * returned intact.  After an error every further call repeats it. */
int jpb_reader_next(struct jpb_reader *r, struct jpb_record *rec);

/* From now on, jpb_reader_next steps over a record whose checksum does not
 * match or whose length is out of bounds, and reads the next record whose
 * checksum holds (where the length says, else searched for): for streams
 * of independent records (class files, method metadata), where one
 * flipped bit must not lose everything after it.  A truncated tail still
 * ends the stream.  jpb_reader_damaged() counts the
 * records stepped over; jpb_reader_bad_offset() and jpb_reader_errmsg()
 * describe the first damage. */
void jpb_reader_skip_damaged(struct jpb_reader *r);
uint64_t jpb_reader_damaged(const struct jpb_reader *r);

/* Offset of the first damaged record after truncated/corrupt (or one
 * stepped over), else -1. */
int64_t jpb_reader_bad_offset(const struct jpb_reader *r);

/* File size in bytes. */
uint64_t jpb_reader_file_size(const struct jpb_reader *r);

/* e.g. "pt/cpu3: record at offset 81920 truncated" */
const char *jpb_reader_errmsg(const struct jpb_reader *r);

/* The first damage's message, followed by how many records were stepped
 * over and, when ERR (what ended the reading) is not jpb_err_eos, that a
 * cut tail followed: in BUF, which is returned.  Without records stepped
 * over, the message alone.  For the warnings of the streams read with
 * jpb_reader_skip_damaged. */
const char *jpb_reader_damage(const struct jpb_reader *r, int err, char *buf,
			      size_t size);

void jpb_reader_free(struct jpb_reader *r);

#ifdef __cplusplus
}
#endif
#endif /* JPBPF_BUNDLE_H */
