/*
 * lake_avro_file.h — Avro Object Container Files (Avro 1.11
 * specification, "Object Container Files"): the files of Iceberg's
 * manifests and manifest lists (the Iceberg specification). A
 * writer of records of one schema, with the file metadata Iceberg puts in
 * the header ("schema", "partition-spec", "format-version", ...), and a
 * reader that checks every byte it is given.
 *
 *   file    := "Obj" 0x01  metadata  sync  block*
 *   metadata:= map<bytes> (lake_avro.h's blocks): "avro.schema" (the
 *              schema's JSON), "avro.codec" ("null"), then the caller's
 *              keys (never "avro.*", reserved by the specification)
 *   sync    := 16 random bytes, chosen per file
 *   block   := long count (> 0), long size, size bytes holding count
 *              records, sync
 *
 * Codecs: the writer writes "null"; the reader reads "null" and "deflate"
 * (raw RFC 1951 blocks, through zlib: what Iceberg's Java writers use for
 * manifests, e.g. Fluss's own tiering job's), each block inflated whole
 * (at most FL_AVRO_FILE_BYTES_MAX) and its record count checked against
 * the inflated bytes; any other codec is refused with INVALID_ARG.
 *
 * Thread rule: a writer or reader belongs to one thread.
 */
#ifndef FL_LAKE_AVRO_FILE_H
#define FL_LAKE_AVRO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_avro_schema.h"
#include "lake_avro_value.h"

#define FL_AVRO_SYNC_BYTES 16
#define FL_AVRO_META_MAX 1024 /* metadata entries of a file */
#define FL_AVRO_FILE_BYTES_MAX (256u << 20) /* a file read from a path */
/* Records of a block whose records may take no bytes (a count the block's
 * size cannot bound). */
#define FL_AVRO_BLOCK_EMPTY_RECORDS_MAX 65536

/* A metadata entry: key, and value bytes (UTF-8 text for Iceberg's). */
typedef struct fl_avro_meta {
    const char *key;
    const uint8_t *value;
    size_t len;
} fl_avro_meta_t;

fl_avro_meta_t fl_avro_meta_str(const char *key, const char *value);

typedef struct fl_avro_file_options {
    size_t block_bytes_max; /* a block is closed once its records reach this */
    size_t block_records_max; /* ... or this many records (0: no limit) */
    const uint8_t *sync; /* FL_AVRO_SYNC_BYTES, or NULL for random (tests pin it) */
} fl_avro_file_options_t;

/* Blocks of 64 KiB (Java's default sync interval is 64,000 bytes), no
 * record limit, a random sync marker. */
void fl_avro_file_options_init(fl_avro_file_options_t *o);

typedef struct fl_avro_file_writer fl_avro_file_writer_t;

/* Creates (truncates) the file at path, or writes into memory if path is
 * NULL (fl_avro_file_writer_bytes), and writes the header. The schema is
 * borrowed: it must outlive the writer. meta is copied into the header
 * now. INVALID_ARG for a reserved ("avro.*"), empty or repeated key, IO
 * for the file. */
int fl_avro_file_writer_open(const char *path, const fl_avro_schema_t *schema,
                             const fl_avro_meta_t *meta, size_t n_meta,
                             const fl_avro_file_options_t *opts, fl_avro_file_writer_t **out,
                             fl_error_t *err);
/* Appends one record (a value of the schema). A record that does not
 * follow the schema is INVALID_ARG and leaves the file as it was; an I/O
 * error while a full block goes out latches the writer. */
int fl_avro_file_writer_append(fl_avro_file_writer_t *w, const fl_avro_value_t *record,
                               fl_error_t *err);
/* Ends the current block here (none if it holds no record). */
int fl_avro_file_writer_flush_block(fl_avro_file_writer_t *w, fl_error_t *err);
/* Writes the last block, then fsyncs and closes the file (its directory
 * entry is the caller's to make durable). No appends after. */
int fl_avro_file_writer_finish(fl_avro_file_writer_t *w, fl_error_t *err);
/* Bytes written so far: after finish, the file's size (a manifest list's
 * manifest_length). */
uint64_t fl_avro_file_writer_position(const fl_avro_file_writer_t *w);
/* The file's bytes (in-memory writers). */
const fl_buf_t *fl_avro_file_writer_bytes(const fl_avro_file_writer_t *w);
void fl_avro_file_writer_destroy(fl_avro_file_writer_t *w);

typedef struct fl_avro_file_reader fl_avro_file_reader_t;

/* Parses the header of the len bytes at p (borrowed: they must outlive
 * the reader): magic, metadata, schema, codec, sync. CORRUPT for malformed
 * bytes, INVALID_ARG for a codec or schema form we do not read. */
int fl_avro_file_reader_open_bytes(const void *p, size_t len, fl_avro_file_reader_t **out,
                                   fl_error_t *err);
/* Reads the file at path (at most FL_AVRO_FILE_BYTES_MAX), then as above. */
int fl_avro_file_reader_open(const char *path, fl_avro_file_reader_t **out, fl_error_t *err);
const fl_avro_schema_t *fl_avro_file_reader_schema(const fl_avro_file_reader_t *r);
/* The metadata entries in file order ("avro.schema" and "avro.codec"
 * included); a value is a view into the file's bytes. */
size_t fl_avro_file_reader_meta_count(const fl_avro_file_reader_t *r);
const fl_avro_meta_t *fl_avro_file_reader_meta_at(const fl_avro_file_reader_t *r, size_t i);
/* The entry of that key, or NULL. */
const fl_avro_meta_t *fl_avro_file_reader_meta(const fl_avro_file_reader_t *r, const char *key);
/* The next record in *out (valid until the next call or destroy), or NULL
 * at the end of the file. Each block's sync marker is checked before its
 * records are read, and its records must fill it exactly. CORRUPT for
 * malformed bytes; after an error every call fails. */
int fl_avro_file_reader_next(fl_avro_file_reader_t *r, const fl_avro_value_t **out,
                             fl_error_t *err);
void fl_avro_file_reader_destroy(fl_avro_file_reader_t *r);

#endif
