/*
 * kv_table.h — what a kv tablet needs to know of its primary-key table
 * (Fluss's TableConfig + Schema as KvTablet reads them): the kv format, the
 * merge engine and its options, the delete behaviour, the changelog image,
 * the physical primary key and the schemas by id. Built once per table
 * version from its descriptor (server side) and immutable; the kv code
 * borrows it for a call.
 *
 * Thread rule: immutable once built; share freely.
 */
#ifndef FL_KV_TABLE_H
#define FL_KV_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arrow_ipc.h"
#include "common_error.h"
#include "kv_agg.h"
#include "types_key.h"
#include "types_row_format.h"
#include "types_schema.h"
#include "types_schema_map.h"

#define FL_KV_PK_MAX 64

typedef enum fl_kv_engine {
    FL_KV_ENGINE_LAST_ROW = 0, /* table.merge-engine unset */
    FL_KV_ENGINE_FIRST_ROW,
    FL_KV_ENGINE_VERSIONED,
    FL_KV_ENGINE_AGGREGATION,
} fl_kv_engine_t;

typedef enum fl_kv_delete {
    FL_KV_DELETE_ALLOW = 0,
    FL_KV_DELETE_IGNORE,
    FL_KV_DELETE_DISABLE,
} fl_kv_delete_t;

/* Schema id -> column types (NULL: unknown id). */
typedef const fl_datatype_t *const *(*fl_kv_types_fn)(const void *ctx, int16_t schema_id,
                                                     size_t *count);

/* Schema id -> how its columns sit in the latest schema (NULL: unknown). */
typedef const fl_schema_map_t *(*fl_kv_map_fn)(const void *ctx, int16_t schema_id);

/* Reserves count values of table table_id's auto-increment counter with
 * one durable write; *first is the counter before them, the block is
 * first + 1 .. first + count (Fluss's ZK sequence, fetched per bucket in
 * blocks of table.auto-increment.cache-size). */
typedef int (*fl_kv_autoinc_reserve_fn)(void *ctx, int64_t table_id, int64_t count,
                                        int64_t *first, fl_error_t *err);

typedef struct fl_kv_table {
    fl_row_format_t kv_format;       /* table.kv.format */
    fl_kv_engine_t engine;
    fl_kv_delete_t delete_behavior;  /* table.delete.behavior (engine's default applied) */
    bool changelog_wal;              /* table.changelog.image = WAL */
    int32_t version_col;             /* versioned: column of the version, -1 otherwise */
    int16_t latest_schema_id;
    const fl_schema_t *latest;       /* borrowed: the latest schema */
    fl_kv_types_fn types;
    fl_kv_map_fn latest_map;         /* with types_ctx; NULL: rows are padded */
    const void *types_ctx;
    size_t pk_count;                 /* every primary-key column, latest schema */
    int32_t pk_cols[FL_KV_PK_MAX];
    size_t phys_pk_count;            /* minus partition keys: the encoded key */
    int32_t phys_pk_cols[FL_KV_PK_MAX];
    /* how clients encode that key (types_key.h: compacted, or the lake
     * format's); a replay from the changelog encodes it the same way */
    fl_key_codec_t pk_codec;
    /* table.log.format COMPACTED (or INDEXED): the changelog is written in
     * that row format, as 0.9.1 does, instead of ARROW */
    bool log_rows;
    fl_row_format_t log_format;
    fl_arrow_codec_t codec;          /* changelog batches (table.log.arrow.compression.*) */
    int zstd_level;
    /* ARRAY/MAP/ROW columns under an ARROW changelog: the changelog
     * carries their values (Arrow children), but the replay does not read
     * them back into rows yet, so the store keeps RocksDB's WAL and does
     * not depend on a replay (row-format changelogs are replayed whole) */
    bool has_nested;
    bool has_agg;
    fl_kv_agg_spec_t agg;            /* aggregation engine */
    size_t part_count;               /* partition keys, in partition-key order */
    int32_t part_cols[FL_KV_PK_MAX];
    /* the auto-increment column (latest schema), when has_autoinc; its
     * values come from autoinc_reserve in blocks of autoinc_cache */
    bool has_autoinc;
    int32_t autoinc_col;
    int64_t autoinc_cache;           /* table.auto-increment.cache-size */
    int64_t table_id;
    fl_kv_autoinc_reserve_fn autoinc_reserve;
    void *autoinc_ctx;
} fl_kv_table_t;

#endif
