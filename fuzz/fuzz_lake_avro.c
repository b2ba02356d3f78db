/*
 * fuzz_lake_avro.c — an Avro object container file (an Iceberg manifest
 * or manifest list: bytes from a file, untrusted) through
 * fl_avro_file_reader_open_bytes and every record of it; then the same
 * bytes as one datum of a fixed schema of every type through the raw
 * value decoder. Invariants checked: a header that parses has a schema
 * whose JSON parses again to the same JSON; each record read encodes
 * again under the file's schema; every byte view lies inside the input
 * (ASan sees each one read); a datum that decodes re-encodes to bytes
 * that decode and re-encode to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lake_avro_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECORDS_MAX 4096

static size_t touch(const fl_avro_value_t *v) {
    size_t h = (size_t)v->type;
    switch (v->type) {
    case FL_AVRO_BYTES:
    case FL_AVRO_STRING:
    case FL_AVRO_FIXED:
        for (size_t i = 0; i < v->u.bytes.len; i++) h += v->u.bytes.p[i];
        break;
    case FL_AVRO_RECORD:
    case FL_AVRO_ARRAY:
    case FL_AVRO_MAP:
        for (size_t i = 0; i < v->u.list.n; i++) {
            h += touch(&v->u.list.items[i]);
            if (v->u.list.keys)
                for (size_t k = 0; k < v->u.list.keys[i].len; k++) h += v->u.list.keys[i].p[k];
        }
        break;
    case FL_AVRO_UNION: h += v->u.branch.index + touch(v->u.branch.value); break;
    default: break;
    }
    return h;
}

static void schema_json_stable(const fl_avro_schema_t *s) {
    fl_buf_t a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    fl_avro_schema_write_json(s, &a);
    fl_avro_schema_t *again;
    fl_error_t err;
    FUZZ_CHECK(fl_avro_schema_parse((const char *)a.data, a.len, &again, &err) == 0);
    fl_avro_schema_write_json(again, &b);
    FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
    fl_avro_schema_destroy(again);
    fl_buf_free(&a);
    fl_buf_free(&b);
}

static void fuzz_file(const uint8_t *data, size_t size) {
    fl_avro_file_reader_t *r;
    fl_error_t err;
    if (fl_avro_file_reader_open_bytes(data, size, &r, &err)) return;
    const fl_avro_schema_t *s = fl_avro_file_reader_schema(r);
    schema_json_stable(s);
    size_t h = 0;
    for (size_t i = 0; i < fl_avro_file_reader_meta_count(r); i++) {
        const fl_avro_meta_t *m = fl_avro_file_reader_meta_at(r, i);
        FUZZ_CHECK(m->value >= data && m->value + m->len <= data + size);
        FUZZ_CHECK(fl_avro_file_reader_meta(r, m->key) == m);
    }
    fl_buf_t out;
    fl_buf_init(&out);
    for (int n = 0; n < RECORDS_MAX; n++) {
        const fl_avro_value_t *v;
        if (fl_avro_file_reader_next(r, &v, &err) || !v) break;
        h += touch(v);
        fl_buf_reset(&out);
        FUZZ_CHECK(fl_avro_value_encode(s, v, &out, &err) == 0);
    }
    (void)h;
    fl_buf_free(&out);
    fl_avro_file_reader_destroy(r);
}

/* record{null, boolean, int, long, float, double, bytes, string, enum,
 * fixed(3), array<long>, map<["null","string"]>, array<record{int, long}>} */
static fl_avro_schema_t *datum_schema(void) {
    const char *const syms[] = {"A", "B", "C"};
    fl_avro_schema_t *kv = fl_avro_schema_record_new("kv");
    fl_avro_schema_record_add(kv, "key", 1, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(kv, "value", 2, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_t *s = fl_avro_schema_record_new("all");
    fl_avro_schema_record_add(s, "n", 3, fl_avro_schema_new(FL_AVRO_NULL));
    fl_avro_schema_record_add(s, "b", 4, fl_avro_schema_new(FL_AVRO_BOOLEAN));
    fl_avro_schema_record_add(s, "i", 5, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(s, "l", 6, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_record_add(s, "f", 7, fl_avro_schema_new(FL_AVRO_FLOAT));
    fl_avro_schema_record_add(s, "d", 8, fl_avro_schema_new(FL_AVRO_DOUBLE));
    fl_avro_schema_record_add(s, "y", 9, fl_avro_schema_new(FL_AVRO_BYTES));
    fl_avro_schema_record_add(s, "s", 10, fl_avro_schema_new(FL_AVRO_STRING));
    fl_avro_schema_record_add(s, "e", 11, fl_avro_schema_enum_new("E", syms, 3));
    fl_avro_schema_record_add(s, "x", 12, fl_avro_schema_fixed_new("F", 3));
    fl_avro_schema_record_add(s, "a", 13,
                              fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_LONG), 14));
    fl_avro_schema_record_add(
        s, "m", 15,
        fl_avro_schema_map_new(fl_avro_schema_optional(fl_avro_schema_new(FL_AVRO_STRING)), 16, 17));
    fl_avro_schema_record_add(s, "kv", 18,
                              fl_avro_schema_set_logical(fl_avro_schema_array_new(kv, FL_AVRO_NO_ID),
                                                         "map"));
    return s;
}

static void fuzz_datum(const uint8_t *data, size_t size) {
    fl_avro_schema_t *s = datum_schema();
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_avro_reader_t r;
    fl_avro_reader_init(&r, data, size);
    fl_avro_value_t v;
    fl_error_t err;
    if (fl_avro_value_decode(s, &r, &a, &v, &err) == 0) {
        FUZZ_CHECK(r.pos <= size);
        (void)touch(&v);
        fl_buf_t once, twice;
        fl_buf_init(&once);
        fl_buf_init(&twice);
        FUZZ_CHECK(fl_avro_value_encode(s, &v, &once, &err) == 0);
        fl_avro_reader_init(&r, once.data, once.len);
        FUZZ_CHECK(fl_avro_value_decode(s, &r, &a, &v, &err) == 0);
        FUZZ_CHECK(r.pos == once.len);
        FUZZ_CHECK(fl_avro_value_encode(s, &v, &twice, &err) == 0);
        FUZZ_CHECK(once.len == twice.len && memcmp(once.data, twice.data, once.len) == 0);
        fl_buf_free(&once);
        fl_buf_free(&twice);
    }
    fl_avro_arena_reset(&a);
    fl_avro_schema_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_file(data, size);
    fuzz_datum(data, size);
    return 0;
}
