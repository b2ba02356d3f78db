/*
 * avro_sample.c — a test helper for the Avro interop test
 * (tests/lake/test_avro_interop.py), built as lake_avro_sample:
 *
 *   lake_avro_sample write PATH [RECORDS [BLOCK_RECORDS]]   writes an
 *       Iceberg v2 manifest-like file (lake_avro_file.h): manifest_entry
 *       with data_file r2, partition r102, int-keyed maps as arrays of
 *       k<id>_v<id> records with logicalType map, split_offsets with its
 *       element-id, every field with its field-id; the header metadata
 *       Iceberg writes (schema, partition-spec, partition-spec-id,
 *       format-version, content); RECORDS records (default 300) in blocks
 *       of BLOCK_RECORDS (default 64); values are the formulas of
 *       sample_record (the pytest computes the same ones)
 *   lake_avro_sample read PATH    prints what our reader reads, as JSON
 *       lines: {"meta": {key: value text}}, then {"schema": <schema JSON
 *       as we write it again>}, then one line per record: records as
 *       objects by field name, a union as its branch's value, an enum as
 *       its symbol, bytes and fixed as hex strings, a map as an object,
 *       floats as numbers (NaN and infinities as strings)
 *
 * Exit status 1 with the error on stderr if anything fails.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_avro_file.h"

/* ---- write ---- */

static fl_avro_schema_t *opt(fl_avro_type_t t) { return fl_avro_schema_optional(fl_avro_schema_new(t)); }

/* Iceberg's map<int, V>: an array of records k<kid>_v<vid>{key, value}. */
static fl_avro_schema_t *int_map(int32_t kid, int32_t vid, fl_avro_type_t value) {
    char name[64];
    snprintf(name, sizeof(name), "k%d_v%d", kid, vid);
    fl_avro_schema_t *kv = fl_avro_schema_record_new(name);
    fl_avro_schema_record_add(kv, "key", kid, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(kv, "value", vid, fl_avro_schema_new(value));
    return fl_avro_schema_optional(
        fl_avro_schema_set_logical(fl_avro_schema_array_new(kv, FL_AVRO_NO_ID), "map"));
}

enum {
    DF_CONTENT, DF_PATH, DF_FORMAT, DF_PARTITION, DF_COUNT, DF_SIZE, DF_COLUMN_SIZES,
    DF_VALUE_COUNTS, DF_NULL_COUNTS, DF_NAN_COUNTS, DF_LOWER, DF_UPPER, DF_SPLITS, DF_SORT, DF_N
};

static fl_avro_schema_t *manifest_schema(void) {
    fl_avro_schema_t *part = fl_avro_schema_record_new("r102");
    fl_avro_schema_record_add(part, "p_bucket", 1000, opt(FL_AVRO_INT));
    fl_avro_schema_record_add(part, "p_name", 1001, opt(FL_AVRO_STRING));
    fl_avro_schema_t *df = fl_avro_schema_record_new("r2");
    fl_avro_schema_record_add(df, "content", 134, fl_avro_schema_new(FL_AVRO_INT))->doc =
        strdup("Contents of the file: 0=data, 1=position deletes, 2=equality deletes");
    fl_avro_schema_record_add(df, "file_path", 100, fl_avro_schema_new(FL_AVRO_STRING))->doc =
        strdup("Location URI with FS scheme");
    fl_avro_schema_record_add(df, "file_format", 101, fl_avro_schema_new(FL_AVRO_STRING));
    fl_avro_schema_record_add(df, "partition", 102, part);
    fl_avro_schema_record_add(df, "record_count", 103, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "file_size_in_bytes", 104, fl_avro_schema_new(FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "column_sizes", 108, int_map(117, 118, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "value_counts", 109, int_map(119, 120, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "null_value_counts", 110, int_map(121, 122, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "nan_value_counts", 137, int_map(138, 139, FL_AVRO_LONG));
    fl_avro_schema_record_add(df, "lower_bounds", 125, int_map(126, 127, FL_AVRO_BYTES));
    fl_avro_schema_record_add(df, "upper_bounds", 128, int_map(129, 130, FL_AVRO_BYTES));
    fl_avro_schema_record_add(
        df, "split_offsets", 132,
        fl_avro_schema_optional(fl_avro_schema_array_new(fl_avro_schema_new(FL_AVRO_LONG), 133)));
    fl_avro_schema_record_add(df, "sort_order_id", 140, opt(FL_AVRO_INT));
    fl_avro_schema_t *e = fl_avro_schema_record_new("manifest_entry");
    fl_avro_schema_record_add(e, "status", 0, fl_avro_schema_new(FL_AVRO_INT));
    fl_avro_schema_record_add(e, "snapshot_id", 1, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "sequence_number", 3, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "file_sequence_number", 4, opt(FL_AVRO_LONG));
    fl_avro_schema_record_add(e, "data_file", 2, df);
    return e;
}

static void set_opt_long(fl_avro_value_t *v, fl_avro_arena_t *a, bool null, int64_t x) {
    if (null)
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
    else
        fl_avro_value_set_long(fl_avro_value_set_branch(v, a, 1), x);
}

/* n entries key c+1 -> long base + c, or null when n < 0. */
static void set_long_map(fl_avro_value_t *v, fl_avro_arena_t *a, int n, int64_t base) {
    if (n < 0) {
        fl_avro_value_set_null(fl_avro_value_set_branch(v, a, 0));
        return;
    }
    fl_avro_value_t *items = fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a, (size_t)n);
    for (int c = 0; c < n; c++) {
        fl_avro_value_t *kv = fl_avro_value_set_record(&items[c], a, 2);
        fl_avro_value_set_int(&kv[0], c + 1);
        fl_avro_value_set_long(&kv[1], base + c);
    }
}

typedef struct scratch {
    char path[96];
    char name[32];
    uint8_t lower[2][8], upper[2][8];
} scratch_t;

/* key 1 -> 4-byte LE int, key 2 -> "a<k>" (lower) / "z<k>" (upper) */
static void set_bounds(fl_avro_value_t *v, fl_avro_arena_t *a, uint8_t buf[2][8], int32_t x,
                       char letter, int k) {
    fl_avro_value_t *items = fl_avro_value_set_array(fl_avro_value_set_branch(v, a, 1), a, 2);
    for (int i = 0; i < 4; i++) buf[0][i] = (uint8_t)((uint32_t)x >> (8 * i));
    int n = snprintf((char *)buf[1], 8, "%c%d", letter, k % 1000);
    fl_avro_value_t *kv = fl_avro_value_set_record(&items[0], a, 2);
    fl_avro_value_set_int(&kv[0], 1);
    fl_avro_value_set_bytes(&kv[1], buf[0], 4);
    kv = fl_avro_value_set_record(&items[1], a, 2);
    fl_avro_value_set_int(&kv[0], 2);
    fl_avro_value_set_bytes(&kv[1], buf[1], (size_t)n);
}

static void sample_data_file(fl_avro_value_t *v, fl_avro_arena_t *a, int k, scratch_t *x) {
    fl_avro_value_t *df = fl_avro_value_set_record(v, a, DF_N);
    fl_avro_value_set_int(&df[DF_CONTENT], 0);
    snprintf(x->path, sizeof(x->path), "file:///wh/db/t/data/__bucket=%d/%05d.parquet", k % 4, k);
    fl_avro_value_set_string(&df[DF_PATH], x->path);
    fl_avro_value_set_string(&df[DF_FORMAT], "PARQUET");
    fl_avro_value_t *p = fl_avro_value_set_record(&df[DF_PARTITION], a, 2);
    if (k % 5 == 4)
        fl_avro_value_set_null(fl_avro_value_set_branch(&p[0], a, 0));
    else
        fl_avro_value_set_int(fl_avro_value_set_branch(&p[0], a, 1), k % 4);
    if (k % 7 == 0) {
        fl_avro_value_set_null(fl_avro_value_set_branch(&p[1], a, 0));
    } else {
        snprintf(x->name, sizeof(x->name), "\xc3\xa9t\xc3\xa9-%d", k);
        fl_avro_value_set_string(fl_avro_value_set_branch(&p[1], a, 1), x->name);
    }
    fl_avro_value_set_long(&df[DF_COUNT], 100LL * k + 1);
    fl_avro_value_set_long(&df[DF_SIZE], 4096 + 17LL * k);
    set_long_map(&df[DF_COLUMN_SIZES], a, 3, 10LL * k);
    set_long_map(&df[DF_VALUE_COUNTS], a, 3, 100LL * k + 1);
    set_long_map(&df[DF_NULL_COUNTS], a, k % 4, 0);
    set_long_map(&df[DF_NAN_COUNTS], a, -1, 0);
    set_bounds(&df[DF_LOWER], a, x->lower, -k, 'a', k);
    set_bounds(&df[DF_UPPER], a, x->upper, k + 100000, 'z', k);
    fl_avro_value_t *splits =
        fl_avro_value_set_array(fl_avro_value_set_branch(&df[DF_SPLITS], a, 1), a, k % 2 ? 2 : 1);
    fl_avro_value_set_long(&splits[0], 4);
    if (k % 2) fl_avro_value_set_long(&splits[1], 4 + 1000LL * k);
    if (k % 2)
        fl_avro_value_set_int(fl_avro_value_set_branch(&df[DF_SORT], a, 1), 0);
    else
        fl_avro_value_set_null(fl_avro_value_set_branch(&df[DF_SORT], a, 0));
}

static void sample_record(fl_avro_value_t *v, fl_avro_arena_t *a, int k, scratch_t *x) {
    fl_avro_value_t *f = fl_avro_value_set_record(v, a, 5);
    fl_avro_value_set_int(&f[0], 1);
    set_opt_long(&f[1], a, k % 3 == 0, 1000 + k);
    set_opt_long(&f[2], a, true, 0);
    set_opt_long(&f[3], a, k % 2, k);
    sample_data_file(&f[4], a, k, x);
}

static const char ICEBERG_SCHEMA[] =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"name\",\"required\":"
    "false,\"type\":\"string\"},{\"id\":2,\"name\":\"__bucket\",\"required\":true,\"type\":"
    "\"int\"}]}";
static const char PARTITION_SPEC[] =
    "[{\"name\":\"p_bucket\",\"transform\":\"identity\",\"source-id\":2,\"field-id\":1000},"
    "{\"name\":\"p_name\",\"transform\":\"identity\",\"source-id\":1,\"field-id\":1001}]";

static int write_sample(const char *path, int records, int block_records) {
    fl_avro_schema_t *s = manifest_schema();
    fl_avro_file_options_t o;
    fl_avro_file_options_init(&o);
    o.block_records_max = (size_t)block_records;
    const fl_avro_meta_t meta[] = {
        fl_avro_meta_str("schema", ICEBERG_SCHEMA),
        fl_avro_meta_str("schema-id", "0"),
        fl_avro_meta_str("partition-spec", PARTITION_SPEC),
        fl_avro_meta_str("partition-spec-id", "0"),
        fl_avro_meta_str("format-version", "2"),
        fl_avro_meta_str("content", "data"),
    };
    fl_avro_file_writer_t *w;
    fl_error_t err;
    int rc = fl_avro_file_writer_open(path, s, meta, sizeof(meta) / sizeof(meta[0]), &o, &w, &err);
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    for (int k = 0; !rc && k < records; k++) {
        scratch_t x;
        fl_avro_value_t v;
        sample_record(&v, &a, k, &x);
        rc = fl_avro_file_writer_append(w, &v, &err);
        fl_avro_arena_reset(&a);
    }
    if (!rc) rc = fl_avro_file_writer_finish(w, &err);
    if (rc) fprintf(stderr, "lake_avro_sample: %s\n", err.msg);
    fl_avro_file_writer_destroy(w);
    fl_avro_schema_destroy(s);
    return rc ? 1 : 0;
}

/* ---- read ---- */

static json_t *hex(const uint8_t *p, size_t n) {
    char *s = malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) snprintf(s + 2 * i, 3, "%02x", p[i]);
    s[2 * n] = 0;
    json_t *j = json_string(s);
    free(s);
    return j;
}

/* Text as a JSON string; bytes that are not UTF-8 as {"hex": ...}. */
static json_t *text(const uint8_t *p, size_t n) {
    json_t *j = json_stringn((const char *)p, n);
    if (j) return j;
    j = json_object();
    json_object_set_new(j, "hex", hex(p, n));
    return j;
}

static json_t *real(double d) {
    if (isnan(d)) return json_string("NaN");
    if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

static json_t *to_json(const fl_avro_schema_t *s, const fl_avro_value_t *v) {
    switch (v->type) {
    case FL_AVRO_NULL: return json_null();
    case FL_AVRO_BOOLEAN: return json_boolean(v->u.boolean);
    case FL_AVRO_INT: return json_integer(v->u.i);
    case FL_AVRO_LONG: return json_integer(v->u.l);
    case FL_AVRO_FLOAT: return real(v->u.f);
    case FL_AVRO_DOUBLE: return real(v->u.d);
    case FL_AVRO_STRING: return text(v->u.bytes.p, v->u.bytes.len);
    case FL_AVRO_BYTES:
    case FL_AVRO_FIXED: return hex(v->u.bytes.p, v->u.bytes.len);
    case FL_AVRO_ENUM: return json_string(s->symbols[v->u.i]);
    case FL_AVRO_UNION: return to_json(s->branches[v->u.branch.index], v->u.branch.value);
    case FL_AVRO_RECORD: {
        json_t *o = json_object();
        for (size_t i = 0; i < v->u.list.n; i++)
            json_object_set_new(o, s->fields[i].name, to_json(s->fields[i].type, &v->u.list.items[i]));
        return o;
    }
    case FL_AVRO_ARRAY: {
        json_t *a = json_array();
        for (size_t i = 0; i < v->u.list.n; i++)
            json_array_append_new(a, to_json(s->items, &v->u.list.items[i]));
        return a;
    }
    case FL_AVRO_MAP: {
        json_t *o = json_object();
        for (size_t i = 0; i < v->u.list.n; i++)
            json_object_setn_new(o, (const char *)v->u.list.keys[i].p, v->u.list.keys[i].len,
                                 to_json(s->items, &v->u.list.items[i]));
        return o;
    }
    }
    return json_null();
}

static void print_line(json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    puts(s);
    free(s);
    json_decref(j);
}

static int read_sample(const char *path) {
    fl_avro_file_reader_t *r;
    fl_error_t err;
    if (fl_avro_file_reader_open(path, &r, &err)) {
        fprintf(stderr, "lake_avro_sample: %s\n", err.msg);
        return 1;
    }
    json_t *meta = json_object();
    for (size_t i = 0; i < fl_avro_file_reader_meta_count(r); i++) {
        const fl_avro_meta_t *m = fl_avro_file_reader_meta_at(r, i);
        json_object_set_new(meta, m->key, text(m->value, m->len));
    }
    json_t *line = json_object();
    json_object_set_new(line, "meta", meta);
    print_line(line);
    const fl_avro_schema_t *s = fl_avro_file_reader_schema(r);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_avro_schema_write_json(s, &b);
    line = json_object();
    json_object_set_new(line, "schema", json_loadb((const char *)b.data, b.len, JSON_DECODE_ANY, NULL));
    print_line(line);
    fl_buf_free(&b);
    int rc;
    for (;;) {
        const fl_avro_value_t *v;
        rc = fl_avro_file_reader_next(r, &v, &err);
        if (rc || !v) break;
        print_line(to_json(s, v));
    }
    if (rc) fprintf(stderr, "lake_avro_sample: %s\n", err.msg);
    fl_avro_file_reader_destroy(r);
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "write") == 0)
        return write_sample(argv[2], argc > 3 ? atoi(argv[3]) : 300, argc > 4 ? atoi(argv[4]) : 64);
    if (argc == 3 && strcmp(argv[1], "read") == 0) return read_sample(argv[2]);
    fprintf(stderr, "usage: lake_avro_sample write PATH [RECORDS [BLOCK_RECORDS]] | read PATH\n");
    return 2;
}
