/*
 * test_lake_parquet.c — our Parquet writer and reader (src/lake): every
 * column type REQUIRED and OPTIONAL with nulls, both codecs, dictionary
 * chunks and the PLAIN fallback, several row groups and pages, written to
 * memory and to a file and read back equal; the footer (schema with field
 * ids and logical types, encodings, statistics: unsigned byte order for
 * strings, no NaN, -0.0 as a zero min); the reader refusing a damaged
 * file (every truncation, flipped bytes) with an error, never a crash.
 * Nested schemas (a LIST of structs, a MAP): levels and values back as
 * written over pages and row groups, every codec, dictionary or not; the
 * footer's groups, annotations, paths and the reader's tree queries; bad
 * levels and trees refused by the writer; malformed trees, level counts,
 * row counts and levels over their max refused by the reader.
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
#include "lake_rle.h"

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
    memset(cd, 0, NCOLS * sizeof(*cd));
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
    fl_pq_column_data_t cd[3] = {{.valid = valid_s, .values = s}, {.values = d},
                                 {.valid = valid_n, .values = n}};
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
        fl_pq_column_data_t cd = {.valid = valid, .values = vals};
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

/* ---- nested schemas ----
 *   a INT32 required                                        column 0
 *   b OPTIONAL LIST<OPTIONAL struct{x INT32, y STRING}>      columns 1, 2
 *   c OPTIONAL MAP<STRING required, INT64 optional>          columns 3, 4
 * with Iceberg's layout and field ids (the list and key_value groups have
 * none). Row r: b null when r % 7 == 0, else r % 4 elements (0: empty),
 * element k null when (r + k) % 5 == 0, x null when (r + k) % 3 == 0, y
 * when (r + k) % 4 == 1; c null when r % 6 == 1, else r % 3 entries
 * "k<k>" -> null when (r + k) % 4 == 0, else r * 1000 + k. */
enum { NR = 2000, NCOL_NESTED = 5, NE = 4 * NR };

static const fl_pq_node_t NESTED[] = {
    {"a", 1, FL_PQ_REQUIRED, 0, 0, FL_PQ_INT32, {0}, 0},
    {"b", 2, FL_PQ_OPTIONAL, 1, FL_PQ_GROUP_LIST, 0, {0}, 0},
    {"list", -1, FL_PQ_REPEATED, 1, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"element", 3, FL_PQ_OPTIONAL, 2, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"x", 4, FL_PQ_OPTIONAL, 0, 0, FL_PQ_INT32, {0}, 0},
    {"y", 5, FL_PQ_OPTIONAL, 0, 0, FL_PQ_BYTE_ARRAY, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
    {"c", 6, FL_PQ_OPTIONAL, 1, FL_PQ_GROUP_MAP, 0, {0}, 0},
    {"key_value", -1, FL_PQ_REPEATED, 2, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"key", 7, FL_PQ_REQUIRED, 0, 0, FL_PQ_BYTE_ARRAY, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
    {"value", 8, FL_PQ_OPTIONAL, 0, 0, FL_PQ_INT64, {0}, 0},
};
#define N_NESTED (sizeof(NESTED) / sizeof(NESTED[0]))
static const int NESTED_DEF[NCOL_NESTED] = {0, 4, 4, 2, 3};
static const int NESTED_REP[NCOL_NESTED] = {0, 1, 1, 1, 1};

typedef struct nested {
    int32_t a[NR];
    size_t n[NCOL_NESTED]; /* entries of columns 1..4 */
    size_t start[NCOL_NESTED][NR + 1]; /* first entry of each row */
    uint8_t def[NCOL_NESTED][NE], rep[NCOL_NESTED][NE];
    int32_t x[NE];
    int64_t val[NE];
    fl_pq_bytes_t y[NE], key[NE];
    char ybuf[NE][8], kbuf[NE][8];
} nested_t;

static size_t put(nested_t *t, int c, int rep, int def) {
    size_t i = t->n[c]++;
    assert_true(i < NE);
    t->rep[c][i] = (uint8_t)rep;
    t->def[c][i] = (uint8_t)def;
    return i;
}

static nested_t *make_nested(void) {
    nested_t *t = calloc(1, sizeof(*t));
    for (int r = 0; r < NR; r++) {
        t->a[r] = r * 3 - 100;
        for (int c = 1; c < NCOL_NESTED; c++) t->start[c][r] = t->n[c];
        if (r % 7 == 0) {
            put(t, 1, 0, 0), put(t, 2, 0, 0);
        } else if (r % 4 == 0) {
            put(t, 1, 0, 1), put(t, 2, 0, 1);
        }
        for (int k = 0; r % 7 && k < r % 4; k++) {
            int rp = k ? 1 : 0;
            if ((r + k) % 5 == 0) {
                put(t, 1, rp, 2), put(t, 2, rp, 2);
                continue;
            }
            if ((r + k) % 3 == 0) {
                put(t, 1, rp, 3);
            } else {
                t->x[put(t, 1, rp, 4)] = r * 10 + k;
            }
            if ((r + k) % 4 == 1) {
                put(t, 2, rp, 3);
            } else {
                size_t i = put(t, 2, rp, 4);
                snprintf(t->ybuf[i], 8, "s%d", (r * 7 + k) % 13);
                t->y[i] = (fl_pq_bytes_t){(const uint8_t *)t->ybuf[i], (uint32_t)strlen(t->ybuf[i])};
            }
        }
        if (r % 6 == 1) {
            put(t, 3, 0, 0), put(t, 4, 0, 0);
        } else if (r % 3 == 0) {
            put(t, 3, 0, 1), put(t, 4, 0, 1);
        }
        for (int k = 0; r % 6 != 1 && k < r % 3; k++) {
            int rp = k ? 1 : 0;
            size_t i = put(t, 3, rp, 2);
            snprintf(t->kbuf[i], 8, "k%d", k);
            t->key[i] = (fl_pq_bytes_t){(const uint8_t *)t->kbuf[i], (uint32_t)strlen(t->kbuf[i])};
            if ((r + k) % 4 == 0)
                put(t, 4, rp, 2);
            else
                t->val[put(t, 4, rp, 3)] = r * 1000 + k;
        }
    }
    for (int c = 1; c < NCOL_NESTED; c++) t->start[c][NR] = t->n[c];
    for (int r = 0; r <= NR; r++) t->start[0][r] = (size_t)r;
    return t;
}

/* Rows [at, at + rows) of t as an append's columns. */
static void nested_columns(const nested_t *t, size_t at, size_t rows, fl_pq_column_data_t *cd) {
    memset(cd, 0, NCOL_NESTED * sizeof(*cd));
    cd[0].values = t->a + at;
    const void *vals[NCOL_NESTED] = {NULL, t->x, t->y, t->key, t->val};
    const size_t width[NCOL_NESTED] = {0, 4, sizeof(fl_pq_bytes_t), sizeof(fl_pq_bytes_t), 8};
    for (int c = 1; c < NCOL_NESTED; c++) {
        size_t e0 = t->start[c][at];
        cd[c].def = t->def[c] + e0;
        cd[c].rep = t->rep[c] + e0;
        cd[c].levels = t->start[c][at + rows] - e0;
        cd[c].values = (const uint8_t *)vals[c] + e0 * width[c];
    }
}

static fl_pq_writer_t *write_nested(const nested_t *t, const fl_pq_writer_options_t *o,
                                    size_t step) {
    fl_pq_writer_t *w;
    fl_error_t err;
    if (fl_pq_writer_open_tree(NULL, NESTED, N_NESTED, o, &w, &err)) fail_msg("%s", err.msg);
    for (int c = 0; c < NCOL_NESTED; c++) {
        int d, r;
        fl_pq_writer_levels(w, (size_t)c, &d, &r);
        assert_int_equal(d, NESTED_DEF[c]);
        assert_int_equal(r, NESTED_REP[c]);
    }
    for (size_t at = 0; at < NR; at += step) {
        size_t n = NR - at < step ? NR - at : step;
        fl_pq_column_data_t cd[NCOL_NESTED];
        nested_columns(t, at, n, cd);
        if (fl_pq_writer_append(w, cd, n, &err)) fail_msg("append at %zu: %s", at, err.msg);
    }
    assert_int_equal(fl_pq_writer_finish(w, &err), 0);
    return w;
}

/* Column c of group rows [at, ..) read back equals t: levels and values. */
static void check_nested_column(const fl_pq_values_t *v, const nested_t *t, size_t at, int c) {
    size_t e0 = t->start[c][at], n = t->start[c][at + v->rows] - e0;
    assert_int_equal(v->max_def, NESTED_DEF[c]);
    assert_int_equal(v->max_rep, NESTED_REP[c]);
    assert_int_equal(v->levels, n);
    if (c == 0) {
        assert_null(v->def);
        assert_null(v->rep);
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(v->valid[k], 1);
            assert_int_equal(((int32_t *)v->values)[k], t->a[at + k]);
        }
        return;
    }
    assert_non_null(v->def);
    assert_non_null(v->rep);
    for (size_t k = 0; k < n; k++) {
        size_t i = e0 + k;
        if (v->def[k] != t->def[c][i] || v->rep[k] != t->rep[c][i])
            fail_msg("column %d entry %zu: levels %u/%u, want %u/%u", c, i, v->def[k], v->rep[k],
                     t->def[c][i], t->rep[c][i]);
        assert_int_equal(v->valid[k], t->def[c][i] == NESTED_DEF[c]);
        if (!v->valid[k]) continue;
        switch (c) {
        case 1: assert_int_equal(((int32_t *)v->values)[k], t->x[i]); break;
        case 4: assert_true(((int64_t *)v->values)[k] == t->val[i]); break;
        default: {
            const fl_pq_bytes_t *b = c == 2 ? &t->y[i] : &t->key[i];
            assert_int_equal(v->offsets[k + 1] - v->offsets[k], b->len);
            assert_memory_equal(v->bytes + v->offsets[k], b->p, b->len);
        }
        }
    }
}

/* Every data page of an uncompressed nested chunk starts a row: its
 * first repetition level is 0. */
static void check_pages_start_rows(const fl_buf_t *file, const fl_pq_column_meta_t *m) {
    size_t pos = (size_t)(m->has_dictionary_page_offset ? m->dictionary_page_offset
                                                        : m->data_page_offset);
    size_t end = pos + (size_t)m->total_compressed_size, pages = 0;
    while (pos < end) {
        fl_pq_page_header_t h;
        size_t used;
        fl_error_t err;
        assert_int_equal(fl_pq_page_header_decode(file->data + pos, end - pos, &h, &used, &err), 0);
        pos += used;
        if (h.type == FL_PQ_PAGE_DATA) {
            uint32_t first;
            assert_int_equal(fl_rle_decode(file->data + pos + 4, (size_t)h.compressed_page_size - 4,
                                           1, &first, 1, NULL, &err), 0);
            assert_int_equal(first, 0);
            pages++;
        }
        pos += (size_t)h.compressed_page_size;
    }
    assert_true(pages > 1);
}

static void test_nested_round_trip(void **state) {
    (void)state;
    nested_t *t = make_nested();
    static const int32_t codecs[4] = {FL_PQ_CODEC_UNCOMPRESSED, FL_PQ_CODEC_ZSTD,
                                      FL_PQ_CODEC_SNAPPY, FL_PQ_CODEC_GZIP};
    for (int run = 0; run < 8; run++) {
        fl_pq_writer_options_t o;
        fl_pq_writer_options_init(&o);
        o.codec = codecs[run % 4];
        o.dictionary_bytes_max = run < 4 ? 1u << 20 : 0;
        o.page_rows_max = 64;
        o.row_group_bytes_max = 24000;
        fl_pq_writer_t *w = write_nested(t, &o, run % 2 ? 97 : 500);
        const fl_buf_t *file = fl_pq_writer_bytes(w);
        fl_pq_reader_t *r;
        fl_error_t err;
        if (fl_pq_reader_open(file->data, file->len, &r, &err)) fail_msg("%s", err.msg);
        const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
        assert_int_equal(m->num_rows, NR);
        assert_true(m->n_row_groups > 1);
        assert_int_equal(fl_pq_reader_columns(r), NCOL_NESTED);
        assert_int_equal(m->n_schema, N_NESTED + 1);
        assert_int_equal(m->n_column_orders, NCOL_NESTED);
        /* schema: groups, annotations, field ids, the tree */
        const fl_pq_schema_element_t *b = &m->schema[2], *list = &m->schema[3], *c = &m->schema[7];
        assert_int_equal(m->schema[0].num_children, 3);
        assert_string_equal(b->name, "b");
        assert_true(b->type < 0 && b->num_children == 1);
        assert_int_equal(b->converted_type, FL_PQ_CT_LIST);
        assert_int_equal(b->logical.kind, FL_PQ_LT_LIST);
        assert_true(b->has_field_id && b->field_id == 2);
        assert_false(list->has_field_id);
        assert_int_equal(list->repetition, FL_PQ_REPEATED);
        assert_int_equal(c->converted_type, FL_PQ_CT_MAP);
        assert_int_equal(c->logical.kind, FL_PQ_LT_MAP);
        assert_int_equal(m->schema[8].converted_type, -1); /* key_value */
        assert_int_equal(fl_pq_reader_column_of(r, 4), 1);
        assert_int_equal(fl_pq_reader_column_of(r, 8), 4);
        assert_int_equal(fl_pq_reader_column_of(r, 2), -1); /* a group */
        assert_int_equal(fl_pq_reader_element_of(r, 2), 2);
        assert_int_equal(fl_pq_reader_element_of(r, 3), 4);
        assert_int_equal(fl_pq_reader_element_of(r, 99), -1);
        size_t first, n;
        fl_pq_reader_element_columns(r, 2, &first, &n);
        assert_true(first == 1 && n == 2);
        fl_pq_reader_element_columns(r, 7, &first, &n);
        assert_true(first == 3 && n == 2);
        fl_pq_reader_element_columns(r, 0, &first, &n);
        assert_true(first == 0 && n == NCOL_NESTED);
        assert_int_equal(fl_pq_reader_column_element(r, 2), 6);
        assert_int_equal(fl_pq_reader_parent(r, 6), 4);
        assert_int_equal(fl_pq_reader_parent(r, 4), 3);
        assert_int_equal(fl_pq_reader_parent(r, 2), 0);
        assert_int_equal(fl_pq_reader_parent(r, 1), 0);
        assert_string_equal(fl_pq_reader_column(r, 3)->name, "key");
        for (int k = 0; k < NCOL_NESTED; k++) {
            int d, rp;
            fl_pq_reader_column_levels(r, (size_t)k, &d, &rp);
            assert_true(d == NESTED_DEF[k] && rp == NESTED_REP[k]);
        }
        size_t at = 0;
        for (size_t g = 0; g < m->n_row_groups; g++) {
            const fl_pq_row_group_t *rg = &m->row_groups[g];
            /* path_in_schema, num_values = level entries, null_count */
            const fl_pq_column_meta_t *y = &rg->columns[2].meta;
            assert_int_equal(y->n_path, 4);
            assert_string_equal(y->path[0], "b");
            assert_string_equal(y->path[1], "list");
            assert_string_equal(y->path[2], "element");
            assert_string_equal(y->path[3], "y");
            assert_string_equal(rg->columns[3].meta.path[1], "key_value");
            for (int k = 0; k < NCOL_NESTED; k++) {
                const fl_pq_column_meta_t *cm = &rg->columns[k].meta;
                size_t e0 = t->start[k][at], e1 = t->start[k][at + (size_t)rg->num_rows];
                assert_int_equal(cm->num_values, e1 - e0);
                int64_t nulls = 0;
                for (size_t i = e0; k > 0 && i < e1; i++) nulls += t->def[k][i] < NESTED_DEF[k];
                assert_int_equal(cm->stats.null_count, nulls);
                if (k == 2) assert_int_equal(has_encoding(cm, FL_PQ_ENC_RLE_DICTIONARY), run < 4);
                if (o.codec == FL_PQ_CODEC_UNCOMPRESSED && k > 0 && g == 0)
                    check_pages_start_rows(file, cm);
                fl_pq_values_t v;
                if (fl_pq_reader_read_column(r, g, (size_t)k, &v, &err))
                    fail_msg("run %d group %zu column %d: %s", run, g, k, err.msg);
                assert_int_equal(v.rows, rg->num_rows);
                check_nested_column(&v, t, at, k);
                fl_pq_values_free(&v);
            }
            at += (size_t)rg->num_rows;
        }
        assert_int_equal(at, NR);
        /* key statistics: "k0" .. "k1" */
        const fl_pq_stats_t *ks = &m->row_groups[0].columns[3].meta.stats;
        assert_true(ks->has_min && ks->min_len == 2 && memcmp(ks->min, "k0", 2) == 0);
        assert_true(ks->has_max && ks->max_len == 2 && memcmp(ks->max, "k1", 2) == 0);
        fl_pq_reader_destroy(r);
        fl_pq_writer_destroy(w);
    }
    free(t);
}

static void test_nested_bad_input(void **state) {
    (void)state;
    nested_t *t = make_nested();
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    fl_pq_writer_t *w;
    fl_error_t err;
    assert_int_equal(fl_pq_writer_open_tree(NULL, NESTED, N_NESTED, &o, &w, &err), 0);
    fl_pq_column_data_t cd[NCOL_NESTED];
    uint8_t bad[64];
    /* def over max_def; rep over max_rep; a batch starting inside a row;
     * a continued list under an empty one; rows that do not add up; no
     * levels for a nested column or no rep levels: each refused, nothing kept */
    for (int k = 0; k < 7; k++) {
        nested_columns(t, 10, 20, cd);
        size_t levels = cd[1].levels;
        assert_true(levels < sizeof(bad));
        memcpy(bad, k == 1 ? cd[1].rep : cd[1].def, levels);
        switch (k) {
        case 0: bad[3] = 5, cd[1].def = bad; break;
        case 1: bad[3] = 2, cd[1].rep = bad; break;
        case 2: nested_columns(t, 10, 20, cd), cd[1].def++, cd[1].rep++, cd[1].levels--; break;
        case 3: nested_columns(t, 10, 19, cd); break; /* 19 rows of levels, 20 claimed */
        case 4: cd[3].def = NULL; break;
        case 5: cd[4].rep = NULL; break;
        case 6: /* rep 1 after a null list */
            memcpy(bad, cd[1].rep, levels);
            for (size_t i = 1; i < levels; i++)
                if (cd[1].def[i - 1] == 0 && bad[i] == 0) bad[i] = 1, i = levels;
            cd[1].rep = bad;
            break;
        }
        if (k == 2 && cd[1].rep[0] == 0) continue; /* row 10's first entry is its only one */
        int rc = fl_pq_writer_append(w, cd, 20, &err);
        if (rc != FLUSS_ERR__INVALID_ARG) fail_msg("case %d: %d", k, rc);
        assert_non_null(strstr(err.msg, "column"));
    }
    assert_int_equal(fl_pq_writer_buffered_bytes(w), 0);
    fl_pq_writer_destroy(w);
    /* malformed trees */
    fl_pq_node_t nodes[N_NESTED + 1];
    memcpy(nodes, NESTED, sizeof(NESTED));
    nodes[7].n_children = 3; /* past the end */
    assert_int_equal(fl_pq_writer_open_tree(NULL, nodes, N_NESTED, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    memcpy(nodes, NESTED, sizeof(NESTED));
    nodes[2].n_children = 0; /* the "list" group: no child, so a leaf, of no type */
    nodes[2].type = -1;
    assert_int_equal(fl_pq_writer_open_tree(NULL, nodes, N_NESTED, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    memcpy(nodes, NESTED, sizeof(NESTED));
    nodes[4].logical.kind = FL_PQ_LT_STRING; /* x INT32 as a string */
    assert_int_equal(fl_pq_writer_open_tree(NULL, nodes, N_NESTED, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    memcpy(nodes, NESTED, sizeof(NESTED));
    nodes[1].repetition = 3;
    assert_int_equal(fl_pq_writer_open_tree(NULL, nodes, N_NESTED, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    assert_int_equal(fl_pq_writer_open_tree(NULL, nodes, 0, &o, &w, &err), FLUSS_ERR__INVALID_ARG);
    /* 64 optional groups over an optional leaf: 65 levels; 65 required
     * ones: one group too deep; 63 optional: 64 levels, the most */
    fl_pq_node_t deep[66];
    for (int depth = 0; depth < 3; depth++) {
        int groups = depth == 0 ? 64 : depth == 1 ? 65 : 63;
        for (int i = 0; i < groups; i++)
            deep[i] = (fl_pq_node_t){"g", i, depth == 1 ? FL_PQ_REQUIRED : FL_PQ_OPTIONAL, 1, 0, 0, {0}, 0};
        deep[groups] = (fl_pq_node_t){"v", 99, FL_PQ_OPTIONAL, 0, 0, FL_PQ_INT64, {0}, 0};
        int rc = fl_pq_writer_open_tree(NULL, deep, (size_t)groups + 1, &o, &w, &err);
        assert_int_equal(rc, depth == 2 ? 0 : FLUSS_ERR__INVALID_ARG);
        if (rc == 0) {
            int d, r;
            fl_pq_writer_levels(w, 0, &d, &r);
            assert_true(d == FL_PQ_LEVEL_MAX && r == 0);
            fl_pq_writer_destroy(w);
        }
    }
    free(t);
}

/* file = data ++ m encoded ++ footer length ++ "PAR1" */
static void rebuild(const fl_buf_t *orig, const fl_pq_file_meta_t *m, fl_buf_t *out) {
    uint32_t flen = (uint32_t)orig->data[orig->len - 8] | (uint32_t)orig->data[orig->len - 7] << 8 |
                    (uint32_t)orig->data[orig->len - 6] << 16 | (uint32_t)orig->data[orig->len - 5] << 24;
    fl_buf_init(out);
    fl_buf_append(out, orig->data, orig->len - 8 - flen);
    size_t at = out->len;
    fl_pq_file_meta_encode(out, m);
    uint32_t n = (uint32_t)(out->len - at);
    uint8_t tail[8] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24), 'P', 'A', 'R', '1'};
    fl_buf_append(out, tail, 8);
}

/* Reads column c of group 0 of the file with m as its footer: the code. */
static int read_with(const fl_buf_t *orig, const fl_pq_file_meta_t *m, size_t c) {
    fl_buf_t f;
    rebuild(orig, m, &f);
    fl_pq_reader_t *r;
    fl_error_t err;
    int rc = fl_pq_reader_open(f.data, f.len, &r, &err);
    if (!rc) {
        fl_pq_values_t v;
        rc = fl_pq_reader_read_column(r, 0, c, &v, &err);
        if (!rc) fl_pq_values_free(&v);
        fl_pq_reader_destroy(r);
    }
    fl_buf_free(&f);
    return rc;
}

static void test_nested_corrupt(void **state) {
    (void)state;
    nested_t *t = make_nested();
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.codec = FL_PQ_CODEC_UNCOMPRESSED;
    o.dictionary_bytes_max = 0;
    o.page_rows_max = 100;
    fl_pq_writer_t *w = write_nested(t, &o, NR);
    const fl_buf_t *file = fl_pq_writer_bytes(w);
    fl_pq_file_meta_t m;
    fl_error_t err;
    uint32_t flen = (uint32_t)file->data[file->len - 8] | (uint32_t)file->data[file->len - 7] << 8 |
                    (uint32_t)file->data[file->len - 6] << 16 | (uint32_t)file->data[file->len - 5] << 24;
    assert_int_equal(fl_pq_file_meta_decode(file->data + file->len - 8 - flen, flen, &m, &err), 0);
    assert_int_equal(read_with(file, &m, 1), 0); /* unchanged: reads */
    /* trees: children past the end, a group without children, too deep */
    m.schema[8].num_children = 3; /* key_value */
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    m.schema[8].num_children = 1;
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT); /* "value" after the root's last */
    m.schema[8].num_children = 2;
    m.schema[0].num_children = 4;
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    m.schema[0].num_children = 3;
    m.schema[3].num_children = 0; /* "list" a group of none */
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    m.schema[3].num_children = 1;
    /* level entries: one more or one fewer than the pages hold */
    fl_pq_column_meta_t *x = &m.row_groups[0].columns[1].meta;
    x->num_values++;
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    x->num_values -= 2;
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    x->num_values++;
    /* a row more in the group than the levels start (x), and in the footer */
    m.row_groups[0].num_rows++;
    m.num_rows++;
    m.row_groups[0].columns[0].meta.num_values++;
    assert_int_equal(read_with(file, &m, 1), FLUSS_ERR__CORRUPT);
    assert_int_equal(read_with(file, &m, 4), FLUSS_ERR__CORRUPT);
    m.row_groups[0].num_rows--;
    m.num_rows--;
    m.row_groups[0].columns[0].meta.num_values--;
    assert_int_equal(read_with(file, &m, 1), 0);
    /* a def level over max_def (5 of 4, in x's first page's level width 3) */
    fl_buf_t f;
    rebuild(file, &m, &f);
    size_t pos = (size_t)x->data_page_offset, used;
    fl_pq_page_header_t h;
    assert_int_equal(fl_pq_page_header_decode(f.data + pos, f.len - pos, &h, &used, &err), 0);
    pos += used;
    uint32_t rep_len = (uint32_t)f.data[pos] | (uint32_t)f.data[pos + 1] << 8;
    uint8_t *def = f.data + pos + 4 + rep_len;
    uint32_t def_len = (uint32_t)def[0] | (uint32_t)def[1] << 8;
    /* one RLE run of 5s over the page's entries, in the block's bytes */
    uint32_t hdr = (uint32_t)h.data_num_values << 1;
    size_t q = 4;
    while (hdr >= 0x80) def[q++] = (uint8_t)(hdr | 0x80), hdr >>= 7;
    def[q++] = (uint8_t)hdr;
    def[q++] = 5;
    assert_true(q - 4 <= def_len);
    fl_pq_reader_t *r;
    assert_int_equal(fl_pq_reader_open(f.data, f.len, &r, &err), 0);
    fl_pq_values_t v;
    assert_int_equal(fl_pq_reader_read_column(r, 0, 1, &v, &err), FLUSS_ERR__CORRUPT);
    assert_non_null(strstr(err.msg, "over its max"));
    fl_pq_reader_destroy(r);
    /* flipped bytes anywhere: an error or values, never a crash */
    srand(5);
    uint8_t *copy = malloc(file->len);
    for (int k = 0; k < 2000; k++) {
        memcpy(copy, file->data, file->len);
        for (int n = 0; n < 1 + k % 3; n++) copy[(size_t)rand() % file->len] ^= (uint8_t)(1 + rand() % 255);
        if (fl_pq_reader_open(copy, file->len, &r, &err)) continue;
        for (size_t c = 0; c < fl_pq_reader_columns(r); c++)
            for (size_t g = 0; g < fl_pq_reader_meta(r)->n_row_groups; g++)
                if (fl_pq_reader_read_column(r, g, c, &v, &err) == 0) {
                    for (size_t i = 0; v.def && i < v.levels; i++) assert_true(v.def[i] <= v.max_def);
                    fl_pq_values_free(&v);
                }
        fl_pq_reader_destroy(r);
    }
    free(copy);
    fl_buf_free(&f);
    fl_pq_file_meta_free(&m);
    fl_pq_writer_destroy(w);
    free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_codecs),
        cmocka_unit_test(test_dictionary_fallback),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_fixed_len_decimal),
        cmocka_unit_test_setup_teardown(test_file_and_bad_input, setup, teardown),
        cmocka_unit_test(test_nested_round_trip),
        cmocka_unit_test(test_nested_bad_input),
        cmocka_unit_test(test_nested_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
