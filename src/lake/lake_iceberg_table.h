/*
 * lake_iceberg_table.h — an Iceberg v2 table as files (the Iceberg
 * specification, "Table Metadata", "Snapshots", Appendix C's JSON and
 * "File System Tables"): the table metadata JSON, the edits a tiering
 * round or an ADD COLUMN makes to it, and the Hadoop layout whose atomic
 * commit makes a new version visible. Fluss's lake tables are these
 * (issue 21; shared/reference/lakehouse.md §1 "Catalog", "Commit
 * protocol"): flussd is their only writer, engines read them.
 *
 *   <dir>/metadata/v<N>.metadata.json   version N of the metadata, N >= 1,
 *                                       written once, never replaced
 *   <dir>/metadata/version-hint.text    "N" (digits, no newline): a hint
 *                                       that may lag (readers probe on)
 *   <dir>/metadata/<uuid>.tmp           a commit in flight, or an orphan
 *   <dir>/metadata/<name>.avro          manifests and manifest lists, and
 *   <dir>/data/<partition>/<name>       data files: the caller's
 *
 * Metadata JSON (format-version 2): every key the specification marks
 * required for v2 is written and required on reading, plus "properties",
 * "current-snapshot-id" (-1 for none, as Java writes v2 tables), "refs"
 * ({"main": branch at the current snapshot} when there is one),
 * "snapshots", "snapshot-log" and "metadata-log". Reading also takes the
 * files of pyiceberg and Java: unknown keys are skipped (so statistics,
 * encryption keys and refs other than "main" are not kept, and a commit
 * built on such a table drops them: the lake is flussd's), an absent or
 * null "current-snapshot-id" is -1. What this C model cannot hold is
 * INVALID_ARG, named: another format-version, v3 column types,
 * partition transforms other than identity and bucket[N] (and identity
 * over other than int, long, string and date: the partition values
 * lake_iceberg_manifest.h knows), sort transforms other than identity, a
 * v1 snapshot's "manifests" list, gzip metadata. Nested column types
 * (struct, list, map) are read and written to any depth up to
 * FL_ICE_TYPE_DEPTH_MAX, a schema's fields at every depth counted against
 * FL_ICE_SCHEMA_NODES_MAX; identifier fields and partition and sort
 * sources name top-level primitive columns only. Malformed JSON, missing
 * or mistyped keys and broken invariants (ids not unique at every depth
 * or above last-column-id, a current id that names nothing, sequence
 * numbers above last-sequence-number, ...) are CORRUPT, naming the key's
 * path ("snapshots[2].summary", "schemas[0].fields[1].type.element.id").
 *
 * Commit (fl_ice_table_commit) of version N+1 over base N:
 *   1. encode; write metadata/<uuid>.tmp (O_EXCL), fsync, close
 *   2. link(2) it to metadata/v<N+1>.metadata.json: the commit point. link
 *      never replaces a file, so of two committers on the same base exactly
 *      one wins; the other gets EEXIST, unlinks its tmp and returns
 *      FLUSS_ERR__CONFLICT (reload, rebuild on the new head, retry)
 *   3. fsync metadata/ (the new name durable)
 *   4. unlink the tmp
 *   5. version-hint.text: "N+1" into a uniquely named temp, fsync, rename
 *      over the hint, fsync metadata/ — best-effort, skipped when a newer
 *      version already exists (a slower committer must not set it back)
 *
 * Crash matrix:
 *   before 2       nothing visible; the tmp is an orphan (GC removes
 *                  *.tmp older than the longest round, and the data files
 *                  and manifests no metadata names)
 *   2 .. 3         visible to readers now; after a power cut the name may
 *                  vanish (then as before 2). A failed fsync in 3 is
 *                  reported as FLUSS_ERR__IO with info->visible set: the
 *                  caller keeps the files (readers may be reading them)
 *                  and latches the table as a failed log fsync latches a
 *                  log directory, until a reload settles what survived
 *   3 .. 5         committed; the hint lags one version: loaders (ours,
 *                  Java's) probe v<N+1>, v<N+2>... forward; pyiceberg's
 *                  hint-only readers see N, a whole older version
 *   after 5        committed, hint current
 *
 * Loading (fl_ice_table_load): the hint (missing, garbled, or naming a
 * missing file: the highest v<N> in a listing of metadata/), then probes
 * forward, then reads and decodes that version (at most
 * FL_ICE_META_BYTES_MAX bytes).
 *
 * Thread rule: no shared state; any thread, and any number of processes,
 * may load and commit the same table at once (the link fences them).
 * A fl_ice_meta_read_t or head belongs to its caller.
 */
#ifndef FL_LAKE_ICEBERG_TABLE_H
#define FL_LAKE_ICEBERG_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_avro_value.h"
#include "lake_iceberg_manifest.h"

/* Bounds on what a decode accepts (and an encode writes): the file size
 * bounds the rest, these bound each list so that no count from outside
 * sizes an allocation unchecked. Snapshot expiry (fl_ice_meta_expired, for
 * tables that ask for it) keeps a table inside them; a metadata-log is
 * trimmed on every edit. */
#define FL_ICE_META_BYTES_MAX (128u << 20)
#define FL_ICE_SCHEMAS_MAX 4096
#define FL_ICE_SCHEMA_FIELDS_MAX 4096 /* top-level columns of a schema; a struct's fields */
/* Nesting of struct, list and map types (a top-level column of a
 * primitive type is depth 0, a struct column's fields depth 1, ...), and
 * the fields of a schema at every depth together (list elements, map
 * keys and values included): a schema's cost to walk. */
#define FL_ICE_TYPE_DEPTH_MAX 32
#define FL_ICE_SCHEMA_NODES_MAX 65536
#define FL_ICE_SPECS_MAX 1024
#define FL_ICE_SORT_ORDERS_MAX 1024
#define FL_ICE_SORT_FIELDS_MAX 64
#define FL_ICE_PROPS_MAX 4096 /* table properties; a snapshot summary too */
#define FL_ICE_SNAPSHOTS_MAX (1u << 20) /* snapshots, and snapshot-log entries */
#define FL_ICE_METADATA_LOG_MAX 4096
/* "write.metadata.previous-versions-max"'s default (as Java's): the
 * metadata-log entries kept by fl_ice_meta_with_*. */
#define FL_ICE_METADATA_LOG_DEFAULT 100
/* Field ids above this are Iceberg's reserved metadata columns. */
#define FL_ICE_FIELD_ID_MAX 2147483447
/* A snapshot's absent schema-id (reading); "the current schema" (with_*). */
#define FL_ICE_NO_SCHEMA (-1)
#define FL_ICE_TABLE_UUID_LEN 36

typedef struct fl_ice_nested fl_ice_nested_t;

/* One field of a schema: a top-level column, a struct's field, a list's
 * element or a map's key or value. Every one has its own id, so a walker
 * treats every node alike (fl_ice_field_walk). */
typedef struct fl_ice_field {
    int32_t id; /* 0 .. FL_ICE_FIELD_ID_MAX, unique in the schema at every depth */
    const char *name; /* "element", "key", "value" for those */
    bool required; /* a map's key always */
    /* A primitive field's Iceberg JSON type: "boolean", "int", "long",
     * "float", "double", "date", "time", "timestamp", "timestamptz",
     * "string", "binary", "decimal(P,S)", "fixed[L]", "uuid" (decode gives
     * the canonical spelling: "decimal(10,2)", never "decimal(10, 2)").
     * NULL for a nested one. */
    const char *type;
    const char *doc; /* NULL: none (always for elements, keys, values) */
    const fl_ice_nested_t *nested; /* NULL: primitive (type); else struct/list/map */
} fl_ice_field_t;

/* A nested type (Appendix C): {"type":"struct","fields":[...]},
 * {"type":"list","element-id":N,"element":T,"element-required":B},
 * {"type":"map","key-id":N,"key":T,"value-id":N,"value":T,
 * "value-required":B}. A list's element and a map's key and value are
 * fields (their ids "element-id", "key-id", "value-id"; their
 * requiredness "element-required", required, "value-required"). */
typedef enum fl_ice_nested_kind {
    FL_ICE_STRUCT = 1,
    FL_ICE_LIST = 2,
    FL_ICE_MAP = 3,
} fl_ice_nested_kind_t;

struct fl_ice_nested {
    fl_ice_nested_kind_t kind;
    /* struct: its fields, names unique (each may be nested again) */
    const fl_ice_field_t *fields;
    size_t n_fields;
    /* list: element; map: key and value; NULL otherwise */
    const fl_ice_field_t *element, *key, *value;
};

typedef struct fl_ice_schema {
    int32_t schema_id;
    const fl_ice_field_t *fields; /* top-level columns */
    size_t n_fields;
    /* required, non-float, primitive top-level columns of this schema (a
     * primary key) */
    const int32_t *identifier_ids;
    size_t n_identifier_ids;
} fl_ice_schema_t;

typedef struct fl_ice_sort_field { /* transform identity */
    int32_t source_id;
    bool descending;
    bool nulls_last;
} fl_ice_sort_field_t;

/* order_id 0 is the unsorted order (no fields); others have fields. */
typedef struct fl_ice_sort_order {
    int32_t order_id;
    const fl_ice_sort_field_t *fields;
    size_t n_fields;
} fl_ice_sort_order_t;

typedef struct fl_ice_prop {
    const char *key;
    const char *value;
} fl_ice_prop_t;

typedef struct fl_ice_snapshot {
    int64_t snapshot_id; /* >= 0 */
    int64_t parent_snapshot_id; /* or FL_ICE_NONE */
    /* fl_ice_meta_with_snapshot: FL_ICE_NONE for last-sequence-number + 1 */
    int64_t sequence_number;
    /* fl_ice_meta_with_snapshot: FL_ICE_NONE for now */
    int64_t timestamp_ms;
    const char *manifest_list; /* file:///... */
    int32_t schema_id; /* or FL_ICE_NO_SCHEMA */
    /* "operation" ("append", "replace", "overwrite", "delete") required;
     * Appendix F's counts are the caller's */
    const fl_ice_prop_t *summary;
    size_t n_summary;
} fl_ice_snapshot_t;

typedef struct fl_ice_snapshot_log {
    int64_t timestamp_ms;
    int64_t snapshot_id;
} fl_ice_snapshot_log_t;

typedef struct fl_ice_metadata_log {
    int64_t timestamp_ms;
    const char *metadata_file;
} fl_ice_metadata_log_t;

/* One version of a table's metadata. Partition fields name their source
 * column's id; their `type` (the partition value's) must be what the
 * source column gives: INT, LONG, STRING or DATE for identity, INT for a
 * bucket (decode fills it in that way). */
typedef struct fl_ice_table_meta {
    char table_uuid[FL_ICE_TABLE_UUID_LEN + 1];
    const char *location; /* file:///abs/dir */
    int64_t last_sequence_number;
    int64_t last_updated_ms;
    int32_t last_column_id;
    const fl_ice_schema_t *schemas;
    size_t n_schemas;
    int32_t current_schema_id;
    const fl_ice_partition_spec_t *specs;
    size_t n_specs;
    int32_t default_spec_id;
    int32_t last_partition_id; /* 999 when no spec has a field */
    const fl_ice_sort_order_t *sort_orders;
    size_t n_sort_orders;
    int32_t default_sort_order_id;
    const fl_ice_prop_t *properties;
    size_t n_properties;
    int64_t current_snapshot_id; /* FL_ICE_NONE: no snapshot */
    const fl_ice_snapshot_t *snapshots;
    size_t n_snapshots;
    const fl_ice_snapshot_log_t *snapshot_log;
    size_t n_snapshot_log;
    const fl_ice_metadata_log_t *metadata_log;
    size_t n_metadata_log;
} fl_ice_table_meta_t;

/* A primitive Iceberg type, parsed. */
typedef enum fl_ice_prim {
    FL_ICE_T_BOOLEAN,
    FL_ICE_T_INT,
    FL_ICE_T_LONG,
    FL_ICE_T_FLOAT,
    FL_ICE_T_DOUBLE,
    FL_ICE_T_DATE,
    FL_ICE_T_TIME,
    FL_ICE_T_TIMESTAMP,
    FL_ICE_T_TIMESTAMPTZ,
    FL_ICE_T_STRING,
    FL_ICE_T_BINARY,
    FL_ICE_T_DECIMAL,
    FL_ICE_T_FIXED,
    FL_ICE_T_UUID,
} fl_ice_prim_t;

typedef struct fl_ice_type_info {
    fl_ice_prim_t prim;
    int32_t precision, scale; /* decimal: 1 <= P <= 38, 0 <= S <= P */
    int32_t length; /* fixed: >= 1 */
} fl_ice_type_info_t;

/* Parses an Iceberg JSON type string (spaces around decimal's numbers
 * allowed, as the specification asks of readers). False: not one of the
 * v2 primitives. */
bool fl_ice_type_parse(const char *s, fl_ice_type_info_t *out);
/* The top-level column of a schema with this id, or NULL (partition and
 * sort fields and identifier ids name only these). */
const fl_ice_field_t *fl_ice_schema_field(const fl_ice_schema_t *s, int32_t id);
/* The field of a schema with this id at any depth, or NULL. */
const fl_ice_field_t *fl_ice_schema_find(const fl_ice_schema_t *s, int32_t id);
/* Calls fn on f and then on every field inside its type, in pre-order
 * (a struct's fields in order, a list's element, a map's key then value,
 * each followed by its own inside); depth is 0 for f. A nonzero return of
 * fn stops the walk and is returned. The tree must have passed the rules
 * (decoded, or checked by an encode). */
typedef int (*fl_ice_field_fn)(const fl_ice_field_t *f, int depth, void *ctx);
int fl_ice_field_walk(const fl_ice_field_t *f, fl_ice_field_fn fn, void *ctx);
/* The highest id in f's tree (f's own included). */
int32_t fl_ice_field_max_id(const fl_ice_field_t *f);
/* Whether two fields' trees have the same ids, names, requiredness and
 * types (a decimal spelled either way), docs aside. */
bool fl_ice_field_same(const fl_ice_field_t *a, const fl_ice_field_t *b);
/* The schema, spec or snapshot with this id, or NULL. */
const fl_ice_schema_t *fl_ice_meta_schema(const fl_ice_table_meta_t *m, int32_t schema_id);
const fl_ice_partition_spec_t *fl_ice_meta_spec(const fl_ice_table_meta_t *m, int32_t spec_id);
const fl_ice_snapshot_t *fl_ice_meta_snapshot(const fl_ice_table_meta_t *m, int64_t snapshot_id);

/* ---- JSON ---- */

/* Appends the metadata JSON of m to out. INVALID_ARG (naming the key) for
 * a description against the rules above, nothing appended. */
int fl_ice_meta_encode(const fl_ice_table_meta_t *m, fl_buf_t *out, fl_error_t *err);
/* The JSON of one schema (Appendix C, with "schema-id"), as a manifest's
 * "schema" header takes it. INVALID_ARG for a bad schema. */
int fl_ice_schema_encode(const fl_ice_schema_t *s, fl_buf_t *out, fl_error_t *err);

/* A metadata read or built here: everything it points to is in arena. */
typedef struct fl_ice_meta_read {
    fl_ice_table_meta_t meta;
    fl_avro_arena_t arena;
} fl_ice_meta_read_t;

void fl_ice_meta_read_init(fl_ice_meta_read_t *r);
void fl_ice_meta_read_reset(fl_ice_meta_read_t *r);

/* Decodes len bytes of metadata JSON into *out (initialized; reset first,
 * and again on failure). CORRUPT or INVALID_ARG as above, with the key's
 * path in the message; NO_MEMORY. No I/O. */
int fl_ice_meta_decode(const uint8_t *json, size_t len, fl_ice_meta_read_t *out, fl_error_t *err);

/* ---- edits: a new version from a base (out must not hold base) ---- */

/* base + snapshot s: s->parent_snapshot_id must be base's current
 * snapshot (FL_ICE_NONE for the first), its id new, its sequence number
 * above base's last-sequence-number (FL_ICE_NONE: last + 1), its schema
 * FL_ICE_NO_SCHEMA (the current one) or an existing one, its timestamp
 * FL_ICE_NONE for the wall clock. The result: s appended and current,
 * refs.main on it, last-sequence-number = s's, a snapshot-log entry,
 * last-updated-ms = max(base's, s's timestamp), and, when
 * base_metadata_file (a file:// URI) is not NULL, a metadata-log entry
 * {base's last-updated-ms, base_metadata_file}, keeping the newest
 * "write.metadata.previous-versions-max" (default 100) entries. Copied
 * into out's arena. INVALID_ARG names what breaks a rule. */
int fl_ice_meta_with_snapshot(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                              const fl_ice_snapshot_t *s, fl_ice_meta_read_t *out,
                              fl_error_t *err);
/* base + schema (ADD COLUMN): appended and current (schema_id
 * FL_ICE_NO_SCHEMA: the highest id + 1), last-column-id raised to its
 * highest field id (nested ones included), last-updated-ms now (never
 * back), the metadata-log as above. Evolution rules checked against the
 * current schema: a column new to the table (id above last-column-id) is
 * optional and every id inside its type is new too (fields in there may
 * be required, as Iceberg's addColumn takes them); a kept one keeps its type
 * or widens it (int -> long, float -> double, decimal(P,S) ->
 * decimal(P',S) with P' > P) and does not become required; a kept nested
 * one keeps its kind and the ids of its element, key and value, and these
 * and a struct's kept fields follow the same rules (a struct may gain
 * optional fields with new ids); no id of a dropped field comes back;
 * the default spec's and sort order's source columns stay. INVALID_ARG
 * otherwise. */
int fl_ice_meta_with_schema(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                            const fl_ice_schema_t *schema, fl_ice_meta_read_t *out,
                            fl_error_t *err);
/* base without the snapshots ids[0..n) (snapshot expiry, Java's
 * ExpireSnapshots/TableMetadata#removeSnapshots): each id must be in
 * base, once, and none the current snapshot (refs.main stays valid);
 * n >= 1. The result: those snapshots gone (a kept snapshot's
 * parent-snapshot-id may now name none: ancestry ends there, as in
 * Java), the snapshot-log without them — an entry of an expired snapshot
 * drops every entry before it too, as Java rewrites the log, so the log
 * never shows a snapshot current that was not — last-updated-ms now
 * (never back), the metadata-log as above. Copied into out's arena.
 * INVALID_ARG names the id that breaks a rule. */
int fl_ice_meta_without_snapshots(const fl_ice_table_meta_t *base, const char *base_metadata_file,
                                  const int64_t *ids, size_t n, fl_ice_meta_read_t *out,
                                  fl_error_t *err);

/* ---- snapshot expiry: which snapshots (lake_iceberg_expire.c) ---- */

/* Iceberg's table properties of snapshot retention (TableProperties),
 * with Java's defaults. */
#define FL_ICE_MAX_SNAPSHOT_AGE_KEY "history.expire.max-snapshot-age-ms"
#define FL_ICE_MAX_SNAPSHOT_AGE_DEFAULT_MS 432000000ll /* 5 days */
#define FL_ICE_MIN_SNAPSHOTS_KEY "history.expire.min-snapshots-to-keep"
#define FL_ICE_MIN_SNAPSHOTS_DEFAULT 1
#define FL_ICE_GC_ENABLED_KEY "gc.enabled"

typedef struct fl_ice_expire_policy {
    int64_t max_age_ms; /* >= 0 */
    int32_t min_keep; /* >= 1: the current snapshot always stays */
    bool gc_enabled; /* false: Java refuses to expire (files may be shared) */
} fl_ice_expire_policy_t;

/* The policy m's properties give. A value that is not a number in range
 * (Java would throw) takes the default, and a min-snapshots-to-keep below
 * 1 is 1: the current snapshot is never expired. */
void fl_ice_expire_policy_of(const fl_ice_table_meta_t *m, fl_ice_expire_policy_t *p);

/* The snapshots of m that expire at now_ms under p, as Java's
 * RemoveSnapshots picks them for the main branch: walking back from the
 * current snapshot, an ancestor is kept while fewer than min_keep are kept
 * or it is not older than now_ms - max_age_ms, and the walk stops at the
 * first one that is not; a snapshot that is no ancestor of the current
 * one is kept while it is not older than that. Ids into ids (room for
 * m->n_snapshots), in m's order; returns how many. No snapshot without a
 * current one, nor when p->gc_enabled is false. */
size_t fl_ice_meta_expired(const fl_ice_table_meta_t *m, const fl_ice_expire_policy_t *p,
                           int64_t now_ms, int64_t *ids);

/* ---- the Hadoop layout ---- */

/* The local path of a file:// (or file:) URI in a table's metadata;
 * anything else as it is. */
const char *fl_lake_uri_path(const char *uri);

/* Creates <dir>/metadata (and dir) and commits m as v1. An existing v1:
 * FLUSS_ERR__CONFLICT. */
int fl_ice_table_create(const char *dir, const fl_ice_table_meta_t *m, fl_error_t *err);

typedef struct fl_ice_table_head {
    int32_t version; /* N of v<N>.metadata.json */
    char *metadata_path; /* <dir>/metadata/v<N>.metadata.json */
    /* file:///<absolute dir>/metadata/v<N>.metadata.json: the
     * base_metadata_file of the next edit */
    char *metadata_location;
    fl_ice_meta_read_t meta;
} fl_ice_table_head_t;

void fl_ice_table_head_init(fl_ice_table_head_t *h);
void fl_ice_table_head_reset(fl_ice_table_head_t *h);

/* The newest version of the table at dir into *out (initialized; reset
 * first, and on failure). FLUSS_ERR_TABLE_NOT_EXIST when dir has no
 * metadata/ or no v<N>.metadata.json in it; IO; CORRUPT or INVALID_ARG
 * from the decode, prefixed with the file's path. */
int fl_ice_table_load(const char *dir, fl_ice_table_head_t *out, fl_error_t *err);

/* What a commit did, for callers that must tell the failures apart. */
typedef struct fl_ice_commit_info {
    int32_t version; /* base_version + 1 */
    bool visible; /* linked: readers may see it, its files must stay */
    bool durable; /* metadata/ fsynced after the link: committed */
    bool hint_written; /* version-hint.text says version */
} fl_ice_commit_info_t;

/* Commits next as v<base_version + 1> (base_version 0: create), in the
 * order and with the outcomes of the header comment. 0: committed and
 * durable (the hint is best-effort: its failure is logged, not returned).
 * FLUSS_ERR__CONFLICT: v<base_version + 1> exists (nothing of ours
 * remains). INVALID_ARG: next breaks the rules, or base_version names no
 * version. FLUSS_ERR__IO: before the link nothing is visible; after it
 * (only the directory fsync can fail there) the commit is visible but
 * not known durable — see the crash matrix; info (may be NULL) tells. */
int fl_ice_table_commit(const char *dir, int32_t base_version, const fl_ice_table_meta_t *next,
                        fl_error_t *err);
int fl_ice_table_commit_info(const char *dir, int32_t base_version,
                             const fl_ice_table_meta_t *next, fl_ice_commit_info_t *info,
                             fl_error_t *err);

#endif
