/*
 * lake_avro_value.c — the Avro value tree (lake_avro_value.h): its arena,
 * its builders, and encode/decode by schema. A decoded array or map grows
 * geometrically across blocks (many one-item blocks cost linear memory),
 * and each block's count is checked against the bytes left at its items'
 * least size before any node is allocated for it.
 */
#include "lake_avro_value.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

/* ---- arena ---- */

#define ARENA_CHUNK_BYTES 16384

struct fl_avro_chunk {
    struct fl_avro_chunk *next;
    size_t cap, used;
    max_align_t data[];
};

void fl_avro_arena_init(fl_avro_arena_t *a) { a->head = NULL; }

void fl_avro_arena_reset(fl_avro_arena_t *a) {
    while (a->head) {
        struct fl_avro_chunk *c = a->head;
        a->head = c->next;
        fl_free(c);
    }
}

static struct fl_avro_chunk *chunk_new(size_t cap) {
    if (cap > SIZE_MAX - sizeof(struct fl_avro_chunk)) return NULL;
    struct fl_avro_chunk *c = fl_try_malloc(sizeof(*c) + cap);
    if (!c) return NULL;
    c->cap = cap;
    c->used = 0;
    return c;
}

void *fl_avro_arena_try_alloc(fl_avro_arena_t *a, size_t n) {
    const size_t align = sizeof(max_align_t);
    if (n > SIZE_MAX - align) return NULL;
    n = (n + align - 1) / align * align;
    struct fl_avro_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        if (n > ARENA_CHUNK_BYTES / 4) { /* its own chunk, behind the current one */
            struct fl_avro_chunk *big = chunk_new(n);
            if (!big) return NULL;
            big->used = n;
            if (c) {
                big->next = c->next;
                c->next = big;
            } else {
                big->next = NULL;
                a->head = big;
            }
            memset(big->data, 0, n);
            return big->data;
        }
        c = chunk_new(ARENA_CHUNK_BYTES);
        if (!c) return NULL;
        c->next = a->head;
        a->head = c;
    }
    void *p = (uint8_t *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

static void *arena_alloc_n(fl_avro_arena_t *a, size_t count, size_t size) {
    if (count && size > SIZE_MAX / count) return NULL;
    return fl_avro_arena_try_alloc(a, count * size);
}

/* ---- building ---- */

fl_avro_bytes_t fl_avro_str(const char *s) {
    return (fl_avro_bytes_t){(const uint8_t *)s, strlen(s)};
}

void fl_avro_value_set_null(fl_avro_value_t *v) { v->type = FL_AVRO_NULL; }

void fl_avro_value_set_boolean(fl_avro_value_t *v, bool x) {
    v->type = FL_AVRO_BOOLEAN;
    v->u.boolean = x;
}

void fl_avro_value_set_int(fl_avro_value_t *v, int32_t x) {
    v->type = FL_AVRO_INT;
    v->u.i = x;
}

void fl_avro_value_set_long(fl_avro_value_t *v, int64_t x) {
    v->type = FL_AVRO_LONG;
    v->u.l = x;
}

void fl_avro_value_set_float(fl_avro_value_t *v, float x) {
    v->type = FL_AVRO_FLOAT;
    v->u.f = x;
}

void fl_avro_value_set_double(fl_avro_value_t *v, double x) {
    v->type = FL_AVRO_DOUBLE;
    v->u.d = x;
}

void fl_avro_value_set_enum(fl_avro_value_t *v, uint32_t index) {
    v->type = FL_AVRO_ENUM;
    v->u.i = (int32_t)index;
}

static void set_view(fl_avro_value_t *v, fl_avro_type_t t, const void *p, size_t n) {
    v->type = t;
    v->u.bytes.p = p;
    v->u.bytes.len = n;
}

void fl_avro_value_set_bytes(fl_avro_value_t *v, const void *p, size_t n) {
    set_view(v, FL_AVRO_BYTES, p, n);
}

void fl_avro_value_set_string(fl_avro_value_t *v, const char *s) {
    set_view(v, FL_AVRO_STRING, s, strlen(s));
}

void fl_avro_value_set_fixed(fl_avro_value_t *v, const void *p, size_t n) {
    set_view(v, FL_AVRO_FIXED, p, n);
}

static fl_avro_value_t *set_list(fl_avro_value_t *v, fl_avro_type_t t, fl_avro_arena_t *a,
                                 size_t n) {
    fl_avro_value_t *items = arena_alloc_n(a, n, sizeof(*items));
    if (!items) abort(); /* a caller's own size */
    v->type = t;
    v->u.list.items = items;
    v->u.list.keys = NULL;
    v->u.list.n = n;
    return items;
}

fl_avro_value_t *fl_avro_value_set_record(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n) {
    return set_list(v, FL_AVRO_RECORD, a, n);
}

fl_avro_value_t *fl_avro_value_set_array(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n) {
    return set_list(v, FL_AVRO_ARRAY, a, n);
}

fl_avro_value_t *fl_avro_value_set_map(fl_avro_value_t *v, fl_avro_arena_t *a, size_t n) {
    fl_avro_value_t *items = set_list(v, FL_AVRO_MAP, a, n);
    v->u.list.keys = arena_alloc_n(a, n, sizeof(fl_avro_bytes_t));
    if (!v->u.list.keys) abort();
    return items;
}

fl_avro_value_t *fl_avro_value_set_branch(fl_avro_value_t *v, fl_avro_arena_t *a,
                                          uint32_t index) {
    fl_avro_value_t *inner = fl_avro_arena_try_alloc(a, sizeof(*inner));
    if (!inner) abort();
    v->type = FL_AVRO_UNION;
    v->u.branch.index = index;
    v->u.branch.value = inner;
    return inner;
}

const fl_avro_value_t *fl_avro_value_field(const fl_avro_schema_t *record,
                                           const fl_avro_value_t *v, const char *name) {
    int i = fl_avro_schema_field_index(record, name);
    if (i < 0 || v->type != FL_AVRO_RECORD || (size_t)i >= v->u.list.n) return NULL;
    return &v->u.list.items[i];
}

const fl_avro_value_t *fl_avro_value_unwrap(const fl_avro_value_t *v) {
    return v->type == FL_AVRO_UNION ? v->u.branch.value : v;
}

/* ---- encoding ---- */

static int encode(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                  fl_error_t *err);

static int mismatch(const char *what, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: %s", what);
}

static int encode_record(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                         fl_error_t *err) {
    if (v->u.list.n != s->n_fields)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: record %s: %zu values for %zu fields",
                          s->name, v->u.list.n, s->n_fields);
    for (size_t i = 0; i < s->n_fields; i++) {
        if (encode(s->fields[i].type, &v->u.list.items[i], out, err)) {
            fl_err_prefix(err, "%s: ", s->fields[i].name);
            return FLUSS_ERR__INVALID_ARG;
        }
    }
    return 0;
}

static int encode_list(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                       fl_error_t *err) {
    size_t n = v->u.list.n;
    if (n && (!v->u.list.items || (s->type == FL_AVRO_MAP && !v->u.list.keys)))
        return mismatch("array or map without its items", err);
    if (n) fl_avro_put_block(out, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        if (s->type == FL_AVRO_MAP)
            fl_avro_put_bytes(out, v->u.list.keys[i].p, v->u.list.keys[i].len);
        if (encode(s->items, &v->u.list.items[i], out, err)) {
            fl_err_prefix(err, "[%zu]: ", i);
            return FLUSS_ERR__INVALID_ARG;
        }
    }
    fl_avro_put_block(out, 0);
    return 0;
}

static int encode(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                  fl_error_t *err) {
    if (v->type != s->type)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: %s given for %s",
                          fl_avro_type_name(v->type), fl_avro_type_name(s->type));
    switch (s->type) {
    case FL_AVRO_NULL: return 0;
    case FL_AVRO_BOOLEAN: fl_avro_put_boolean(out, v->u.boolean); return 0;
    case FL_AVRO_INT: fl_avro_put_int(out, v->u.i); return 0;
    case FL_AVRO_LONG: fl_avro_put_long(out, v->u.l); return 0;
    case FL_AVRO_FLOAT: fl_avro_put_float(out, v->u.f); return 0;
    case FL_AVRO_DOUBLE: fl_avro_put_double(out, v->u.d); return 0;
    case FL_AVRO_BYTES:
    case FL_AVRO_STRING: fl_avro_put_bytes(out, v->u.bytes.p, v->u.bytes.len); return 0;
    case FL_AVRO_FIXED:
        if (v->u.bytes.len != s->size)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: %zu bytes for fixed %s of %zu",
                              v->u.bytes.len, s->name, s->size);
        fl_avro_put_fixed(out, v->u.bytes.p, s->size);
        return 0;
    case FL_AVRO_ENUM:
        if (v->u.i < 0 || (size_t)v->u.i >= s->n_symbols)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: enum %s has no symbol %d",
                              s->name, v->u.i);
        fl_avro_put_index(out, (uint32_t)v->u.i);
        return 0;
    case FL_AVRO_UNION:
        if (v->u.branch.index >= s->n_branches || !v->u.branch.value)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: union has no branch %u",
                              v->u.branch.index);
        fl_avro_put_index(out, v->u.branch.index);
        return encode(s->branches[v->u.branch.index], v->u.branch.value, out, err);
    case FL_AVRO_RECORD: return encode_record(s, v, out, err);
    case FL_AVRO_ARRAY:
    case FL_AVRO_MAP: return encode_list(s, v, out, err);
    }
    return mismatch("unknown type", err);
}

int fl_avro_value_encode(const fl_avro_schema_t *s, const fl_avro_value_t *v, fl_buf_t *out,
                         fl_error_t *err) {
    size_t start = out->len;
    int rc = encode(s, v, out, err);
    if (rc) out->len = start;
    return rc;
}

/* ---- decoding ---- */

typedef struct decoder {
    fl_avro_reader_t *r;
    fl_avro_arena_t *a;
    size_t values_left;
} decoder_t;

static int decode(decoder_t *d, const fl_avro_schema_t *s, fl_avro_value_t *v, fl_error_t *err);

static int no_memory(fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "avro: out of memory decoding a value");
}

static int decode_record(decoder_t *d, const fl_avro_schema_t *s, fl_avro_value_t *v,
                         fl_error_t *err) {
    v->u.list.items = arena_alloc_n(d->a, s->n_fields, sizeof(fl_avro_value_t));
    if (!v->u.list.items && s->n_fields) return no_memory(err);
    v->u.list.n = s->n_fields;
    for (size_t i = 0; i < s->n_fields; i++) {
        int rc = decode(d, s->fields[i].type, &v->u.list.items[i], err);
        if (rc) {
            fl_err_prefix(err, "%s: ", s->fields[i].name);
            return rc;
        }
    }
    return 0;
}

/* Room for `more` items after the n already in v (capacity *cap). */
static int list_grow(decoder_t *d, fl_avro_value_t *v, bool map, size_t more, size_t *cap,
                     fl_error_t *err) {
    size_t n = v->u.list.n;
    if (*cap - n >= more) return 0;
    size_t want = n + more > 2 * *cap ? n + more : 2 * *cap;
    fl_avro_value_t *items = arena_alloc_n(d->a, want, sizeof(*items));
    fl_avro_bytes_t *keys = map ? arena_alloc_n(d->a, want, sizeof(*keys)) : NULL;
    if (!items || (map && !keys)) return no_memory(err);
    if (n) memcpy(items, v->u.list.items, n * sizeof(*items));
    if (n && map) memcpy(keys, v->u.list.keys, n * sizeof(*keys));
    v->u.list.items = items;
    v->u.list.keys = keys;
    *cap = want;
    return 0;
}

/* A block's count against the bytes it can take up. */
static int check_count(decoder_t *d, const fl_avro_schema_t *s, int64_t count, int64_t bytes,
                       fl_error_t *err) {
    size_t least = s->type == FL_AVRO_MAP ? s->items->min_bytes + 1 : s->items->min_bytes;
    size_t room = bytes >= 0 ? (size_t)bytes : fl_avro_reader_left(d->r);
    if ((uint64_t)count > d->values_left)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: block of %lld items: over %u values",
                          (long long)count, FL_AVRO_VALUES_MAX);
    if (least && (uint64_t)count > room / least)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: block of %lld items of at least %zu bytes in %zu bytes",
                          (long long)count, least, room);
    return 0;
}

static int decode_block(decoder_t *d, const fl_avro_schema_t *s, fl_avro_value_t *v,
                        size_t count, fl_error_t *err) {
    for (size_t i = 0; i < count; i++) {
        size_t k = v->u.list.n;
        if (s->type == FL_AVRO_MAP) {
            fl_avro_bytes_t *key = &v->u.list.keys[k];
            if (fl_avro_read_bytes(d->r, &key->p, &key->len, err)) return FLUSS_ERR__CORRUPT;
        }
        int rc = decode(d, s->items, &v->u.list.items[k], err);
        if (rc) {
            fl_err_prefix(err, "[%zu]: ", k);
            return rc;
        }
        v->u.list.n++;
    }
    return 0;
}

static int decode_list(decoder_t *d, const fl_avro_schema_t *s, fl_avro_value_t *v,
                       fl_error_t *err) {
    size_t cap = 0;
    v->u.list.n = 0;
    for (;;) {
        int64_t count, bytes;
        if (fl_avro_read_block(d->r, &count, &bytes, err)) return FLUSS_ERR__CORRUPT;
        if (count == 0) return 0;
        int rc = check_count(d, s, count, bytes, err);
        if (!rc) rc = list_grow(d, v, s->type == FL_AVRO_MAP, (size_t)count, &cap, err);
        size_t start = d->r->pos;
        if (!rc) rc = decode_block(d, s, v, (size_t)count, err);
        if (rc) return rc;
        if (bytes >= 0 && d->r->pos - start != (size_t)bytes)
            return fl_err_set(err, FLUSS_ERR__CORRUPT,
                              "avro: block declared %lld bytes at byte %zu, its items took %zu",
                              (long long)bytes, start, d->r->pos - start);
    }
}

static int decode(decoder_t *d, const fl_avro_schema_t *s, fl_avro_value_t *v, fl_error_t *err) {
    if (d->values_left == 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: over %u values in one datum",
                          FL_AVRO_VALUES_MAX);
    d->values_left--;
    fl_avro_reader_t *r = d->r;
    v->type = s->type;
    switch (s->type) {
    case FL_AVRO_NULL: return 0;
    case FL_AVRO_BOOLEAN: return fl_avro_read_boolean(r, &v->u.boolean, err);
    case FL_AVRO_INT: return fl_avro_read_int(r, &v->u.i, err);
    case FL_AVRO_LONG: return fl_avro_read_long(r, &v->u.l, err);
    case FL_AVRO_FLOAT: return fl_avro_read_float(r, &v->u.f, err);
    case FL_AVRO_DOUBLE: return fl_avro_read_double(r, &v->u.d, err);
    case FL_AVRO_BYTES:
    case FL_AVRO_STRING: return fl_avro_read_bytes(r, &v->u.bytes.p, &v->u.bytes.len, err);
    case FL_AVRO_FIXED:
        v->u.bytes.len = s->size;
        return fl_avro_read_fixed(r, s->size, &v->u.bytes.p, err);
    case FL_AVRO_ENUM: {
        uint32_t index;
        if (fl_avro_read_enum(r, s->n_symbols, &index, err)) return FLUSS_ERR__CORRUPT;
        v->u.i = (int32_t)index;
        return 0;
    }
    case FL_AVRO_UNION: {
        if (fl_avro_read_branch(r, s->n_branches, &v->u.branch.index, err))
            return FLUSS_ERR__CORRUPT;
        v->u.branch.value = fl_avro_arena_try_alloc(d->a, sizeof(fl_avro_value_t));
        if (!v->u.branch.value) return no_memory(err);
        return decode(d, s->branches[v->u.branch.index], v->u.branch.value, err);
    }
    case FL_AVRO_RECORD: return decode_record(d, s, v, err);
    case FL_AVRO_ARRAY:
    case FL_AVRO_MAP: return decode_list(d, s, v, err);
    }
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: schema of unknown type %d", s->type);
}

int fl_avro_value_decode(const fl_avro_schema_t *s, fl_avro_reader_t *r, fl_avro_arena_t *a,
                         fl_avro_value_t *out, fl_error_t *err) {
    decoder_t d = {r, a, FL_AVRO_VALUES_MAX};
    memset(out, 0, sizeof(*out));
    return decode(&d, s, out, err);
}
