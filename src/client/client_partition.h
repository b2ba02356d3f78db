/*
 * client_partition.h — implementer header of libfluss's partition files
 * (client_partition_name.c: names and specs, pure; client_partition.c:
 * the partition metadata a writer, scanner or lookuper resolves, and the
 * partition admin calls).
 *
 * A partition's name is its values in partition-key order joined by '$'
 * (Fluss's ResolvedPartitionSpec); a value is the text Fluss's
 * PartitionUtils#convertValueOfType gives the row's value (strings as
 * is, integers in decimal, DATE yyyy-MM-dd, TIME HH-mm-ss_SSS, FLOAT and
 * DOUBLE as Java prints them with '.' → '_', TIMESTAMP
 * yyyy-MM-dd-HH-mm-ss_ + the nanos of the second without trailing
 * zeros, bytes in lowercase hex). A spec as users type it is
 * "k1=v1,k2=v2".
 *
 * The partition cache (fl_parts_t) belongs to one writer, scanner or
 * lookuper (one user at a time). A table without partitions has one
 * pseudo partition, id -1, whose leaders are the table's: every user
 * addresses a bucket as (partition index, bucket) either way.
 */
#ifndef FL_CLIENT_PARTITION_H
#define FL_CLIENT_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "client_conn.h"
#include "common_buf.h"
#include "common_error.h"
#include "common_strlist.h"
#include "fluss.h"
#include "types_datatype.h"
#include "types_row.h"

/* Partitions one cache holds at most (Fluss's max.partition.num defaults
 * to 1000; a writer spraying rows over more fails instead of growing
 * without bound). */
#define FL_PARTS_MAX 100000
/* A partition value's text at most (names obey TablePath's 200). */
#define FL_PARTITION_VALUE_MAX 256

/* ---- names and specs (client_partition_name.c) ---- */

/* Whether a column of type t may be a partition key (PartitionUtils
 * PARTITION_KEY_SUPPORTED_TYPES). */
bool fl_partition_type_ok(const fl_datatype_t *t);
/* Appends the partition-name text of cell c of row (type t) to out.
 * FLUSS_ERR__INVALID_ARG for NULL or an unsupported type. */
int fl_partition_value_text(const fl_datatype_t *t, const fl_row_t *row, const fl_cell_t *c,
                            fl_buf_t *out, fl_error_t *err);
/* Java's Float.toString / Double.toString of d (shortest digits that
 * read back as the same float or double), with '.' kept. */
void fl_java_float_text(double d, bool single, fl_buf_t *out);
/* The partition name of row: the values of columns cols[0..n) joined by
 * '$'; out is reset first and NUL terminated. */
int fl_partition_name_of_row(const fl_datatype_t *const *types, const fl_row_t *row,
                             const int32_t *cols, size_t n, fl_buf_t *out, fl_error_t *err);
/* Parses a spec "k1=v1,k2=v2" (spaces around items ignored) into pairs
 * in the order given. An empty spec is no pairs. FLUSS_ERR__INVALID_ARG
 * for an item without '=', an empty key or a key given twice. */
int fl_partition_spec_parse(const char *spec, fl_kvlist_t *out, fl_error_t *err);
/* The name of a full spec for partition keys keys[0..n): each key's value
 * in key order, joined by '$'; out reset and NUL terminated.
 * FLUSS_ERR__INVALID_ARG when a key is missing or the spec names another. */
int fl_partition_name_of_spec(const fl_kvlist_t *spec, const fl_strlist_t *keys, fl_buf_t *out,
                              fl_error_t *err);

/* ---- the partition cache (client_partition.c) ---- */

typedef struct fl_part {
    int64_t id;          /* -1: the table is not partitioned */
    char *name;          /* NULL for id -1 */
    int32_t *leader;     /* per bucket: index into the table's nodes, -1 none */
} fl_part_t;

typedef struct fl_parts {
    const fluss_table_t *t;
    fl_part_t *items;
    size_t count, cap;
    size_t last;               /* the last hit of a name lookup */
    fl_client_conn_t conn;     /* to the coordinator, opened on first need */
} fl_parts_t;

/* A table's cache: its pseudo partition for an unpartitioned table,
 * empty for a partitioned one. */
void fl_parts_init(fl_parts_t *p, const fluss_table_t *t);
void fl_parts_free(fl_parts_t *p);
/* The index of the partition called name, resolved through GET_METADATA
 * when not cached; with create, a missing partition is created first
 * (CREATE_PARTITION, ignoring one that appeared meanwhile), as the Java
 * writer's client.writer.dynamic-create-partition.enabled does.
 * FLUSS_ERR_PARTITION_NOT_EXISTS when missing (and not created). Blocks
 * on a miss. */
int fl_parts_by_name(fl_parts_t *p, const char *name, bool create, size_t *index,
                     fl_error_t *err);
/* The same by partition id (GET_METADATA by id on a miss). */
int fl_parts_by_id(fl_parts_t *p, int64_t id, size_t *index, fl_error_t *err);
/* The leader's node index of (partition index, bucket), -1 none. */
static inline int32_t fl_parts_leader(const fl_parts_t *p, size_t part, int32_t bucket) {
    return p->items[part].leader[bucket];
}

/* A table's partition name for a spec or a name: "k=v,..." is turned
 * into the name of its values; text without '=' is taken as a name. */
int fl_partition_name_of_text(const fluss_table_t *t, const char *text, fl_buf_t *out,
                              fl_error_t *err);

#endif
