/*
 * test_lake_parquet.c — our Parquet writer and reader (src/lake): every
 * column type REQUIRED and OPTIONAL with nulls, both codecs, dictionary
 * chunks and the PLAIN fallback, several row groups and pages, written to
 * memory and to a file and read back equal; the footer (schema with field
 * ids and logical types, encodings, statistics: unsigned byte order for
 * strings, no NaN, -0.0 as a zero min); the reader refusing a damaged
 * file (every truncation, flipped bytes) with an error, never a crash.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_tmpdir.h"

#include "common_fs.h"
#include "lake_parquet_reader.h"
#include "lake_parquet_writer.h"

enum { NCOLS = 9 };

static const fl_pq_column_spec_t SPECS[NCOLS] = {
    {"b", 1, FL_PQ_BOOLEAN, true, {0}, 0},
    {"i", 2, FL_PQ_INT32, false, {0}, 0},
    {"l", 3, FL_PQ_INT64, true, {0}, 0},
    {"f", 4, FL_PQ_FLOAT, true, {0}, 0},
    {"d", 5, FL_PQ_DOUBLE, false, {0}, 0},
    {"s", 6, FL_PQ_BYTE_ARRAY, true, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
    {"day", 7, FL_PQ_INT32, true, {FL_PQ_LT_DATE, 0, 0, false, 0}, 0},
    {"ts", 8, FL_PQ_INT64, true, {FL_PQ_LT_TIMESTAMP, 0, 0, true, FL_PQ_UNIT_MICROS}, 0},
    {"dec", 9, FL_PQ_INT64, false, {FL_PQ_LT_DECIMAL, 2, 12, false, 0}, 0},
};

/* Row r's values; few distinct strings (dictionary) unless `wide`. */
typedef struct rows {
    size_t n;
    uint8_t *valid[NCOLS];
    uint8_t *b;
    int32_t *i, *day;
    int64_t *l, *ts, *dec;
    float *f;
    double *d;
    fl_pq_bytes_t *s;
    char (*sbuf)[32];
} rows_t;

static void make_rows(rows_t *t, size_t n, size_t base, bool wide) {
    memset(t, 0, sizeof(*t));
    t->n = n;
    for (int c = 0; c < NCOLS; c++) {
        t->valid[c] = malloc(n);
        for (size_t r = 0; r < n; r++) t->valid[c][r] = !SPECS[c].optional || (r + base + c) % 5;
    }
    t->b = malloc(n);
    t->i = malloc(n * 4);
    t->day = malloc(n * 4);
    t->l = malloc(n * 8);
    t->ts = malloc(n * 8);
    t->dec = malloc(n * 8);
    t->f = malloc(n * 4);
    t->d = malloc(n * 8);
    t->s = malloc(n * sizeof(fl_pq_bytes_t));
    t->sbuf = malloc(n * 32);
    for (size_t k = 0; k < n; k++) {
        size_t r = k + base;
        t->b[k] = r % 3 == 0;
        t->i[k] = (int32_t)(r * 7) - 1000;
        t->day[k] = (int32_t)(19000 + r % 4);
        t->l[k] = (int64_t)r * 1000000007LL - (1LL << 40);
        t->ts[k] = 1700000000000000LL + (int64_t)r;
        t->dec[k] = (int64_t)r * 101 - 5000;
        t->f[k] = r % 11 == 3 ? NAN : (float)r / 4.0f - 10.0f;
        t->d[k] = -(double)r / 3.0;
        if (wide)
            snprintf(t->sbuf[k], 32, "value-%zu", r);
        else
            snprintf(t->sbuf[k], 32, "%s", r % 3 == 0 ? "apple" : r % 3 == 1 ? "\xc3\xa9t\xc3\xa9" : "");
        t->s[k].p = (const uint8_t *)t->sbuf[k];
        t->s[k].len = (uint32_t)strlen(t->sbuf[k]);
    }
}

static void free_rows(rows_t *t) {
    for (int c = 0; c < NCOLS; c++) free(t->valid[c]);
    free(t->b), free(t->i), free(t->day), free(t->l), free(t->ts), free(t->dec), free(t->f);
    free(t->d), free(t->s), free(t->sbuf);
}

static void columns_of(const rows_t *t, fl_pq_column_data_t *cd) {
    const void *v[NCOLS] = {t->b, t->i, t->l, t->f, t->d, t->s, t->day, t->ts, t->dec};
    for (int c = 0; c < NCOLS; c++) {
        cd[c].valid = SPECS[c].optional ? t->valid[c] : NULL;
        cd[c].values = v[c];
    }
}

/* Checks the reader's column c (rows from `at` of t) against t. */
static void check_column(const fl_pq_values_t *v, const rows_t *t, size_t at, int c) {
    for (size_t k = 0; k < v->rows; k++) {
        size_t r = at + k;
        assert_int_equal(v->valid[k], t->valid[c][r] ? 1 : 0);
        if (!v->valid[k]) continue;
        switch (c) {
        case 0: assert_int_equal(((uint8_t *)v->values)[k], t->b[r]); break;
        case 1: assert_int_equal(((int32_t *)v->values)[k], t->i[r]); break;
        case 2: assert_true(((int64_t *)v->values)[k] == t->l[r]); break;
        case 3: assert_memory_equal(&((float *)v->values)[k], &t->f[r], 4); break;
        case 4: assert_memory_equal(&((double *)v->values)[k], &t->d[r], 8); break;
        case 5:
            assert_int_equal(v->offsets[k + 1] - v->offsets[k], t->s[r].len);
            assert_memory_equal(v->bytes + v->offsets[k], t->s[r].p, t->s[r].len);
            break;
        case 6: assert_int_equal(((int32_t *)v->values)[k], t->day[r]); break;
        case 7: assert_true(((int64_t *)v->values)[k] == t->ts[r]); break;
        case 8: assert_true(((int64_t *)v->values)[k] == t->dec[r]); break;
        }
    }
}

static bool has_encoding(const fl_pq_column_meta_t *m, int32_t e) {
    for (size_t i = 0; i < m->n_encodings; i++)
        if (m->encodings[i] == e) return true;
    return false;
}

/* Writes t in appends of `step` rows, reads it back, checks values. */
static fl_pq_reader_t *round_trip(const rows_t *t, const fl_pq_writer_options_t *o,
                                  size_t step, fl_buf_t *file) {
    fl_pq_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_pq_writer_open(NULL, SPECS, NCOLS, o, &w, &err), 0);
    fl_pq_column_data_t cd[NCOLS];
    for (size_t at = 0; at < t->n; at += step) {
        size_t n = t->n - at < step ? t->n - at : step;
        columns_of(t, cd);
        for (int c = 0; c < NCOLS; c++) {
            if (cd[c].valid) cd[c].valid += at;
            size_t width = c == 0 ? 1 : c == 5 ? sizeof(fl_pq_bytes_t) : (c == 1 || c == 3 || c == 6) ? 4 : 8;
            cd[c].values = (const uint8_t *)cd[c].values + at * width;
        }
        assert_int_equal(fl_pq_writer_append(w, cd, n, &err), 0);
    }
    assert_int_equal(fl_pq_writer_finish(w, &err), 0);
    fl_buf_init(file);
    fl_buf_append(file, fl_pq_writer_bytes(w)->data, fl_pq_writer_bytes(w)->len);
    assert_int_equal(fl_pq_writer_position(w), file->len);
    fl_pq_writer_destroy(w);
    fl_pq_reader_t *r;
    if (fl_pq_reader_open(file->data, file->len, &r, &err)) fail_msg("open: %s", err.msg);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    assert_int_equal(m->num_rows, t->n);
    size_t at = 0;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        for (int c = 0; c < NCOLS; c++) {
            fl_pq_values_t v;
            if (fl_pq_reader_read_column(r, g, (size_t)c, &v, &err))
                fail_msg("group %zu column %d: %s", g, c, err.msg);
            assert_int_equal(v.rows, m->row_groups[g].num_rows);
            check_column(&v, t, at, c);
            fl_pq_values_free(&v);
        }
        at += (size_t)m->row_groups[g].num_rows;
    }
    assert_int_equal(at, t->n);
    return r;
}

static void test_round_trip_codecs(void **state) {
    (void)state;
    rows_t t;
    make_rows(&t, 3000, 0, false);
    static const int32_t codecs[4] = {FL_PQ_CODEC_UNCOMPRESSED, FL_PQ_CODEC_ZSTD,
                                      FL_PQ_CODEC_SNAPPY, FL_PQ_CODEC_GZIP};
    for (int codec = 0; codec < 4; codec++) {
        fl_pq_writer_options_t o;
        fl_pq_writer_options_init(&o);
        o.codec = codecs[codec];
        o.page_rows_max = 700; /* several pages per chunk */
        o.row_group_bytes_max = 40000; /* several row groups */
        fl_buf_t file;
        fl_pq_reader_t *r = round_trip(&t, &o, 250, &file);
        const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
        assert_true(m->n_row_groups > 1);
        assert_non_null(strstr(m->created_by, "fluss-c version " FL_LAKE_VERSION " (build "));
        assert_int_equal(m->n_column_orders, NCOLS);
        const fl_pq_column_meta_t *s = &m->row_groups[0].columns[5].meta;
        assert_int_equal(s->codec, o.codec);
        static const char *const names[4] = {"uncompressed", "ZSTD", "Snappy", "gzip"};
        assert_int_equal(fl_pq_codec_of_name(names[codec]), o.codec);
        assert_true(has_encoding(s, FL_PQ_ENC_RLE_DICTIONARY));
        assert_true(has_encoding(s, FL_PQ_ENC_PLAIN) && has_encoding(s, FL_PQ_ENC_RLE));
        assert_true(s->has_dictionary_page_offset);
        assert_true(s->dictionary_page_offset < s->data_page_offset);
        /* BOOLEAN never takes a dictionary */
        assert_false(has_encoding(&m->row_groups[0].columns[0].meta, FL_PQ_ENC_RLE_DICTIONARY));
        /* schema: field ids and logical types */
        for (int c = 0; c < NCOLS; c++) {
            const fl_pq_schema_element_t *e = fl_pq_reader_column(r, (size_t)c);
            assert_string_equal(e->name, SPECS[c].name);
            assert_true(e->has_field_id);
            assert_int_equal(e->field_id, SPECS[c].field_id);
            assert_int_equal(e->logical.kind, SPECS[c].logical.kind);
            assert_int_equal(e->repetition, SPECS[c].optional ? FL_PQ_OPTIONAL : FL_PQ_REQUIRED);
        }
        const fl_pq_schema_element_t *ts = fl_pq_reader_column(r, 7);
        assert_true(ts->logical.utc);
        assert_int_equal(ts->logical.unit, FL_PQ_UNIT_MICROS);
        assert_int_equal(ts->converted_type, FL_PQ_CT_TIMESTAMP_MICROS);
        const fl_pq_schema_element_t *dec = fl_pq_reader_column(r, 8);
        assert_int_equal(dec->logical.precision, 12);
        assert_int_equal(dec->logical.scale, 2);
        assert_int_equal(dec->converted_type, FL_PQ_CT_DECIMAL);
        fl_pq_reader_destroy(r);
        fl_buf_free(&file);
    }
    free_rows(&t);
}

static void test_dictionary_fallback(void **state) {
    (void)state;
    rows_t t;
    make_rows(&t, 2000, 0, true);
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.dictionary_bytes_max = 4000; /* wide strings overflow it; dates do not */
    fl_buf_t file;
    fl_pq_reader_t *r = round_trip(&t, &o, 2000, &file);
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    assert_int_equal(m->n_row_groups, 1);
    const fl_pq_column_meta_t *s = &m->row_groups[0].columns[5].meta;
    assert_false(s->has_dictionary_page_offset);
    assert_false(has_encoding(s, FL_PQ_ENC_RLE_DICTIONARY));
    assert_true(has_encoding(s, FL_PQ_ENC_PLAIN));
    const fl_pq_column_meta_t *day = &m->row_groups[0].columns[6].meta;
    assert_true(has_encoding(day, FL_PQ_ENC_RLE_DICTIONARY));
    fl_pq_reader_destroy(r);
    fl_buf_free(&file);
    /* no dictionary at all */
    o.dictionary_bytes_max = 0;
    r = round_trip(&t, &o, 333, &file);
    for (int c = 0; c < NCOLS; c++)
        assert_false(has_encoding(&fl_pq_reader_meta(r)->row_groups[0].columns[c].meta,
                                  FL_PQ_ENC_RLE_DICTIONARY));
    fl_pq_reader_destroy(r);
    fl_buf_free(&file);
    free_rows(&t);
}

static void test_statistics(void **state) {
    (void)state;
    const fl_pq_column_spec_t specs[3] = {
        {"s", 1, FL_PQ_BYTE_ARRAY, true, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
        {"d", 2, FL_PQ_DOUBLE, true, {0}, 0},
        {"n", 3, FL_PQ_INT32, true, {0}, 0},
    };
    /* "\xff" sorts after "b" as unsigned bytes (signed char would put it
     * first); "" is the min, and the first value (an empty min buffer) */
    fl_pq_bytes_t s[5] = {{(const uint8_t *)"", 0}, {(const uint8_t *)"b", 1},
                          {(const uint8_t *)"\xff", 1}, {(const uint8_t *)"ab", 2},
                          {(const uint8_t *)"", 0}};
    double d[5] = {NAN, 0.0, 2.5, -0.0, 1.0};
    int32_t n[5] = {0};
    uint8_t valid_s[5] = {1, 1, 1, 0, 1}, valid_n[5] = {0, 0, 0, 0, 0};
    fl_pq_column_data_t cd[3] = {{valid_s, s}, {NULL, d}, {valid_n, n}};
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    fl_pq_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_pq_writer_open(NULL, specs, 3, &o, &w, &err), 0);
    assert_int_equal(fl_pq_writer_append(w, cd, 5, &err), 0);
    assert_int_equal(fl_pq_writer_finish(w, &err), 0);
    fl_pq_reader_t *r;
    const fl_buf_t *b = fl_pq_writer_bytes(w);
    assert_int_equal(fl_pq_reader_open(b->data, b->len, &r, &err), 0);
    const fl_pq_row_group_t *g = &fl_pq_reader_meta(r)->row_groups[0];
    const fl_pq_stats_t *ss = &g->columns[0].meta.stats;
    assert_true(ss->has_null_count && ss->null_count == 1);
    assert_int_equal(ss->min_len, 0); /* the empty string */
    assert_int_equal(ss->max_len, 1);
    assert_int_equal(ss->max[0], 0xff);
    const fl_pq_stats_t *ds = &g->columns[1].meta.stats;
    double mn, mx;
    assert_true(ds->has_min && ds->has_max && ds->min_len == 8);
    memcpy(&mn, ds->min, 8);
    memcpy(&mx, ds->max, 8);
    assert_true(mn == 0.0 && signbit(mn)); /* a zero min is -0.0 */
    assert_true(mx == 2.5);
    assert_int_equal(ds->null_count, 0);
    const fl_pq_stats_t *ns = &g->columns[2].meta.stats;
    assert_int_equal(ns->null_count, 5);
    assert_false(ns->has_min || ns->has_max); /* all null: no bounds */
    fl_pq_reader_destroy(r);
    fl_pq_writer_destroy(w);
}

static void test_file_and_bad_input(void **state) {
    char path[512];
    snprintf(path, sizeof(path), "%s/t.parquet", (const char *)*state);
    rows_t t;
    make_rows(&t, 500, 7, false);
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.page_rows_max = 100;
    fl_pq_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_pq_writer_open(path, SPECS, NCOLS, &o, &w, &err), 0);
    fl_pq_column_data_t cd[NCOLS];
    columns_of(&t, cd);
    /* a null in a required column: refused, nothing appended */
    uint8_t *zero = calloc(t.n, 1);
    const uint8_t *keep = cd[1].valid;
    cd[1].valid = zero;
    assert_int_equal(fl_pq_writer_append(w, cd, t.n, &err), FLUSS_ERR__INVALID_ARG);
    cd[1].valid = keep;
    free(zero);
    assert_int_equal(fl_pq_writer_append(w, cd, t.n, &err), 0);
    assert_int_equal(fl_pq_writer_finish(w, &err), 0);
    uint64_t size = fl_pq_writer_position(w);
    fl_pq_writer_destroy(w);
    fl_pq_reader_t *r;
    if (fl_pq_reader_open_file(path, 1 << 20, &r, &err)) fail_msg("%s", err.msg);
    assert_int_equal(fl_pq_reader_meta(r)->num_rows, 500);
    fl_pq_values_t v;
    assert_int_equal(fl_pq_reader_read_column(r, 0, 5, &v, &err), 0);
    check_column(&v, &t, 0, 5);
    fl_pq_values_free(&v);
    assert_int_equal(fl_pq_reader_read_column(r, 1, 0, &v, &err), FLUSS_ERR__INVALID_ARG);
    fl_pq_reader_destroy(r);
    /* bad specs */
    fl_pq_column_spec_t bad = {"x", 1, FL_PQ_INT32, false, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0};
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    bad.logical = (fl_pq_logical_t){FL_PQ_LT_DECIMAL, 2, 10, false, 0};
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    /* every truncation and a sweep of flipped bytes */
    fl_buf_t file;
    fl_buf_init(&file);
    assert_int_equal(fl_fs_read_all(path, 1 << 20, &file, NULL, &err), 0);
    assert_int_equal(file.len, size);
    for (size_t n = 0; n < file.len; n += 1 + n / 64) {
        if (fl_pq_reader_open(file.data, n, &r, &err) == 0) fl_pq_reader_destroy(r);
    }
    uint8_t *copy = malloc(file.len);
    srand(11);
    for (int k = 0; k < 3000; k++) {
        memcpy(copy, file.data, file.len);
        for (int f = 0; f < 1 + k % 4; f++) copy[(size_t)rand() % file.len] ^= (uint8_t)(1 + rand() % 255);
        if (fl_pq_reader_open(copy, file.len, &r, &err)) continue;
        const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
        for (size_t g = 0; g < m->n_row_groups; g++)
            for (size_t c = 0; c < fl_pq_reader_columns(r); c++)
                if (fl_pq_reader_read_column(r, g, c, &v, &err) == 0) fl_pq_values_free(&v);
        fl_pq_reader_destroy(r);
    }
    free(copy);
    fl_buf_free(&file);
    free_rows(&t);
}

/* 16 bytes of v, big-endian two's complement. */
static void dec_be(__int128 v, uint8_t *out, size_t n) {
    for (size_t k = 0; k < n; k++) out[n - 1 - k] = (uint8_t)((unsigned __int128)v >> (8 * k));
}

static __int128 dec_of(const uint8_t *p, size_t n) {
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t k = 0; k < n; k++) u = u << 8 | p[k];
    return (__int128)u;
}

/* DECIMAL(38) in FIXED_LEN_BYTE_ARRAY(16): PLAIN and dictionary pages,
 * nulls, and statistics ordered as signed numbers (a negative value's
 * first byte is the greater unsigned one). */
static void test_fixed_len_decimal(void **state) {
    (void)state;
    fl_pq_column_spec_t spec = {"d", 1, FL_PQ_FLBA, true, {FL_PQ_LT_DECIMAL, 6, 38, false, 0}, 16};
    enum { N = 700 };
    __int128 want[N];
    uint8_t valid[N], vals[N * 16];
    for (int i = 0; i < N; i++) {
        __int128 big = (__int128)1 << 100;
        want[i] = i % 3 == 0 ? -(big + i) : i % 3 == 1 ? big * 50 + i : (__int128)-300 + i;
        valid[i] = i % 7 != 3;
        dec_be(want[i], vals + i * 16, 16);
    }
    for (int dict = 0; dict < 2; dict++) {
        fl_pq_writer_options_t o;
        fl_pq_writer_options_init(&o);
        o.page_rows_max = 128;
        o.dictionary_bytes_max = dict ? 1u << 20 : 0;
        fl_pq_writer_t *w;
        fl_error_t err;
        if (fl_pq_writer_open(NULL, &spec, 1, &o, &w, &err)) fail_msg("%s", err.msg);
        fl_pq_column_data_t cd = {valid, vals};
        assert_int_equal(fl_pq_writer_append(w, &cd, N, &err), 0);
        assert_int_equal(fl_pq_writer_finish(w, &err), 0);
        const fl_buf_t *file = fl_pq_writer_bytes(w);
        fl_pq_reader_t *r;
        if (fl_pq_reader_open(file->data, file->len, &r, &err)) fail_msg("%s", err.msg);
        const fl_pq_schema_element_t *e = fl_pq_reader_column(r, 0);
        assert_int_equal(e->type, FL_PQ_FLBA);
        assert_int_equal(e->type_length, 16);
        assert_int_equal(e->logical.kind, FL_PQ_LT_DECIMAL);
        assert_int_equal(e->logical.precision, 38);
        assert_int_equal(e->logical.scale, 6);
        const fl_pq_column_meta_t *m = &fl_pq_reader_meta(r)->row_groups[0].columns[0].meta;
        bool has_dict = false;
        for (size_t k = 0; k < m->n_encodings; k++)
            has_dict |= m->encodings[k] == FL_PQ_ENC_RLE_DICTIONARY;
        assert_int_equal(has_dict, dict);
        /* least: -(2^100 + i) for the greatest valid i % 3 == 0; greatest:
         * 50 * 2^100 + the greatest valid i % 3 == 1 */
        __int128 lo = 0, hi = 0;
        bool any = false;
        for (int i = 0; i < N; i++) {
            if (!valid[i]) continue;
            if (!any || want[i] < lo) lo = want[i];
            if (!any || want[i] > hi) hi = want[i];
            any = true;
        }
        assert_true(m->stats.has_min && m->stats.has_max);
        assert_int_equal(m->stats.min_len, 16);
        assert_true(dec_of(m->stats.min, 16) == lo);
        assert_true(dec_of(m->stats.max, 16) == hi);
        fl_pq_values_t v;
        assert_int_equal(fl_pq_reader_read_column(r, 0, 0, &v, &err), 0);
        assert_int_equal(v.rows, N);
        assert_int_equal(v.width, 16);
        for (int i = 0; i < N; i++) {
            assert_int_equal(v.valid[i], valid[i]);
            if (valid[i] && dec_of((uint8_t *)v.values + i * 16, 16) != want[i])
                fail_msg("row %d differs (dictionary %d)", i, dict);
        }
        fl_pq_values_free(&v);
        fl_pq_reader_destroy(r);
        fl_pq_writer_destroy(w);
    }
    /* lengths outside 1..16, or too short for the precision: refused */
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    fl_pq_writer_t *w;
    fl_error_t err;
    fl_pq_column_spec_t bad = spec;
    bad.type_length = 17;
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    bad.type_length = 0;
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    bad.type_length = 15; /* 38 digits need 16 bytes */
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_pq_codec_of_name("lz4"), -1);
    assert_int_equal(fl_pq_codec_of_name(NULL), -1);
    bad.logical.precision = 20, bad.type_length = 9; /* Iceberg's length for 19..21 */
    assert_int_equal(fl_pq_writer_open(NULL, &bad, 1, &o, &w, &err), 0);
    fl_pq_writer_destroy(w);
    assert_int_equal(fl_pq_decimal_bytes(18), 8);
    assert_int_equal(fl_pq_decimal_bytes(19), 9);
    assert_int_equal(fl_pq_decimal_bytes(21), 9);
    assert_int_equal(fl_pq_decimal_bytes(22), 10);
    assert_int_equal(fl_pq_decimal_bytes(38), 16);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_codecs),
        cmocka_unit_test(test_dictionary_fallback),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_fixed_len_decimal),
        cmocka_unit_test_setup_teardown(test_file_and_bad_input, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
