/*
 * types_json.h — JSON values read the way Fluss's descriptor parsers read
 * them. The reference walks a Jackson tree (TableDescriptorJsonSerde,
 * SchemaJsonSerde, ColumnJsonSerde, DataTypeJsonSerde,
 * DatabaseDescriptorJsonSerde) with JsonNode's lenient accessors, so what
 * a client may send is what those accessors make of any value, not what
 * the writer produces. These helpers give the same answers over jansson
 * values, so our parsers accept what the reference accepts:
 *
 * | accessor   | string          | integer      | real        | bool     | null   | object   | array |
 * |------------|-----------------|--------------|-------------|----------|--------|----------|-------|
 * | text       | itself          | decimal      | Java double | true/... | "null" | ""       | ""    |
 * | int        | parsed, else 0  | low 32 bits  | truncated   | 1 / 0    | 0      | 0        | 0     |
 * | bool       | "true" trimmed  | != 0         | false       | itself   | false  | false    | false |
 * | elements   | none            | none         | none        | none     | none   | values   | items |
 * | field names| none            | none         | none        | none     | none   | keys     | none  |
 *
 * A missing member (NULL here, Java null there) is not a value: each
 * parser decides what its absence means (the reference mostly fails with
 * a NullPointerException, which we answer with a message of our own).
 * Thread rule: none; pure functions of their arguments.
 */
#ifndef FL_TYPES_JSON_H
#define FL_TYPES_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_strlist.h"

/* JsonNode.asText() of v (non-NULL), newly allocated (fl_free). */
char *fl_json_text(const json_t *v);

/* JsonNode.asInt() of v (non-NULL): Jackson's NumberInput.parseAsInt for
 * strings (trimmed; digits as int, anything else as a double, 0 when
 * neither parses or the digits overflow an int). */
int32_t fl_json_as_int(const json_t *v);

/* JsonNode.asBoolean() of v (non-NULL). */
bool fl_json_as_bool(const json_t *v);

/* JsonNode.elements(): the children of an array, or the member values of
 * an object in document order; nothing for any other value or NULL.
 *     fl_json_iter_t it = fl_json_iter(v);
 *     for (const json_t *e; (e = fl_json_next(&it));) ... */
typedef struct fl_json_iter {
    json_t *v;
    size_t index; /* arrays */
    void *member; /* objects: jansson's iterator */
} fl_json_iter_t;
fl_json_iter_t fl_json_iter(const json_t *v);
const json_t *fl_json_next(fl_json_iter_t *it);

/* A list of names as the descriptor serdes read one: the text of each of
 * v's elements (so null, a scalar or a missing v give none), appended. */
void fl_json_text_list(const json_t *v, fl_strlist_t *out);

/* True when member key of obj is present with a value that is not null
 * (JsonNode.hasNonNull). */
bool fl_json_has_non_null(const json_t *obj, const char *key);

/* Java's Double.toString(d) into out (cap >= 32): the shortest decimal
 * that reads back as d, as "1.0", "0.001", "1.0E7", "1.5E-4", "NaN". */
void fl_json_java_double(double d, char *out, size_t cap);

#endif
