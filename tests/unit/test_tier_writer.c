/*
 * test_tier_writer.c — the tiering writer (src/tier): log batches of every
 * log format and primitive type, built with the record builders, tiered
 * into Parquet files that our reader reads back value by value (system
 * columns too); the manifest description checked against the values
 * (counts, Appendix D bounds with truncation, column sizes, split
 * offsets); schema evolution, rolling, the change hook, refusals, abort;
 * the column path against the row path (options.row_path: the same
 * batches both ways give byte-identical files, values and stats); the
 * metrics' truncation and float rules on their own.
 */
#define _GNU_SOURCE /* nftw (test_tmpdir.h) */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lake_iceberg_manifest.h"
#include "lake_parquet_reader.h"
#include "record_batch.h"
#include "record_builder.h"
#include "record_row_builder.h"
#include "test_tmpdir.h"
#include "tier_metrics.h"
#include "tier_writer.h"
#include "types_row.h"
#include "types_schema.h"

/* ---- the sample table: every primitive type ---- */

enum { C_B, C_TI, C_SI, C_I, C_L, C_F, C_D, C_DAY, C_T, C_TS, C_LTZ, C_DEC9, C_DEC18, C_DEC38,
       C_C, C_S, C_BIN, C_BY, NCOL };

static const char *const NAMES[NCOL] = {"b", "ti", "si", "i", "l", "f", "d", "day", "t",
                                        "ts", "ltz", "dec9", "dec18", "dec38", "c", "s", "bin",
                                        "by"};
static const char *const TYPES[NCOL] = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INT NOT NULL", "BIGINT", "FLOAT", "DOUBLE", "DATE",
    "TIME(3)", "TIMESTAMP(6)", "TIMESTAMP_LTZ(9)", "DECIMAL(9, 2)", "DECIMAL(18, 4)",
    "DECIMAL(38, 6)", "CHAR(5)",
    "STRING", "BINARY(3)", "BYTES"};

static void schema_of_types(fl_schema_t *s, const char *const *names, const char *const *types,
                            size_t n) {
    memset(s, 0, sizeof(*s));
    for (size_t k = 0; k < n; k++) {
        const char *p = types[k];
        fl_datatype_t *t;
        fl_error_t err;
        if (fl_datatype_parse(&p, &t, &err)) fail_msg("%s: %s", types[k], err.msg);
        fl_schema_add_column(s, names[k], t, NULL);
    }
    fl_schema_assign_ids(s);
}

/* 10^38 - 1: the largest unscaled DECIMAL(38) */
#define DEC38_MAX ((__int128)10000000000000000000ULL * 10000000000000000000ULL - 1)

static void sample_schema(fl_schema_t *s) { schema_of_types(s, NAMES, TYPES, NCOL); }

static bool is_null(int r, int k) { return k != C_I && (r + k) % 5 == 0; }

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Row r's cells: negative dates and timestamps, NaN, both zeros, long
 * and multi-byte strings, empty bytes. */
static void sample_row(int r, fl_row_t *row) {
    fl_row_reset(row, NCOL);
    char s[64];
    for (int k = 0; k < NCOL; k++) {
        if (is_null(r, k)) continue;
        fl_cell_t *c = &row->cells[k];
        c->is_null = false;
        switch (k) {
        case C_B: c->i = r % 3 == 0; break;
        case C_TI: c->i = r % 256 - 128; break;
        case C_SI: c->i = r * 100 - 3000; break;
        case C_I: c->i = r * 7 - 100; break;
        case C_L: c->i = (int64_t)r * 1000000007LL - (1LL << 40); break;
        case C_F: c->d = r % 11 == 4 ? NAN : r == 21 ? -0.0 : (float)(r / 4.0 - 5.0); break;
        case C_D: c->d = r % 13 == 6 ? NAN : r / 8.0 - 3.5; break;
        case C_DAY: c->i = r - 30; break;
        case C_T: c->i = ((int64_t)r * 3600007) % 86400000; break;
        case C_TS: c->i = -2000 + r * 1337, c->nanos = (r * 123457) % 1000000 / 1000 * 1000; break;
        case C_LTZ: c->i = -1 - r * 1000, c->nanos = (r * 987654) % 1000000; break;
        case C_DEC9: c->dec = r * 13 - 500; break;
        case C_DEC18: c->dec = (__int128)r * 123456789LL - 1000000000000LL; break;
        case C_DEC38: /* past 64 bits both ways, and the extremes of 38 digits */
            c->dec = r % 17 == 1   ? -DEC38_MAX
                     : r % 17 == 2 ? DEC38_MAX
                                   : ((__int128)(r % 2 ? -r : r) * 1000000000000000000LL) *
                                             1000000000000LL +
                                         r;
            break;
        case C_C:
            snprintf(s, sizeof(s), "c%04d", r % 10000);
            fl_row_set_bytes(row, k, s, 5);
            break;
        case C_S:
            if (r % 7 == 3) snprintf(s, sizeof(s), "zz-a-very-long-string-%d", r);
            else if (r % 7 == 5) snprintf(s, sizeof(s), "r\xc3\xa9t\xc3\xa9-%d", r);
            else snprintf(s, sizeof(s), "row-%d", r);
            fl_row_set_bytes(row, k, s, strlen(s));
            break;
        case C_BIN: {
            /* trailing zeros, which an IndexedRow's padding hides */
            uint8_t b[3] = {(uint8_t)r, (uint8_t)(r % 3 ? 0 : 0xFF), (uint8_t)(r % 2 ? 0 : r)};
            fl_row_set_bytes(row, k, b, 3);
            break;
        }
        case C_BY: {
            uint8_t b[3] = {(uint8_t)r, 0xFF, 0};
            fl_row_set_bytes(row, k, b, (size_t)(r % 4));
            break;
        }
        }
    }
}

/* ---- batches ---- */

static void types_of(const fl_schema_t *s, const fl_datatype_t **out) {
    for (size_t k = 0; k < s->column_count; k++) out[k] = s->columns[k].type;
}

/* Sets the fields the leader assigns (outside the CRC). */
static void place(fl_buf_t *out, size_t at, int64_t base, int64_t ts) {
    fl_batch_set_base_offset(out->data + at, base);
    fl_batch_set_commit_timestamp(out->data + at, ts);
}

typedef void (*row_fn)(int r, fl_row_t *row);

/* Rows [r0, r0 + n) of fn as one batch of format fmt under schema s
 * (schema id sid), change types from cts (NULL: append-only), appended to
 * out at base offset `base`. */
static void build_batch(fl_buf_t *out, fl_log_format_t fmt, const fl_schema_t *s, int16_t sid,
                        row_fn fn, int r0, int n, const fl_change_type_t *cts, int64_t base,
                        int64_t ts) {
    fl_row_t row;
    fl_row_init(&row, s->column_count);
    size_t at = out->len;
    fl_error_t err;
    if (fmt == FL_LOG_FORMAT_ARROW) {
        fl_record_builder_t b;
        fl_record_builder_options_t o = {.schema_id = sid, .codec = FL_ARROW_CODEC_NONE};
        fl_record_builder_init(&b, s, &o);
        for (int r = r0; r < r0 + n; r++) {
            fn(r, &row);
            if (cts) fl_record_builder_append_change(&b, &row, cts[r - r0]);
            else fl_record_builder_append(&b, &row);
        }
        assert_int_equal(fl_record_builder_finish(&b, -1, -1, out, &err), 0);
        fl_record_builder_free(&b);
    } else {
        const fl_datatype_t *types[64];
        types_of(s, types);
        fl_row_builder_t b;
        fl_row_builder_init(&b, fmt == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED,
                            types, s->column_count, sid, cts != NULL);
        for (int r = r0; r < r0 + n; r++) {
            fn(r, &row);
            if (fl_row_builder_append(&b, &row, cts ? cts[r - r0] : FL_CHANGE_APPEND_ONLY, &err))
                fail_msg("%s", err.msg);
        }
        fl_row_builder_finish(&b, -1, -1, out);
        fl_row_builder_free(&b);
    }
    place(out, at, base, ts);
    fl_row_free(&row);
}

/* The batch at out[at..] rewritten as magic 1 or 2 with stats_len bytes of
 * statistics (the layouts of Fluss main; the writer skips them). */
static void remagic(fl_buf_t *out, size_t at, int8_t magic, size_t stats_len) {
    fl_batch_view_t v;
    fl_error_t err;
    assert_int_equal(fl_batch_parse(out->data + at, out->len - at, &v, &err), 0);
    size_t records = v.size - v.records_start, hs = fl_batch_header_size(magic);
    size_t len = hs + stats_len + records;
    uint8_t *p = malloc(len);
    memset(p + hs, 0xA5, stats_len);
    memcpy(p + hs + stats_len, v.data + v.records_start, records);
    fl_batch_header_t h = {
        .magic = magic, .base_offset = v.base_offset, .commit_timestamp = v.commit_timestamp,
        .leader_epoch = 7, .schema_id = v.schema_id, .attributes = v.attributes,
        .last_offset_delta = v.last_offset_delta, .writer_id = -1, .batch_sequence = -1,
        .record_count = v.record_count, .stats_size = (uint32_t)stats_len};
    fl_batch_write_header(p, len, &h);
    out->len = at;
    fl_buf_append(out, p, len);
    free(p);
}

/* Feeds every batch of buf to the writer. */
static int add_all(fl_tier_writer_t *w, const fl_buf_t *buf, fl_error_t *err) {
    size_t pos = 0;
    fl_batch_view_t v;
    while (pos < buf->len) {
        size_t start = pos;
        assert_int_equal(fl_batch_parse_next(buf->data, buf->len, &pos, &v, err), 0);
        int rc = fl_tier_writer_add_batch(w, buf->data + start, pos - start, err);
        if (rc) return rc;
    }
    return 0;
}

static void options(fl_tier_writer_options_t *o, const char *dir, const fl_schema_t *s,
                    fl_log_format_t fmt) {
    fl_tier_writer_options_init(o);
    o->dir = dir;
    o->prefix = "data";
    o->bucket = 3;
    o->schema = s;
    o->schema_id = 1;
    o->log_format = fmt;
}

/* ---- expected values, as the writer should convert them ---- */

/* Row r's value of column k in Parquet units: ints in i, floats in d,
 * bytes in p/len. */
typedef struct want {
    bool null;
    int64_t i;
    __int128 dec; /* DECIMAL(38) */
    double d;
    uint8_t p[64];
    size_t len;
} want_t;

static want_t want_of(int r, int k) {
    fl_row_t row;
    fl_row_init(&row, NCOL);
    sample_row(r, &row);
    want_t w;
    memset(&w, 0, sizeof(w));
    const fl_cell_t *c = &row.cells[k];
    w.null = c->is_null;
    switch (k) {
    case C_F:
    case C_D: w.d = c->d; break;
    case C_T: w.i = c->i * 1000; break;
    case C_TS:
    case C_LTZ: w.i = floor_div(c->i * 1000000 + c->nanos, 1000); break;
    case C_DEC9:
    case C_DEC18: w.i = (int64_t)c->dec; break;
    case C_DEC38: w.dec = c->dec; break;
    case C_C:
    case C_S:
    case C_BIN:
    case C_BY:
        w.len = c->len;
        if (c->len) memcpy(w.p, fl_row_cell_bytes(&row, c), c->len);
        break;
    default: w.i = c->i;
    }
    fl_row_free(&row);
    return w;
}

/* Checks value i of a read column against w. */
static void check_value(const fl_pq_values_t *v, size_t i, const want_t *w, const char *name,
                        int r) {
    if (w->null) {
        if (v->valid[i]) fail_msg("%s row %d: want NULL", name, r);
        return;
    }
    if (!v->valid[i]) fail_msg("%s row %d: unexpected NULL", name, r);
    switch (v->type) {
    case FL_PQ_BOOLEAN: assert_int_equal(((uint8_t *)v->values)[i], w->i); break;
    case FL_PQ_INT32: assert_int_equal(((int32_t *)v->values)[i], w->i); break;
    case FL_PQ_INT64:
        if (((int64_t *)v->values)[i] != w->i)
            fail_msg("%s row %d: %lld, want %lld", name, r, (long long)((int64_t *)v->values)[i],
                     (long long)w->i);
        break;
    case FL_PQ_FLOAT: {
        float got = ((float *)v->values)[i], want = (float)w->d;
        if (memcmp(&got, &want, 4)) fail_msg("%s row %d: %g vs %g", name, r, got, want);
        break;
    }
    case FL_PQ_DOUBLE:
        if (memcmp(&((double *)v->values)[i], &w->d, 8)) fail_msg("%s row %d", name, r);
        break;
    case FL_PQ_FLBA:
        assert_int_equal(v->width, 16);
        if (fl_tier_decimal_of_be((uint8_t *)v->values + i * v->width, v->width) != w->dec)
            fail_msg("%s row %d: decimal differs", name, r);
        break;
    default: {
        size_t n = (size_t)(v->offsets[i + 1] - v->offsets[i]);
        if (n != w->len || (n && memcmp(v->bytes + v->offsets[i], w->p, n)))
            fail_msg("%s row %d: bytes differ", name, r);
    }
    }
}

/* Reads file f back: rows are sample rows rows[0..), their offsets and
 * commit timestamps given; every value and system column compared. */
static void check_file(const fl_tier_file_t *f, const int *rows, const int64_t *offsets,
                       const int64_t *ts_ms, int32_t bucket) {
    fl_pq_reader_t *rd;
    fl_error_t err;
    if (fl_pq_reader_open_file(f->path, 1u << 30, &rd, &err)) fail_msg("%s", err.msg);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(rd);
    assert_int_equal(m->num_rows, f->file.record_count);
    assert_int_equal(fl_pq_reader_columns(rd), NCOL + 3);
    size_t base = 0;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        for (size_t k = 0; k < NCOL + 3; k++) {
            fl_pq_values_t v;
            if (fl_pq_reader_read_column(rd, g, k, &v, &err)) fail_msg("%s", err.msg);
            for (size_t i = 0; i < v.rows; i++) {
                size_t at = base + i;
                want_t w;
                memset(&w, 0, sizeof(w));
                if (k < NCOL) w = want_of(rows[at], (int)k);
                else if (k == NCOL) w.i = bucket;
                else if (k == NCOL + 1) w.i = offsets[at];
                else w.i = ts_ms[at] * 1000;
                check_value(&v, i, &w, k < NCOL ? NAMES[k] : "system", rows[at]);
            }
            if (k == NCOL + 2) base += v.rows;
            fl_pq_values_free(&v);
        }
    }
    assert_int_equal(base, f->file.record_count);
    fl_pq_reader_destroy(rd);
}

/* ---- expected stats ---- */

static const fl_ice_column_stats_t *stats_of(const fl_ice_data_file_t *f, int32_t id) {
    for (size_t i = 0; i < f->n_columns; i++)
        if (f->columns[i].field_id == id) return &f->columns[i];
    fail_msg("no stats for field %d", id);
    return NULL;
}

static int64_t le(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80)) v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}

static int64_t be(const uint8_t *p, size_t n) {
    int64_t v = (p[0] & 0x80) ? -1 : 0;
    for (size_t i = 0; i < n; i++) v = (int64_t)((uint64_t)v << 8 | p[i]);
    return v;
}

static int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

/* Checks column k's counts and bounds against the rows of the file. */
static void check_stats_column(const fl_ice_data_file_t *f, const int *rows, size_t k) {
    const fl_ice_column_stats_t *s = stats_of(f, (int32_t)k + 1);
    int64_t nulls = 0, nans = 0;
    bool any = false;
    want_t lo, hi;
    memset(&lo, 0, sizeof(lo));
    memset(&hi, 0, sizeof(hi));
    for (int64_t i = 0; i < f->record_count; i++) {
        want_t w = want_of(rows[i], (int)k);
        if (w.null) {
            nulls++;
            continue;
        }
        if ((k == C_F || k == C_D) && isnan(w.d)) {
            nans++;
            continue;
        }
        bool lt, gt;
        if (k == C_F || k == C_D) lt = w.d < lo.d, gt = w.d > hi.d;
        else if (k >= C_C) lt = cmp_bytes(w.p, w.len, lo.p, lo.len) < 0,
             gt = cmp_bytes(w.p, w.len, hi.p, hi.len) > 0;
        else if (k == C_DEC38) lt = w.dec < lo.dec, gt = w.dec > hi.dec;
        else lt = w.i < lo.i, gt = w.i > hi.i;
        if (!any || lt) lo = w;
        if (!any || gt) hi = w;
        any = true;
    }
    assert_int_equal(s->value_count, f->record_count);
    assert_int_equal(s->null_count, nulls);
    assert_int_equal(s->nan_count, (k == C_F || k == C_D) ? nans : FL_ICE_NONE);
    assert_true(s->column_size > 0);
    assert_true(any);
    switch (k) {
    case C_F: {
        float a, b;
        memcpy(&a, s->lower.p, 4);
        memcpy(&b, s->upper.p, 4);
        assert_true(a == (float)lo.d && b == (float)hi.d);
        if (a == 0) assert_true(signbit(a)); /* a zero lower bound is -0.0 */
        break;
    }
    case C_D: {
        double a, b;
        memcpy(&a, s->lower.p, 8);
        memcpy(&b, s->upper.p, 8);
        assert_true(a == lo.d && b == hi.d);
        break;
    }
    case C_DEC9:
    case C_DEC18:
        assert_int_equal(be(s->lower.p, s->lower.len), lo.i);
        assert_int_equal(be(s->upper.p, s->upper.len), hi.i);
        break;
    case C_DEC38: /* Appendix D: the least bytes that hold the value */
        assert_true(fl_tier_decimal_of_be(s->lower.p, s->lower.len) == lo.dec);
        assert_true(fl_tier_decimal_of_be(s->upper.p, s->upper.len) == hi.dec);
        if (lo.dec == -DEC38_MAX) assert_int_equal(s->lower.len, 16);
        break;
    case C_S: { /* ASCII max: truncation to 16 characters, last one + 1 */
        size_t ln = lo.len > 16 ? 16 : lo.len;
        assert_int_equal(s->lower.len, ln);
        assert_memory_equal(s->lower.p, lo.p, ln);
        if (hi.len > 16) {
            hi.p[15]++;
            hi.len = 16;
        }
        assert_int_equal(s->upper.len, hi.len);
        assert_memory_equal(s->upper.p, hi.p, hi.len);
        break;
    }
    case C_C:
    case C_BIN:
    case C_BY:
        assert_int_equal(s->lower.len, lo.len);
        assert_int_equal(s->upper.len, hi.len);
        if (lo.len) assert_memory_equal(s->lower.p, lo.p, lo.len);
        if (hi.len) assert_memory_equal(s->upper.p, hi.p, hi.len);
        break;
    case C_B:
        assert_int_equal(s->lower.len, 1);
        assert_int_equal(s->lower.p[0], lo.i);
        assert_int_equal(s->upper.p[0], hi.i);
        break;
    default:
        assert_int_equal(s->lower.len, s->upper.len);
        assert_int_equal(le(s->lower.p, s->lower.len), lo.i);
        assert_int_equal(le(s->upper.p, s->upper.len), hi.i);
    }
}

/* The description of a file against what the reader finds in it. */
static void check_description(const fl_tier_file_t *f) {
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(f->file.file_size_bytes, st.st_size);
    assert_true(strncmp(f->file.file_path, "file://", 7) == 0);
    assert_string_equal(f->file.file_path + 7, f->path);
    assert_string_equal(f->file.file_format, "PARQUET");
    assert_int_equal(f->file.content, FL_ICE_DATA);
    assert_int_equal(f->file.sort_order_id, FL_TIER_SORT_ORDER_ID);
    assert_null(f->file.partition);
    for (size_t i = 1; i < f->file.n_columns; i++)
        assert_true(f->file.columns[i - 1].field_id < f->file.columns[i].field_id);
    fl_pq_reader_t *rd;
    fl_error_t err;
    if (fl_pq_reader_open_file(f->path, 1u << 30, &rd, &err)) fail_msg("%s", err.msg);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(rd);
    assert_int_equal(f->file.n_split_offsets, m->n_row_groups);
    for (size_t g = 0; g < m->n_row_groups; g++) {
        assert_int_equal(f->file.split_offsets[g], m->row_groups[g].file_offset);
        assert_int_equal(f->file.split_offsets[g], m->row_groups[g].columns[0].file_offset);
    }
    for (size_t k = 0; k < fl_pq_reader_columns(rd); k++) {
        const fl_pq_schema_element_t *e = fl_pq_reader_column(rd, k);
        int64_t size = 0;
        for (size_t g = 0; g < m->n_row_groups; g++)
            size += m->row_groups[g].columns[k].meta.total_compressed_size;
        assert_int_equal(stats_of(&f->file, e->field_id)->column_size, size);
    }
    fl_pq_reader_destroy(rd);
}

/* The descriptions go into an Iceberg manifest (partition spec
 * identity(__bucket), the partition value the result's bucket) and come
 * back the same. */
static void manifest_round_trip(const fl_tier_writer_result_t *res, int32_t bucket_id) {
    const fl_ice_partition_field_t field = {"__bucket", bucket_id, 1000, FL_ICE_IDENTITY, 0,
                                            FL_ICE_INT};
    fl_ice_manifest_entry_t *e = calloc(res->n_files, sizeof(*e));
    for (size_t i = 0; i < res->n_files; i++) {
        e[i].status = FL_ICE_ADDED;
        e[i].snapshot_id = e[i].sequence_number = e[i].file_sequence_number = FL_ICE_NONE;
        e[i].file = res->files[i].file;
        e[i].file.partition = &res->bucket_value;
    }
    fl_ice_manifest_t m = {FL_ICE_MANIFEST_DATA, "{\"type\":\"struct\",\"fields\":[]}", 0,
                           {0, &field, 1}, 7, e, res->n_files};
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    if (fl_ice_manifest_encode(&m, &b, NULL, &err)) fail_msg("%s", err.msg);
    fl_ice_manifest_read_t r;
    fl_ice_manifest_read_init(&r);
    if (fl_ice_manifest_decode(b.data, b.len, &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(r.manifest.n_entries, res->n_files);
    for (size_t i = 0; i < res->n_files; i++) {
        const fl_ice_data_file_t *x = &r.manifest.entries[i].file, *y = &res->files[i].file;
        assert_string_equal(x->file_path, y->file_path);
        assert_int_equal(x->partition[0].i, res->bucket);
        assert_int_equal(x->record_count, y->record_count);
        assert_int_equal(x->file_size_bytes, y->file_size_bytes);
        assert_int_equal(x->n_split_offsets, y->n_split_offsets);
        assert_int_equal(x->sort_order_id, FL_TIER_SORT_ORDER_ID);
        assert_int_equal(x->n_columns, y->n_columns);
        for (size_t k = 0; k < x->n_columns; k++) {
            const fl_ice_column_stats_t *a = &x->columns[k], *c = &y->columns[k];
            assert_int_equal(a->field_id, c->field_id);
            assert_int_equal(a->value_count, c->value_count);
            assert_int_equal(a->nan_count, c->nan_count);
            assert_int_equal(a->lower.len, c->lower.len);
            if (c->lower.len) assert_memory_equal(a->lower.p, c->lower.p, c->lower.len);
            assert_int_equal(a->upper.len, c->upper.len);
        }
    }
    fl_ice_manifest_read_reset(&r);
    fl_buf_free(&b);
    free(e);
}

/* ---- every type, every format ---- */

#define BATCH_ROWS 40
#define BATCHES 3

static void every_type(const char *dir, fl_log_format_t fmt, int8_t magic) {
    fl_schema_t s;
    sample_schema(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    int rows[BATCH_ROWS * BATCHES];
    int64_t offs[BATCH_ROWS * BATCHES], ts[BATCH_ROWS * BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        size_t at = buf.len;
        int64_t base = 1000 + b * BATCH_ROWS, when = 1700000000000LL + b * 1111;
        build_batch(&buf, fmt, &s, 1, sample_row, b * BATCH_ROWS, BATCH_ROWS, NULL, base, when);
        if (magic) remagic(&buf, at, magic, (size_t)b * 8);
        for (int r = 0; r < BATCH_ROWS; r++) {
            rows[b * BATCH_ROWS + r] = b * BATCH_ROWS + r;
            offs[b * BATCH_ROWS + r] = base + r;
            ts[b * BATCH_ROWS + r] = when;
        }
    }
    fl_tier_writer_options_t o;
    options(&o, dir, &s, fmt);
    fl_tier_writer_t *w;
    fl_error_t err;
    if (fl_tier_writer_open(&o, &w, &err)) fail_msg("%s", err.msg);
    if (add_all(w, &buf, &err)) fail_msg("%s", err.msg);
    const fl_tier_writer_result_t *res;
    if (fl_tier_writer_finish(w, &res, &err)) fail_msg("%s", err.msg);
    assert_int_equal(res->n_files, 1);
    assert_int_equal(res->record_count, BATCH_ROWS * BATCHES);
    assert_int_equal(res->first_offset, 1000);
    assert_int_equal(res->next_offset, 1000 + BATCH_ROWS * BATCHES);
    assert_int_equal(res->bucket, 3);
    assert_int_equal(res->bucket_value.i, 3);
    const fl_tier_file_t *f = &res->files[0];
    assert_int_equal(f->first_offset, 1000);
    assert_int_equal(f->last_offset, 1000 + BATCH_ROWS * BATCHES - 1);
    check_file(f, rows, offs, ts, 3);
    check_description(f);
    for (size_t k = 0; k < NCOL; k++) check_stats_column(&f->file, rows, k);
    /* system columns: required, exact bounds */
    const fl_ice_column_stats_t *bucket = stats_of(&f->file, NCOL + 1);
    assert_int_equal(le(bucket->lower.p, 4), 3);
    const fl_ice_column_stats_t *off = stats_of(&f->file, NCOL + 2);
    assert_int_equal(le(off->lower.p, 8), 1000);
    assert_int_equal(le(off->upper.p, 8), 1000 + BATCH_ROWS * BATCHES - 1);
    assert_int_equal(off->null_count, 0);
    const fl_ice_column_stats_t *tsc = stats_of(&f->file, NCOL + 3);
    assert_int_equal(le(tsc->lower.p, 8), 1700000000000000LL);
    assert_int_equal(le(tsc->upper.p, 8), (1700000000000LL + 2 * 1111) * 1000);
    manifest_round_trip(res, NCOL + 1);
    fl_tier_writer_close(w);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

static void test_arrow(void **state) { every_type(*state, FL_LOG_FORMAT_ARROW, 0); }
static void test_indexed(void **state) { every_type(*state, FL_LOG_FORMAT_INDEXED, 0); }
static void test_compacted(void **state) { every_type(*state, FL_LOG_FORMAT_COMPACTED, 0); }
static void test_arrow_magic1(void **state) { every_type(*state, FL_LOG_FORMAT_ARROW, 1); }
static void test_compacted_magic2(void **state) { every_type(*state, FL_LOG_FORMAT_COMPACTED, 2); }

/* The Parquet schema: names, field ids, repetition, logical types. */
static void test_parquet_schema(void **state) {
    fl_schema_t s;
    sample_schema(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 0, 10, NULL, 0, 1);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    o.codec = FL_PQ_CODEC_UNCOMPRESSED;
    fl_tier_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &buf, &err), 0);
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    fl_pq_reader_t *rd;
    assert_int_equal(fl_pq_reader_open_file(res->files[0].path, 1u << 30, &rd, &err), 0);
    static const struct {
        int32_t type, logical;
        bool utc;
    } want[NCOL + 3] = {
        {FL_PQ_BOOLEAN, 0, 0}, {FL_PQ_INT32, 0, 0}, {FL_PQ_INT32, 0, 0}, {FL_PQ_INT32, 0, 0},
        {FL_PQ_INT64, 0, 0}, {FL_PQ_FLOAT, 0, 0}, {FL_PQ_DOUBLE, 0, 0},
        {FL_PQ_INT32, FL_PQ_LT_DATE, 0}, {FL_PQ_INT64, FL_PQ_LT_TIME, 0},
        {FL_PQ_INT64, FL_PQ_LT_TIMESTAMP, 0}, {FL_PQ_INT64, FL_PQ_LT_TIMESTAMP, 1},
        {FL_PQ_INT32, FL_PQ_LT_DECIMAL, 0}, {FL_PQ_INT64, FL_PQ_LT_DECIMAL, 0},
        {FL_PQ_FLBA, FL_PQ_LT_DECIMAL, 0}, {FL_PQ_BYTE_ARRAY, FL_PQ_LT_STRING, 0}, {FL_PQ_BYTE_ARRAY, FL_PQ_LT_STRING, 0},
        {FL_PQ_BYTE_ARRAY, 0, 0}, {FL_PQ_BYTE_ARRAY, 0, 0},
        {FL_PQ_INT32, 0, 0}, {FL_PQ_INT64, 0, 0}, {FL_PQ_INT64, FL_PQ_LT_TIMESTAMP, 1}};
    static const char *const sys[3] = {"__bucket", "__offset", "__timestamp"};
    for (size_t k = 0; k < NCOL + 3; k++) {
        const fl_pq_schema_element_t *e = fl_pq_reader_column(rd, k);
        assert_string_equal(e->name, k < NCOL ? NAMES[k] : sys[k - NCOL]);
        assert_int_equal(e->field_id, (int32_t)k + 1);
        assert_int_equal(e->type, want[k].type);
        assert_int_equal(e->logical.kind, want[k].logical);
        bool required = k == C_I || k >= NCOL;
        assert_int_equal(e->repetition, required ? FL_PQ_REQUIRED : FL_PQ_OPTIONAL);
        if (want[k].logical == FL_PQ_LT_TIMESTAMP || want[k].logical == FL_PQ_LT_TIME) {
            assert_int_equal(e->logical.unit, FL_PQ_UNIT_MICROS);
            assert_int_equal(e->logical.utc, want[k].utc);
        }
    }
    assert_int_equal(fl_pq_reader_column(rd, C_DEC18)->logical.precision, 18);
    assert_int_equal(fl_pq_reader_column(rd, C_DEC18)->logical.scale, 4);
    assert_int_equal(fl_pq_reader_column(rd, C_DEC9)->logical.precision, 9);
    assert_int_equal(fl_pq_reader_column(rd, C_DEC38)->logical.precision, 38);
    assert_int_equal(fl_pq_reader_column(rd, C_DEC38)->logical.scale, 6);
    assert_int_equal(fl_pq_reader_column(rd, C_DEC38)->type_length, 16);
    fl_pq_reader_destroy(rd);
    fl_tier_writer_close(w);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

/* ---- schema evolution ---- */

static void evo_row(int r, fl_row_t *row) {
    size_t n = row->column_count;
    fl_row_reset(row, n);
    row->cells[0].is_null = false;
    row->cells[0].i = r;
    char s[16];
    snprintf(s, sizeof(s), "v%d", r);
    fl_row_set_bytes(row, 1, s, strlen(s));
    if (n > 2) {
        row->cells[2].is_null = false;
        row->cells[2].i = (int64_t)r * 10;
    }
}

static const fl_schema_t *evo_schemas(void *ctx, int16_t id) {
    const fl_schema_t *s = ctx;
    return id == 1 ? &s[0] : id == 2 ? &s[1] : NULL;
}

static void evolution(const char *dir, fl_log_format_t fmt) {
    static const char *const names[3] = {"a", "b", "c"};
    static const char *const types[3] = {"INT NOT NULL", "STRING", "BIGINT"};
    fl_schema_t s[2];
    schema_of_types(&s[0], names, types, 2);
    schema_of_types(&s[1], names, types, 3); /* ADD COLUMN c: a and b keep their ids */
    assert_int_equal(s[1].columns[0].id, s[0].columns[0].id);
    assert_int_equal(s[1].columns[1].id, s[0].columns[1].id);
    fl_buf_t buf;
    fl_buf_init(&buf);
    build_batch(&buf, fmt, &s[0], 1, evo_row, 0, 5, NULL, 0, 10);
    build_batch(&buf, fmt, &s[1], 2, evo_row, 5, 5, NULL, 5, 20);
    fl_tier_writer_options_t o;
    options(&o, dir, &s[1], fmt);
    o.schema_id = 2;
    o.schema_of = evo_schemas;
    o.schema_ctx = s;
    /* the lake's ids after ADD COLUMN: c after the system columns */
    static const int32_t ids[6] = {1, 2, 6, 3, 4, 5};
    o.field_ids = ids;
    fl_tier_writer_t *w;
    fl_error_t err;
    if (fl_tier_writer_open(&o, &w, &err)) fail_msg("%s", err.msg);
    if (add_all(w, &buf, &err)) fail_msg("%s", err.msg);
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    const fl_tier_file_t *f = &res->files[0];
    fl_pq_reader_t *rd;
    assert_int_equal(fl_pq_reader_open_file(f->path, 1u << 30, &rd, &err), 0);
    assert_int_equal(fl_pq_reader_column(rd, 2)->field_id, 6);
    assert_int_equal(fl_pq_reader_column(rd, 3)->field_id, 3);
    fl_pq_values_t a, c, off;
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 0, &a, &err), 0);
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 2, &c, &err), 0);
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 4, &off, &err), 0);
    for (int r = 0; r < 10; r++) {
        assert_int_equal(((int32_t *)a.values)[r], r);
        assert_int_equal(c.valid[r], r >= 5); /* added later: NULL in old rows */
        if (r >= 5) assert_int_equal(((int64_t *)c.values)[r], r * 10);
        assert_int_equal(((int64_t *)off.values)[r], r);
    }
    fl_pq_values_free(&a);
    fl_pq_values_free(&c);
    fl_pq_values_free(&off);
    fl_pq_reader_destroy(rd);
    /* stats by ascending field id; c (6) last */
    assert_int_equal(f->file.n_columns, 6);
    assert_int_equal(f->file.columns[5].field_id, 6);
    assert_int_equal(f->file.columns[5].null_count, 5);
    assert_int_equal(le(f->file.columns[5].lower.p, 8), 50);
    assert_int_equal(le(f->file.columns[5].upper.p, 8), 90);
    fl_tier_writer_close(w);
    fl_buf_free(&buf);
    fl_schema_free(&s[0]);
    fl_schema_free(&s[1]);
}

static void test_evolution_arrow(void **state) { evolution(*state, FL_LOG_FORMAT_ARROW); }
static void test_evolution_compacted(void **state) { evolution(*state, FL_LOG_FORMAT_COMPACTED); }

/* ---- rolling, row groups ---- */

static size_t count_files(const char *dir) {
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static void test_rolling(void **state) {
    fl_schema_t s;
    sample_schema(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    enum { N = 6, ROWS = 30 };
    int rows[N * ROWS];
    int64_t offs[N * ROWS], ts[N * ROWS];
    for (int b = 0; b < N; b++) {
        build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, b * ROWS, ROWS, NULL,
                    b * ROWS, 5000 + b);
        for (int r = 0; r < ROWS; r++)
            rows[b * ROWS + r] = b * ROWS + r, offs[b * ROWS + r] = b * ROWS + r,
                        ts[b * ROWS + r] = 5000 + b;
    }
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    o.target_file_bytes = 4 * 1024; /* a few batches pass it */
    o.row_group_bytes = 512; /* and a row group per batch (the column path ends one after a batch) */
    fl_tier_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &buf, &err), 0);
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_true(res->n_files >= 2);
    assert_int_equal(count_files(*state), res->n_files);
    int64_t next = 0, total = 0;
    for (size_t i = 0; i < res->n_files; i++) {
        const fl_tier_file_t *f = &res->files[i];
        assert_int_equal(f->first_offset, next);
        assert_int_equal(f->last_offset - f->first_offset + 1, f->file.record_count);
        next = f->last_offset + 1;
        check_file(f, rows + f->first_offset, offs + f->first_offset, ts + f->first_offset, 3);
        check_description(f);
        for (size_t k = 0; k < NCOL; k++) check_stats_column(&f->file, rows + f->first_offset, k);
        total += f->file.record_count;
        /* <dir>/data-3-<seq>-<uuid>.parquet */
        char want[64];
        snprintf(want, sizeof(want), "/data-3-%zu-", i);
        const char *name = f->path + strlen(*state);
        assert_true(strncmp(name, want, strlen(want)) == 0);
        assert_int_equal(strlen(name), strlen(want) + 36 + strlen(".parquet"));
        if (i) assert_string_not_equal(f->path, res->files[i - 1].path);
    }
    assert_true(res->files[0].file.n_split_offsets >= 2);
    assert_int_equal(total, N * ROWS);
    assert_int_equal(res->record_count, N * ROWS);
    manifest_round_trip(res, NCOL + 1);
    size_t n_files = res->n_files;
    fl_tier_writer_close(w); /* the files stay */
    assert_int_equal(count_files(*state), n_files);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

/* ---- change types ---- */

typedef struct seen {
    int n;
    int64_t offsets[16];
    fl_change_type_t cts[16];
    int64_t positions[16];
} seen_t;

static int skip_deletes(void *ctx, const fl_tier_record_t *rec, fl_tier_row_action_t *action,
                        fl_error_t *err) {
    seen_t *s = ctx;
    s->offsets[s->n] = rec->offset;
    s->cts[s->n] = rec->change_type;
    s->positions[s->n] = rec->position;
    s->n++;
    assert_int_equal(rec->file, 0);
    assert_int_equal(rec->row->column_count, 2);
    assert_int_equal(rec->row->cells[0].i, rec->offset - 100);
    bool del = rec->change_type == FL_CHANGE_UPDATE_BEFORE || rec->change_type == FL_CHANGE_DELETE;
    *action = del ? FL_TIER_ROW_SKIP : FL_TIER_ROW_WRITE;
    return 0;
}

static void changelog(const char *dir, fl_log_format_t fmt) {
    static const char *const names[2] = {"a", "b"};
    static const char *const types[2] = {"INT NOT NULL", "STRING"};
    fl_schema_t s;
    schema_of_types(&s, names, types, 2);
    static const fl_change_type_t cts[5] = {FL_CHANGE_INSERT, FL_CHANGE_UPDATE_BEFORE,
                                            FL_CHANGE_UPDATE_AFTER, FL_CHANGE_DELETE,
                                            FL_CHANGE_INSERT};
    fl_buf_t buf, ins;
    fl_buf_init(&buf);
    fl_buf_init(&ins);
    build_batch(&buf, fmt, &s, 1, evo_row, 0, 5, cts, 100, 1);
    build_batch(&ins, fmt, &s, 1, evo_row, 0, 5, (const fl_change_type_t[5]){1, 1, 1, 1, 1}, 100,
                1);
    fl_tier_writer_options_t o;
    options(&o, dir, &s, fmt);
    fl_tier_writer_t *w;
    fl_error_t err;
    /* no hook: +I is taken, -U refused by name */
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &ins, &err), 0);
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_int_equal(res->record_count, 5);
    fl_tier_writer_close(w);
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &buf, &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "offset 101 is a -U change"));
    assert_int_equal(fl_tier_writer_add_batch(w, buf.data, buf.len, &err), FLUSS_ERR__STATE);
    fl_tier_writer_abort(w);
    assert_int_equal(count_files(dir), 1); /* the +I writer's file */
    /* a hook: sees every record, skips the deletes */
    seen_t seen = {0};
    o.on_change = skip_deletes;
    o.change_ctx = &seen;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    if (add_all(w, &buf, &err)) fail_msg("%s", err.msg);
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_int_equal(seen.n, 5);
    static const int64_t positions[5] = {0, 1, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(seen.offsets[i], 100 + i);
        assert_int_equal(seen.cts[i], cts[i]);
        assert_int_equal(seen.positions[i], positions[i]);
    }
    assert_int_equal(res->record_count, 3);
    fl_pq_reader_t *rd;
    assert_int_equal(fl_pq_reader_open_file(res->files[0].path, 1u << 30, &rd, &err), 0);
    fl_pq_values_t off;
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 3, &off, &err), 0);
    assert_int_equal(off.rows, 3);
    assert_int_equal(((int64_t *)off.values)[0], 100);
    assert_int_equal(((int64_t *)off.values)[1], 102);
    assert_int_equal(((int64_t *)off.values)[2], 104);
    fl_pq_values_free(&off);
    fl_pq_reader_destroy(rd);
    fl_tier_writer_close(w);
    fl_buf_free(&buf);
    fl_buf_free(&ins);
    fl_schema_free(&s);
}

/* fl_tier_writer_add_row: rows no batch holds (a PK bucket's KV image)
 * go through the hook like records and into the file with the given
 * __offset and __timestamp; they move no offset; a row of another column
 * count is refused and latches. */
static void test_add_row(void **state) {
    const char *dir = *state;
    static const char *const names[2] = {"a", "b"};
    static const char *const types[2] = {"INT NOT NULL", "STRING"};
    fl_schema_t s;
    schema_of_types(&s, names, types, 2);
    fl_tier_writer_options_t o;
    options(&o, dir, &s, FL_LOG_FORMAT_ARROW);
    seen_t seen = {0};
    o.on_change = skip_deletes;
    o.change_ctx = &seen;
    fl_tier_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    fl_row_t r;
    fl_row_init(&r, 2);
    for (int i = 0; i < 3; i++) {
        r.cells[0].is_null = false;
        r.cells[0].i = -1; /* skip_deletes checks a == offset - 100 */
        fl_row_set_bytes(&r, 1, "kv", 2);
        assert_int_equal(fl_tier_writer_add_row(w, 99, 1700000000123, FL_CHANGE_INSERT, &r, &err),
                         0);
    }
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_int_equal(res->record_count, 3);
    assert_int_equal(res->next_offset, -1);
    assert_int_equal(seen.n, 3);
    assert_int_equal(seen.positions[2], 2);
    fl_pq_reader_t *rd;
    assert_int_equal(fl_pq_reader_open_file(res->files[0].path, 1u << 30, &rd, &err), 0);
    fl_pq_values_t v;
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 3, &v, &err), 0); /* __offset */
    assert_int_equal(v.rows, 3);
    assert_int_equal(((int64_t *)v.values)[2], 99);
    fl_pq_values_free(&v);
    assert_int_equal(fl_pq_reader_read_column(rd, 0, 4, &v, &err), 0); /* __timestamp, µs */
    assert_int_equal(((int64_t *)v.values)[0], 1700000000123000);
    fl_pq_values_free(&v);
    fl_pq_reader_destroy(rd);
    fl_tier_writer_close(w);
    /* a row of the wrong width */
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    fl_row_t narrow;
    fl_row_init(&narrow, 1);
    assert_int_equal(fl_tier_writer_add_row(w, 5, 0, FL_CHANGE_INSERT, &narrow, &err),
                     FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_tier_writer_add_row(w, 5, 0, FL_CHANGE_INSERT, &r, &err), FLUSS_ERR__STATE);
    fl_tier_writer_abort(w);
    fl_row_free(&narrow);
    fl_row_free(&r);
    fl_schema_free(&s);
}

static void test_changelog_arrow(void **state) { changelog(*state, FL_LOG_FORMAT_ARROW); }
static void test_changelog_indexed(void **state) { changelog(*state, FL_LOG_FORMAT_INDEXED); }

/* ---- refusals ---- */

static int open_one(const char *dir, const char *type, const char *name, fl_error_t *err) {
    const char *names[1] = {name}, *types[1] = {type};
    fl_schema_t s;
    schema_of_types(&s, names, types, 1);
    fl_tier_writer_options_t o;
    options(&o, dir, &s, FL_LOG_FORMAT_ARROW);
    fl_tier_writer_t *w = NULL;
    int rc = fl_tier_writer_open(&o, &w, err);
    fl_tier_writer_close(w);
    fl_schema_free(&s);
    return rc;
}

static void test_refusals(void **state) {
    fl_error_t err;
    /* nested columns need the lake's ids (never positional: test_tier_nested) */
    assert_int_equal(open_one(*state, "ARRAY<INT>", "x", &err), FLUSS_ERR__INVALID_ARG);
    assert_non_null(strstr(err.msg, "field ids"));
    assert_int_equal(open_one(*state, "MAP<STRING, INT>", "x", &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(open_one(*state, "ROW<a INT>", "x", &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(open_one(*state, "DECIMAL(19, 2)", "x", &err), 0);
    assert_int_equal(open_one(*state, "DECIMAL(38, 2)", "x", &err), 0);
    assert_int_equal(open_one(*state, "BIGINT", "__offset", &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(open_one("relative/dir", "BIGINT", "x", &err), FLUSS_ERR__INVALID_ARG);
    /* field ids must be distinct */
    const char *names[1] = {"x"}, *types[1] = {"INT"};
    fl_schema_t s;
    schema_of_types(&s, names, types, 1);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    static const int32_t dup[4] = {1, 2, 3, 1};
    o.field_ids = dup;
    fl_tier_writer_t *w;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), FLUSS_ERR__INVALID_ARG);
    fl_schema_free(&s);
    assert_int_equal(count_files(*state), 0);
}

/* Batches the writer cannot take: each latches it. */
static void test_bad_batches(void **state) {
    fl_schema_t s;
    sample_schema(&s);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    fl_buf_t a, b;
    fl_buf_init(&a);
    fl_buf_init(&b);
    build_batch(&a, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 0, 5, NULL, 0, 1);
    build_batch(&b, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 5, 5, NULL, 6, 1); /* gap at 5 */
    fl_tier_writer_t *w;
    fl_error_t err;
    /* out of order */
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(fl_tier_writer_add_batch(w, a.data, a.len, &err), 0);
    assert_int_equal(fl_tier_writer_add_batch(w, b.data, b.len, &err), FLUSS_ERR__INVALID_ARG);
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), FLUSS_ERR__STATE);
    fl_tier_writer_abort(w);
    assert_int_equal(count_files(*state), 0);
    /* a flipped byte under the CRC */
    a.data[a.len - 1] ^= 1;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(fl_tier_writer_add_batch(w, a.data, a.len, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_tier_writer_abort(w);
    a.data[a.len - 1] ^= 1;
    /* an unknown schema id */
    o.schema_id = 2;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(fl_tier_writer_add_batch(w, a.data, a.len, &err), FLUSS_ERR_SCHEMA_NOT_EXIST);
    fl_tier_writer_abort(w);
    /* an Arrow batch in a COMPACTED table */
    o.schema_id = 1;
    o.log_format = FL_LOG_FORMAT_COMPACTED;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(fl_tier_writer_add_batch(w, a.data, a.len, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_tier_writer_abort(w);
    assert_int_equal(count_files(*state), 0);
    fl_buf_free(&a);
    fl_buf_free(&b);
    fl_schema_free(&s);
}

/* Empty batches move the offsets and make no file; abort removes files
 * closed by rolling and the open one. */
static void test_empty_and_abort(void **state) {
    fl_schema_t s;
    sample_schema(&s);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_record_builder_write_empty_changelog(&buf, 1, -1, -1);
    place(&buf, 0, 7, 1);
    fl_tier_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &buf, &err), 0);
    const fl_tier_writer_result_t *res;
    assert_int_equal(fl_tier_writer_finish(w, &res, &err), 0);
    assert_int_equal(res->n_files, 0);
    assert_int_equal(res->first_offset, 7);
    assert_int_equal(res->next_offset, 8);
    fl_tier_writer_close(w);
    assert_int_equal(count_files(*state), 0);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 0, 20, NULL, 8, 1);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 20, 20, NULL, 28, 1);
    o.target_file_bytes = 1; /* every batch closes its file */
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    assert_int_equal(add_all(w, &buf, &err), 0);
    assert_int_equal(count_files(*state), 2);
    fl_tier_writer_abort(w);
    assert_int_equal(count_files(*state), 0);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

/* A NULL where the current schema says NOT NULL (an older batch without
 * the column) is refused, not written. */
static int compare_paths(const fl_tier_writer_options_t *o, const fl_buf_t *buf);

static void test_null_in_required(void **state) {
    static const char *const names[2] = {"a", "b"};
    static const char *const old_types[2] = {"INT NOT NULL", "STRING"};
    static const char *const new_types[2] = {"INT NOT NULL", "STRING NOT NULL"};
    fl_schema_t s[2];
    schema_of_types(&s[0], names, old_types, 2);
    schema_of_types(&s[1], names, new_types, 2);
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_row_t row;
    fl_row_init(&row, 2);
    row.cells[0].is_null = false;
    fl_record_builder_t b;
    fl_record_builder_options_t bo = {.schema_id = 1, .codec = FL_ARROW_CODEC_NONE};
    fl_record_builder_init(&b, &s[0], &bo);
    fl_record_builder_append(&b, &row); /* b NULL */
    fl_error_t err;
    assert_int_equal(fl_record_builder_finish(&b, -1, -1, &buf, &err), 0);
    fl_record_builder_free(&b);
    fl_row_free(&row);
    fl_tier_writer_options_t o;
    options(&o, *state, &s[1], FL_LOG_FORMAT_ARROW);
    o.schema_id = 2;
    o.schema_of = evo_schemas;
    o.schema_ctx = s;
    fl_tier_writer_t *w;
    assert_int_equal(fl_tier_writer_open(&o, &w, &err), 0);
    /* STRING and STRING NOT NULL differ in type: the map leaves b NULL */
    assert_int_equal(fl_tier_writer_add_batch(w, buf.data, buf.len, &err),
                     FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    assert_non_null(strstr(err.msg, "NOT NULL column b"));
    /* the column path hands the batch to the row path, which names it */
    assert_int_equal(compare_paths(&o, &buf), FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
    fl_tier_writer_abort(w);
    fl_buf_free(&buf);
    fl_schema_free(&s[0]);
    fl_schema_free(&s[1]);
}

/* ---- metrics on their own ---- */

static fl_pq_column_spec_t spec_of(int32_t type, int16_t logical) {
    fl_pq_column_spec_t s;
    memset(&s, 0, sizeof(s));
    s.name = "x";
    s.field_id = 1;
    s.type = type;
    s.optional = true;
    s.logical.kind = logical;
    if (logical == FL_PQ_LT_DECIMAL) s.logical.precision = 18;
    return s;
}

static void add_str(fl_tier_metrics_t *m, const char *s, size_t n) {
    fl_tier_value_t v = {.bytes = {(const uint8_t *)s, (uint32_t)n}};
    fl_tier_metrics_add(m, &v);
}

/* Bounds of one value, lower and upper, as strings ("" when absent). */
static void bounds_of_one(int16_t logical, const char *s, size_t n, fl_buf_t *lo, fl_buf_t *hi,
                          bool *has_hi) {
    fl_pq_column_spec_t spec = spec_of(FL_PQ_BYTE_ARRAY, logical);
    fl_tier_metrics_t m;
    fl_tier_metrics_init(&m, &spec);
    add_str(&m, s, n);
    assert_true(fl_tier_metrics_lower(&m, lo));
    *has_hi = fl_tier_metrics_upper(&m, hi);
    fl_tier_metrics_free(&m);
}

static void check_bounds(int16_t logical, const char *s, size_t n, const char *lo_want,
                         size_t lo_n, const char *hi_want, size_t hi_n) {
    fl_buf_t lo, hi;
    fl_buf_init(&lo);
    fl_buf_init(&hi);
    bool has_hi;
    bounds_of_one(logical, s, n, &lo, &hi, &has_hi);
    assert_int_equal(lo.len, lo_n);
    if (lo_n) assert_memory_equal(lo.data, lo_want, lo_n);
    if (!hi_want) {
        assert_false(has_hi);
    } else {
        assert_true(has_hi);
        assert_int_equal(hi.len, hi_n);
        assert_memory_equal(hi.data, hi_want, hi_n);
    }
    fl_buf_free(&lo);
    fl_buf_free(&hi);
}

static void test_metrics_truncation(void **state) {
    (void)state;
    const int16_t STR = FL_PQ_LT_STRING;
    /* at most 16: exact */
    check_bounds(STR, "abcdefghijklmnop", 16, "abcdefghijklmnop", 16, "abcdefghijklmnop", 16);
    check_bounds(STR, "", 0, "", 0, "", 0);
    /* longer: prefix, last character + 1 */
    check_bounds(STR, "abcdefghijklmnopq", 17, "abcdefghijklmnop", 16, "abcdefghijklmnoq", 16);
    /* 16 characters, not bytes: é is two bytes */
    const char *e17 = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9z";
    check_bounds(STR, e17, 33, e17, 32,
                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xaa",
                 32); /* the 16th é becomes ê */
}

static void test_metrics_string_carry(void **state) {
    (void)state;
    const int16_t STR = FL_PQ_LT_STRING, BIN = FL_PQ_LT_NONE;
    /* 15 a's + U+10FFFF + more: the max code point cannot grow, the a before it does */
    const char *s = "aaaaaaaaaaaaaaa\xf4\x8f\xbf\xbfxyz";
    check_bounds(STR, s, 22, s, 19, "aaaaaaaaaaaaaab", 15);
    /* U+D7FF + 1 skips the surrogates to U+E000 */
    const char *d = "aaaaaaaaaaaaaaa\xed\x9f\xbfxyz";
    check_bounds(STR, d, 21, d, 18, "aaaaaaaaaaaaaaa\xee\x80\x80", 18);
    /* U+007F grows into two bytes */
    const char *del = "aaaaaaaaaaaaaaa\x7fxyz";
    check_bounds(STR, del, 19, del, 16, "aaaaaaaaaaaaaaa\xc2\x80", 17);
    /* 16 maximal code points: no upper bound */
    char max[80];
    for (int i = 0; i < 17; i++) memcpy(max + 4 * i, "\xf4\x8f\xbf\xbf", 4);
    check_bounds(STR, max, 68, max, 64, NULL, 0);
    /* binary: 16 bytes, carry over 0xFF */
    const char *b = "0123456789abcde\xff\x01";
    check_bounds(BIN, b, 17, b, 16, "0123456789abcdf", 15);
    char ff[17];
    memset(ff, 0xFF, 17);
    check_bounds(BIN, ff, 17, ff, 16, NULL, 0);
    check_bounds(BIN, "\x00\x01", 2, "\x00\x01", 2, "\x00\x01", 2);
    /* not UTF-8 in a string: a unit each, never incremented */
    const char *bad = "aaaaaaaaaaaaaaa\xff\xfe";
    check_bounds(STR, bad, 17, bad, 16, "aaaaaaaaaaaaaab", 15);
}

/* min and max over many strings keep only prefixes, yet come out right */
static void test_metrics_string_order(void **state) {
    (void)state;
    fl_pq_column_spec_t spec = spec_of(FL_PQ_BYTE_ARRAY, FL_PQ_LT_STRING);
    fl_tier_metrics_t m;
    fl_tier_metrics_init(&m, &spec);
    add_str(&m, "mmmmmmmmmmmmmmmmmmmm-2", 22);
    add_str(&m, "mmmmmmmmmmmmmmmm", 16);
    add_str(&m, "b", 1);
    add_str(&m, "zzzzzzzzzzzzzzzz", 16);
    fl_tier_metrics_add(&m, NULL);
    fl_buf_t out;
    fl_buf_init(&out);
    assert_true(fl_tier_metrics_lower(&m, &out));
    assert_int_equal(out.len, 1);
    assert_true(fl_tier_metrics_upper(&m, &out));
    assert_int_equal(out.len, 16); /* exactly 16: not incremented */
    assert_memory_equal(out.data, "zzzzzzzzzzzzzzzz", 16);
    add_str(&m, "zzzzzzzzzzzzzzzzA", 17);
    assert_true(fl_tier_metrics_upper(&m, &out));
    assert_memory_equal(out.data, "zzzzzzzzzzzzzzz{", 16);
    assert_int_equal(m.values, 6);
    assert_int_equal(m.nulls, 1);
    assert_int_equal(fl_tier_metrics_nans(&m), -1);
    fl_buf_free(&out);
    fl_tier_metrics_free(&m);
}

static void test_metrics_floats(void **state) {
    (void)state;
    fl_pq_column_spec_t spec = spec_of(FL_PQ_DOUBLE, 0);
    fl_tier_metrics_t m;
    fl_tier_metrics_init(&m, &spec);
    fl_buf_t lo, hi;
    fl_buf_init(&lo);
    fl_buf_init(&hi);
    fl_tier_value_t v = {.d = NAN};
    fl_tier_metrics_add(&m, &v);
    assert_false(fl_tier_metrics_lower(&m, &lo)); /* NaN only: no bounds */
    assert_int_equal(fl_tier_metrics_nans(&m), 1);
    v.d = 0.0;
    fl_tier_metrics_add(&m, &v);
    double d;
    assert_true(fl_tier_metrics_lower(&m, &lo));
    assert_true(fl_tier_metrics_upper(&m, &hi));
    memcpy(&d, lo.data, 8);
    assert_true(d == 0.0 && signbit(d)); /* -0.0 */
    memcpy(&d, hi.data, 8);
    assert_true(d == 0.0 && !signbit(d));
    v.d = -0.0;
    fl_tier_metrics_add(&m, &v);
    assert_true(fl_tier_metrics_upper(&m, &hi));
    memcpy(&d, hi.data, 8);
    assert_true(d == 0.0 && !signbit(d)); /* +0.0 */
    v.d = -2.5;
    fl_tier_metrics_add(&m, &v);
    v.d = INFINITY;
    fl_tier_metrics_add(&m, &v);
    assert_true(fl_tier_metrics_lower(&m, &lo));
    assert_true(fl_tier_metrics_upper(&m, &hi));
    memcpy(&d, lo.data, 8);
    assert_true(d == -2.5);
    memcpy(&d, hi.data, 8);
    assert_true(isinf(d) && d > 0);
    assert_int_equal(m.values, 5);
    assert_int_equal(fl_tier_metrics_nans(&m), 1);
    fl_tier_metrics_free(&m);
    /* float: 4 bytes */
    spec = spec_of(FL_PQ_FLOAT, 0);
    fl_tier_metrics_init(&m, &spec);
    v.f = 1.5f;
    fl_tier_metrics_add(&m, &v);
    assert_true(fl_tier_metrics_lower(&m, &lo));
    assert_int_equal(lo.len, 4);
    float f;
    memcpy(&f, lo.data, 4);
    assert_true(f == 1.5f);
    fl_tier_metrics_free(&m);
    fl_buf_free(&lo);
    fl_buf_free(&hi);
}

static void test_decimal_bounds(void **state) {
    (void)state;
    static const struct {
        int64_t v;
        size_t n;
        uint8_t b[8];
    } cases[] = {
        {0, 1, {0x00}},          {1, 1, {0x01}},          {127, 1, {0x7F}},
        {128, 2, {0x00, 0x80}},  {255, 2, {0x00, 0xFF}},  {256, 2, {0x01, 0x00}},
        {-1, 1, {0xFF}},         {-128, 1, {0x80}},       {-129, 2, {0xFF, 0x7F}},
        {-256, 2, {0xFF, 0x00}}, {INT64_MAX, 8, {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
        {INT64_MIN, 8, {0x80}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t out[16];
        size_t n = fl_ice_bound_decimal(cases[i].v, out);
        assert_int_equal(n, cases[i].n);
        assert_memory_equal(out, cases[i].b, n);
    }
    uint8_t out[16];
    assert_int_equal(fl_ice_bound_decimal((__int128)1 << 64, out), 9);
    assert_int_equal(out[0], 0x01);
    /* a DECIMAL column's metrics use it */
    fl_pq_column_spec_t spec = spec_of(FL_PQ_INT64, FL_PQ_LT_DECIMAL);
    fl_tier_metrics_t m;
    fl_tier_metrics_init(&m, &spec);
    fl_tier_value_t v = {.i64 = -129};
    fl_tier_metrics_add(&m, &v);
    v.i64 = 300;
    fl_tier_metrics_add(&m, &v);
    fl_buf_t b;
    fl_buf_init(&b);
    assert_true(fl_tier_metrics_lower(&m, &b));
    assert_int_equal(b.len, 2);
    assert_int_equal(b.data[0], 0xFF);
    assert_int_equal(b.data[1], 0x7F);
    assert_true(fl_tier_metrics_upper(&m, &b));
    assert_int_equal(b.data[0], 0x01);
    assert_int_equal(b.data[1], 0x2C);
    fl_buf_free(&b);
    fl_tier_metrics_free(&m);
}

/* ---- the column path against the row path ---- */

/* Every byte of the file at path (the test's own files: small). */
static fl_buf_t file_bytes(const char *path) {
    fl_buf_t b;
    fl_buf_init(&b);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) fl_buf_append(&b, chunk, n);
    fclose(f);
    return b;
}

static bool avro_bytes_equal(fl_avro_bytes_t a, fl_avro_bytes_t b) {
    return a.len == b.len && (!a.len || memcmp(a.p, b.p, a.len) == 0);
}

/* Column k of row group g of both files, value by value. */
static void compare_column(fl_pq_reader_t *ra, fl_pq_reader_t *rb, size_t g, size_t k) {
    fl_pq_values_t a, b;
    fl_error_t err;
    if (fl_pq_reader_read_column(ra, g, k, &a, &err)) fail_msg("%s", err.msg);
    if (fl_pq_reader_read_column(rb, g, k, &b, &err)) fail_msg("%s", err.msg);
    assert_int_equal(a.type, b.type);
    assert_int_equal(a.rows, b.rows);
    assert_memory_equal(a.valid, b.valid, a.rows);
    if (a.type == FL_PQ_BYTE_ARRAY) {
        assert_memory_equal(a.offsets, b.offsets, (a.rows + 1) * sizeof(uint64_t));
        if (a.offsets[a.rows]) assert_memory_equal(a.bytes, b.bytes, a.offsets[a.rows]);
    } else {
        size_t width = a.type == FL_PQ_BOOLEAN ? 1 : a.type == FL_PQ_INT32 ? 4
                       : a.type == FL_PQ_FLOAT ? 4 : 8;
        assert_memory_equal(a.values, b.values, a.rows * width);
    }
    fl_pq_values_free(&a);
    fl_pq_values_free(&b);
}

/* The two files read back equal, their descriptions equal, and (one row
 * group each, so the same row group boundaries) their bytes equal. */
static void compare_files(const fl_tier_file_t *fa, const fl_tier_file_t *fb) {
    assert_int_equal(fa->first_offset, fb->first_offset);
    assert_int_equal(fa->last_offset, fb->last_offset);
    const fl_ice_data_file_t *a = &fa->file, *b = &fb->file;
    assert_int_equal(a->record_count, b->record_count);
    assert_int_equal(a->file_size_bytes, b->file_size_bytes);
    assert_int_equal(a->n_split_offsets, b->n_split_offsets);
    assert_int_equal(a->n_columns, b->n_columns);
    for (size_t c = 0; c < a->n_columns; c++) {
        const fl_ice_column_stats_t *x = &a->columns[c], *y = &b->columns[c];
        assert_int_equal(x->field_id, y->field_id);
        assert_int_equal(x->column_size, y->column_size);
        assert_int_equal(x->value_count, y->value_count);
        assert_int_equal(x->null_count, y->null_count);
        assert_int_equal(x->nan_count, y->nan_count);
        if (!avro_bytes_equal(x->lower, y->lower) || !avro_bytes_equal(x->upper, y->upper))
            fail_msg("field %d: bounds differ", x->field_id);
    }
    fl_pq_reader_t *ra, *rb;
    fl_error_t err;
    if (fl_pq_reader_open_file(fa->path, 1u << 30, &ra, &err)) fail_msg("%s", err.msg);
    if (fl_pq_reader_open_file(fb->path, 1u << 30, &rb, &err)) fail_msg("%s", err.msg);
    const fl_pq_file_meta_t *ma = fl_pq_reader_meta(ra);
    assert_int_equal(ma->n_row_groups, fl_pq_reader_meta(rb)->n_row_groups);
    for (size_t g = 0; g < ma->n_row_groups; g++)
        for (size_t k = 0; k < fl_pq_reader_columns(ra); k++) compare_column(ra, rb, g, k);
    fl_pq_reader_destroy(ra);
    fl_pq_reader_destroy(rb);
    fl_buf_t ba = file_bytes(fa->path), bb = file_bytes(fb->path);
    assert_int_equal(ba.len, bb.len);
    assert_memory_equal(ba.data, bb.data, ba.len);
    fl_buf_free(&ba);
    fl_buf_free(&bb);
}

/* Writes buf's batches with o once column by column and once row by row
 * and compares what came out; returns the column path's add_all code
 * (both paths must agree on it, and on the error's code and message). */
static int compare_paths(const fl_tier_writer_options_t *o, const fl_buf_t *buf) {
    fl_tier_writer_t *w[2];
    const fl_tier_writer_result_t *res[2];
    fl_error_t err[2];
    int rc[2];
    for (int p = 0; p < 2; p++) {
        fl_tier_writer_options_t op = *o;
        op.row_path = p == 1;
        op.prefix = p ? "rows" : "cols";
        assert_int_equal(fl_tier_writer_open(&op, &w[p], &err[p]), 0);
        rc[p] = add_all(w[p], buf, &err[p]);
        if (!rc[p]) assert_int_equal(fl_tier_writer_finish(w[p], &res[p], &err[p]), 0);
    }
    assert_int_equal(rc[0], rc[1]);
    if (rc[0]) {
        assert_string_equal(err[0].msg, err[1].msg);
    } else {
        assert_int_equal(res[0]->n_files, res[1]->n_files);
        assert_int_equal(res[0]->record_count, res[1]->record_count);
        assert_int_equal(res[0]->next_offset, res[1]->next_offset);
        for (size_t i = 0; i < res[0]->n_files; i++)
            compare_files(&res[0]->files[i], &res[1]->files[i]);
    }
    fl_tier_writer_abort(w[0]);
    fl_tier_writer_abort(w[1]);
    return rc[0];
}

/* Every primitive type with nulls, NaN, both zeros, negative times, over
 * several batches, one of them with an all-append change-type vector. */
static void test_paths_agree(void **state) {
    fl_schema_t s;
    sample_schema(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    static const fl_change_type_t cts[40] = {FL_CHANGE_INSERT, FL_CHANGE_APPEND_ONLY,
                                             FL_CHANGE_INSERT};
    for (int b = 0; b < 5; b++)
        build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, b * 40, 40, b == 2 ? cts : NULL,
                    b * 40, 7000 + b);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    assert_int_equal(compare_paths(&o, &buf), 0);
    /* rolling per batch: several files, each equal */
    o.target_file_bytes = 1;
    assert_int_equal(compare_paths(&o, &buf), 0);
    /* a -D record: both refuse the batch with the same words */
    fl_buf_reset(&buf);
    static const fl_change_type_t del[3] = {FL_CHANGE_INSERT, FL_CHANGE_DELETE, FL_CHANGE_INSERT};
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, sample_row, 0, 3, del, 0, 1);
    o.target_file_bytes = 0;
    assert_int_equal(compare_paths(&o, &buf), FLUSS_ERR__INVALID_ARG);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

/* Timestamps and times of every Arrow unit (s, ms, µs, ns), before and
 * after 1970: the floor division of both paths. */
enum { T_TS0, T_TS3, T_LTZ3, T_LTZ7, T_TIME0, T_TIME6, T_TIME9, T_NCOL };

static void time_row(int r, fl_row_t *row) {
    fl_row_reset(row, T_NCOL);
    for (int k = 0; k < T_NCOL; k++) {
        if ((r + k) % 6 == 0) continue;
        fl_cell_t *c = &row->cells[k];
        c->is_null = false;
        int64_t sign = r % 2 ? -1 : 1;
        if (k >= T_TIME0) {
            c->i = ((int64_t)r * 3600007 + 999) % 86400000;
            if (k == T_TIME0) c->i -= c->i % 1000;
        } else {
            c->i = sign * ((int64_t)r * 86400123 + 7);
            c->nanos = k == T_LTZ7 ? (r * 987651) % 1000000 / 100 * 100 : 0;
            if (k == T_TS0) c->i -= ((c->i % 1000) + 1000) % 1000;
        }
    }
}

static const fl_schema_t *sample_schemas(void *ctx, int16_t id) {
    const fl_schema_t *s = ctx;
    return id == 1 ? &s[0] : id == 2 ? &s[1] : NULL;
}

static void test_paths_agree_times(void **state) {
    static const char *const names[T_NCOL] = {"ts0", "ts3", "ltz3", "ltz7", "t0", "t6", "t9"};
    static const char *const types[T_NCOL] = {"TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)",
                                              "TIMESTAMP_LTZ(7)", "TIME(0)", "TIME(6)", "TIME(9)"};
    fl_schema_t s;
    schema_of_types(&s, names, types, T_NCOL);
    fl_buf_t buf;
    fl_buf_init(&buf);
    for (int b = 0; b < 3; b++)
        build_batch(&buf, FL_LOG_FORMAT_ARROW, &s, 1, time_row, b * 50, 50, NULL, b * 50, 100 + b);
    fl_tier_writer_options_t o;
    options(&o, *state, &s, FL_LOG_FORMAT_ARROW);
    assert_int_equal(compare_paths(&o, &buf), 0);
    fl_buf_free(&buf);
    fl_schema_free(&s);
}

/* Batches of an older schema (the first 9 columns) then the current one:
 * the columns added since are NULL in both paths, the field ids the
 * lake's. */
static void test_paths_agree_evolution(void **state) {
    fl_schema_t s[2];
    schema_of_types(&s[0], NAMES, TYPES, 9);
    sample_schema(&s[1]);
    fl_buf_t buf;
    fl_buf_init(&buf);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s[0], 1, sample_row, 0, 30, NULL, 0, 10);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s[1], 2, sample_row, 30, 30, NULL, 30, 20);
    build_batch(&buf, FL_LOG_FORMAT_ARROW, &s[0], 1, sample_row, 60, 30, NULL, 60, 30);
    fl_tier_writer_options_t o;
    options(&o, *state, &s[1], FL_LOG_FORMAT_ARROW);
    o.schema_id = 2;
    o.schema_of = sample_schemas;
    o.schema_ctx = s;
    int32_t ids[NCOL + 3];
    for (int k = 0; k < NCOL + 3; k++) ids[k] = k < 9 ? k + 1 : k < NCOL ? k + 4 : k - NCOL + 10;
    o.field_ids = ids;
    assert_int_equal(compare_paths(&o, &buf), 0);
    fl_buf_free(&buf);
    fl_schema_free(&s[0]);
    fl_schema_free(&s[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arrow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_indexed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compacted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arrow_magic1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compacted_magic2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parquet_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evolution_arrow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evolution_compacted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rolling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog_arrow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog_indexed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_in_required, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths_agree_times, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paths_agree_evolution, setup, teardown),
        cmocka_unit_test(test_metrics_truncation),
        cmocka_unit_test(test_metrics_string_carry),
        cmocka_unit_test(test_metrics_string_order),
        cmocka_unit_test(test_metrics_floats),
        cmocka_unit_test(test_decimal_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
