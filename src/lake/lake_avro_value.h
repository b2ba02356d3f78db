/*
 * lake_avro_value.h — Avro values as a tree of fl_avro_value_t nodes, one
 * per datum of a schema (lake_avro_schema.h): built by a caller and
 * encoded, or decoded from bytes (lake_avro.h's encoding). The nodes live
 * in an arena that is freed as a whole; bytes and strings are views,
 * never copied (a decoded value's point into the bytes it was decoded
 * from, a built value's into the caller's memory).
 *
 *   null                      type only
 *   boolean, int, long,       u.boolean, u.i, u.l, u.f, u.d
 *     float, double
 *   enum                      u.i: the symbol's index
 *   bytes, string, fixed      u.bytes (a string is UTF-8, not NUL-terminated)
 *   record                    u.list.items[n]: the fields in schema order
 *   array                     u.list.items[n]
 *   map                       u.list.keys[n] and u.list.items[n]
 *   union                     u.branch.index and u.branch.value
 *
 * Thread rule: none; a tree and its arena belong to their caller.
 */
#ifndef FL_LAKE_AVRO_VALUE_H
#define FL_LAKE_AVRO_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"
#include "lake_avro.h"
#include "lake_avro_schema.h"

/* Datums one decode may produce (every node counts, nulls too): bounds
 * the work and memory of arrays of items that take no bytes. */
#define FL_AVRO_VALUES_MAX (1u << 20)

typedef struct fl_avro_bytes {
    const uint8_t *p;
    size_t len;
} fl_avro_bytes_t;

typedef struct fl_avro_value fl_avro_value_t;
struct fl_avro_value {
    fl_avro_type_t type;
    union {
        bool boolean;
        int32_t i;
        int64_t l;
        float f;
        double d;
        fl_avro_bytes_t bytes;
        struct {
            fl_avro_value_t *items;
            fl_avro_bytes_t *keys; /* maps only */
            size_t n;
        } list;
        struct {
            uint32_t index;
            fl_avro_value_t *value;
        } branch;
    } u;
};

/* Chunks of zeroed memory, freed together. */
typedef struct fl_avro_arena {
    struct fl_avro_chunk *head;
} fl_avro_arena_t;

void fl_avro_arena_init(fl_avro_arena_t *a);
/* Frees everything allocated from the arena; it can be used again. */
void fl_avro_arena_reset(fl_avro_arena_t *a);
/* n zeroed bytes, aligned for any type; NULL if memory runs out. */
void *fl_avro_arena_try_alloc(fl_avro_arena_t *a, size_t n);

/* Building (sizes are the caller's own: out of memory aborts). */
fl_avro_bytes_t fl_avro_str(const char *s);
void fl_avro_value_set_null(fl_avro_value_t *v);
void fl_avro_value_set_boolean(fl_avro_value_t *v, bool x);
void fl_avro_value_set_int(fl_avro_value_t *v, int32_t x);
void fl_avro_value_set_long(fl_avro_value_t *v, int64_t x);
void fl_avro_value_set_float(fl_avro_value_t *v, float x);
void fl_avro_value_set_double(fl_avro_value_t *v, double x);
void fl_avro_value_set_enum(fl_avro_value_t *v, uint32_t index);
/* bytes, string and fixed keep a view of p (not copied). */
void fl_avro_value_set_bytes(fl_avro_value_t *v, const void *p, size_t n);
void fl_avro_value_set_string(fl_avro_value_t *v, const char *s);
void fl_avro_value_set_fixed(fl_avro_value_t *v, const void *p, size_t n);
/* These return the n child nodes to fill (a record's in field order; a
 * map's keys are v->u.list.keys, to set as well). */
fl_avro_value_t *fl_avro_value_set_record(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n);
fl_avro_value_t *fl_avro_value_set_array(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n);
fl_avro_value_t *fl_avro_value_set_map(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n);
/* The union branch's value node to fill. */
fl_avro_value_t *fl_avro_value_set_branch(fl_avro_value_t *v, fl_avro_arena_t *a,
                                          uint32_t index);

/* Appends v's encoding under schema s. INVALID_ARG (out unchanged) when v
 * does not follow s: another type, a record's field count, a union
 * branch, enum index or fixed size out of range; the message names the
 * path ("data_file.file_path: long given for string"). Arrays and maps
 * go out as one block with a positive count. */
int fl_avro_value_encode(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                         fl_error_t *err);
/* Decodes one datum of schema s from r into *out, its nodes from arena a.
 * CORRUPT for malformed bytes (lake_avro.h's reads; an array or map block
 * counting more items than its bytes can hold; over FL_AVRO_VALUES_MAX
 * datums), NO_MEMORY if the arena cannot grow. */
int fl_avro_value_decode(const fl_avro_schema_t *s, fl_avro_reader_t *r, fl_avro_arena_t *a,
                         fl_avro_value_t *out, fl_error_t *err);

/* The record's field by name (NULL: no such field), and the value inside a
 * union (v itself when v is not a union; a null branch gives a node of
 * type FL_AVRO_NULL). */
const fl_avro_value_t *fl_avro_value_field(const fl_avro_schema_t *record,
                                           const fl_avro_value_t *v, const char *name);
const fl_avro_value_t *fl_avro_value_unwrap(const fl_avro_value_t *v);

#endif
