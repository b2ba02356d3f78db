/*
 * parquet_sample.c — a test helper for the Parquet interop test
 * (tests/lake/test_parquet_interop.py), built as lake_parquet_sample:
 *
 *   lake_parquet_sample write PATH none|zstd|snappy|gzip [ROWS]   writes the sample file: 2,500
 *       rows of every column type and logical type the writer supports,
 *       nulls, a dictionary chunk and a PLAIN fallback chunk per row group,
 *       several pages and row groups; values are the formulas in sample_row
 *       (the pytest computes the same ones)
 *   lake_parquet_sample write-nested PATH none|zstd|snappy|gzip dict|plain [ROWS]
 *       writes the nested sample (NESTED below: a list of structs, a map, a
 *       list of lists, a required struct), 2,500 rows by the formulas in
 *       nested_row (the pytest computes the same values), pages of 40 rows,
 *       several row groups, with or without dictionaries
 *   lake_parquet_sample read PATH    prints every column our reader gets
 *       back as one JSON line {"name", "path", "field_id", "max_def",
 *       "max_rep", "values"} and, for a column with levels (max_rep > 0 or
 *       max_def > 1), "def" and "rep" (rep [] when max_rep is 0) with a
 *       value slot per level entry: integers and booleans as numbers,
 *       floats as %.17g (NaN as "NaN"), byte arrays as hex strings, nulls
 *       (and entries below max_def) as null
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_parquet_reader.h"
#include "lake_parquet_writer.h"

#define ROWS 2500

enum { C_B, C_I, C_L, C_F, C_D, C_S, C_W, C_BIN, C_DAY, C_TS, C_TSL, C_TIME, C_DEC32, C_DEC64, NCOL };

static const fl_pq_column_spec_t SPECS[NCOL] = {
    [C_B] = {"b", 1, FL_PQ_BOOLEAN, true, {0}},
    [C_I] = {"i", 2, FL_PQ_INT32, false, {0}},
    [C_L] = {"l", 3, FL_PQ_INT64, true, {0}},
    [C_F] = {"f", 4, FL_PQ_FLOAT, true, {0}},
    [C_D] = {"d", 5, FL_PQ_DOUBLE, false, {0}},
    [C_S] = {"s", 6, FL_PQ_BYTE_ARRAY, true, {FL_PQ_LT_STRING, 0, 0, false, 0}},
    [C_W] = {"w", 7, FL_PQ_BYTE_ARRAY, false, {FL_PQ_LT_STRING, 0, 0, false, 0}},
    [C_BIN] = {"bin", 8, FL_PQ_BYTE_ARRAY, true, {0}},
    [C_DAY] = {"day", 9, FL_PQ_INT32, true, {FL_PQ_LT_DATE, 0, 0, false, 0}},
    [C_TS] = {"ts", 10, FL_PQ_INT64, true, {FL_PQ_LT_TIMESTAMP, 0, 0, true, FL_PQ_UNIT_MICROS}},
    [C_TSL] = {"tsl", 11, FL_PQ_INT64, false, {FL_PQ_LT_TIMESTAMP, 0, 0, false, FL_PQ_UNIT_MICROS}},
    [C_TIME] = {"t", 12, FL_PQ_INT64, true, {FL_PQ_LT_TIME, 0, 0, false, FL_PQ_UNIT_MICROS}},
    [C_DEC32] = {"dec32", 13, FL_PQ_INT32, true, {FL_PQ_LT_DECIMAL, 2, 9, false, 0}},
    [C_DEC64] = {"dec64", 14, FL_PQ_INT64, false, {FL_PQ_LT_DECIMAL, 4, 18, false, 0}},
};

static const char *WORDS[3] = {"apple", "\xc3\xa9t\xc3\xa9", ""};

typedef struct sample {
    uint8_t valid[NCOL][ROWS];
    uint8_t b[ROWS];
    int32_t i[ROWS], day[ROWS], dec32[ROWS];
    int64_t l[ROWS], ts[ROWS], tsl[ROWS], t[ROWS], dec64[ROWS];
    float f[ROWS];
    double d[ROWS];
    fl_pq_bytes_t s[ROWS], w[ROWS], bin[ROWS];
    char wbuf[ROWS][16];
    uint8_t binbuf[ROWS][3];
} sample_t;

static void sample_row(sample_t *x, int r) {
    for (int c = 0; c < NCOL; c++) x->valid[c][r] = 1;
    x->valid[C_B][r] = r % 5 != 1;
    x->valid[C_L][r] = r % 7 != 0;
    x->valid[C_F][r] = r % 6 != 2;
    x->valid[C_S][r] = r % 4 != 2;
    x->valid[C_BIN][r] = r % 9 != 4;
    x->valid[C_DAY][r] = r % 8 != 5;
    x->valid[C_TS][r] = r % 10 != 3;
    x->valid[C_TIME][r] = r % 11 != 7;
    x->valid[C_DEC32][r] = r % 12 != 1;
    x->b[r] = r % 3 == 0;
    x->i[r] = r * 7 - 1000;
    x->l[r] = (int64_t)r * 1000000007LL - (1LL << 40);
    x->f[r] = r % 13 == 5 ? NAN : (float)r / 4.0f - 10.0f;
    x->d[r] = (double)r / 8.0 - 3.5;
    x->s[r] = (fl_pq_bytes_t){(const uint8_t *)WORDS[r % 3], (uint32_t)strlen(WORDS[r % 3])};
    snprintf(x->wbuf[r], sizeof(x->wbuf[r]), "row-%d", r);
    x->w[r] = (fl_pq_bytes_t){(const uint8_t *)x->wbuf[r], (uint32_t)strlen(x->wbuf[r])};
    x->binbuf[r][0] = (uint8_t)r;
    x->binbuf[r][1] = 0xff;
    x->binbuf[r][2] = 0;
    x->bin[r] = (fl_pq_bytes_t){x->binbuf[r], (uint32_t)(r % 4)};
    x->day[r] = 19000 + r % 10;
    x->ts[r] = 1700000000000000LL + (int64_t)r * 1000;
    x->tsl[r] = -86400000000LL + (int64_t)r * 999;
    x->t[r] = ((int64_t)r * 1000003) % 86400000000LL;
    x->dec32[r] = r * 13 - 500;
    x->dec64[r] = (int64_t)r * 123456789LL - 1000000000000LL;
}

/* rows: a multiple of 100 up to ROWS (fewer for fuzz seeds) */
static int write_sample(const char *path, const char *codec, int rows) {
    sample_t *x = calloc(1, sizeof(*x));
    for (int r = 0; r < ROWS; r++) sample_row(x, r);
    const void *vals[NCOL] = {x->b, x->i, x->l, x->f, x->d, x->s, x->w, x->bin,
                              x->day, x->ts, x->tsl, x->t, x->dec32, x->dec64};
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.codec = strcmp(codec, "none") == 0 ? FL_PQ_CODEC_UNCOMPRESSED : fl_pq_codec_of_name(codec);
    if (o.codec < 0) {
        fprintf(stderr, "unknown codec %s\n", codec);
        free(x);
        return 1;
    }
    o.page_rows_max = 400;
    o.row_group_bytes_max = 60000;
    o.dictionary_bytes_max = 2000; /* "w" falls back to PLAIN, "s" keeps its dictionary */
    fl_pq_writer_t *w;
    fl_error_t err;
    if (fl_pq_writer_open(path, SPECS, NCOL, &o, &w, &err)) goto fail;
    for (int at = 0; at < rows; at += 100) {
        fl_pq_column_data_t cd[NCOL];
        memset(cd, 0, sizeof(cd));
        for (int c = 0; c < NCOL; c++) {
            size_t width = c == C_B ? 1
                           : (c == C_S || c == C_W || c == C_BIN) ? sizeof(fl_pq_bytes_t)
                           : (c == C_I || c == C_F || c == C_DAY || c == C_DEC32) ? 4 : 8;
            cd[c].valid = SPECS[c].optional ? x->valid[c] + at : NULL;
            cd[c].values = (const uint8_t *)vals[c] + (size_t)at * width;
        }
        if (fl_pq_writer_append(w, cd, (size_t)(rows - at < 100 ? rows - at : 100), &err))
            goto fail;
    }
    if (fl_pq_writer_finish(w, &err)) goto fail;
    fl_pq_writer_destroy(w);
    free(x);
    return 0;
fail:
    fprintf(stderr, "write %s: %s\n", path, err.msg);
    return 1;
}

/* ---- the nested sample ---- */

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
    {"ll", 9, FL_PQ_OPTIONAL, 1, FL_PQ_GROUP_LIST, 0, {0}, 0},
    {"list", -1, FL_PQ_REPEATED, 1, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"element", 10, FL_PQ_OPTIONAL, 1, FL_PQ_GROUP_LIST, 0, {0}, 0},
    {"list", -1, FL_PQ_REPEATED, 1, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"element", 11, FL_PQ_OPTIONAL, 0, 0, FL_PQ_INT32, {0}, 0},
    {"st", 12, FL_PQ_REQUIRED, 2, FL_PQ_GROUP_PLAIN, 0, {0}, 0},
    {"p", 13, FL_PQ_REQUIRED, 0, 0, FL_PQ_INT64, {0}, 0},
    {"q", 14, FL_PQ_OPTIONAL, 0, 0, FL_PQ_BYTE_ARRAY, {FL_PQ_LT_STRING, 0, 0, false, 0}, 0},
};
enum { N_A, N_X, N_Y, N_KEY, N_VALUE, N_LL, N_P, N_Q, N_COLS };
static const size_t N_WIDTH[N_COLS] = {4, 4, sizeof(fl_pq_bytes_t), sizeof(fl_pq_bytes_t), 8, 4, 8,
                                       sizeof(fl_pq_bytes_t)};
static const char *const YS[13] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6",
                                   "s7", "s8", "s9", "s10", "s11", "s12"};
static const char *const KS[3] = {"k0", "k1", "k2"};
static const char *const QS[7] = {"q0", "q1", "q2", "q3", "q4", "q5", "q6"};

/* A column as level entries, a value slot each, and each row's first entry. */
typedef struct ncol {
    uint8_t *def, *rep, *vals;
    size_t n, cap;
    size_t start[ROWS + 1];
} ncol_t;

static uint8_t *nput(ncol_t *c, size_t width, int rep, int def) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->def = realloc(c->def, c->cap);
        c->rep = realloc(c->rep, c->cap);
        c->vals = realloc(c->vals, c->cap * width);
    }
    c->def[c->n] = (uint8_t)def;
    c->rep[c->n] = (uint8_t)rep;
    uint8_t *v = c->vals + c->n++ * width;
    memset(v, 0, width);
    return v;
}

static void put_i32(ncol_t *c, int rep, int def, int32_t x) {
    memcpy(nput(c, 4, rep, def), &x, 4);
}
static void put_i64(ncol_t *c, int rep, int def, int64_t x) {
    memcpy(nput(c, 8, rep, def), &x, 8);
}
static void put_str(ncol_t *c, int rep, int def, const char *x) {
    fl_pq_bytes_t b = {(const uint8_t *)x, x ? (uint32_t)strlen(x) : 0};
    memcpy(nput(c, sizeof(b), rep, def), &b, sizeof(b));
}

/* Row r of every column (test_parquet_interop.py's nested_rows). */
static void nested_row(ncol_t *col, int r) {
    for (int c = 0; c < N_COLS; c++) col[c].start[r] = col[c].n;
    put_i32(&col[N_A], 0, 0, r * 3 - 100);
    /* b: null when r % 7 == 0, else r % 4 elements of {x, y} */
    if (r % 7 == 0) {
        put_i32(&col[N_X], 0, 0, 0), put_str(&col[N_Y], 0, 0, NULL);
    } else if (r % 4 == 0) {
        put_i32(&col[N_X], 0, 1, 0), put_str(&col[N_Y], 0, 1, NULL);
    }
    for (int k = 0; r % 7 && k < r % 4; k++) {
        int rp = k ? 1 : 0;
        if ((r + k) % 5 == 0) {
            put_i32(&col[N_X], rp, 2, 0), put_str(&col[N_Y], rp, 2, NULL);
            continue;
        }
        put_i32(&col[N_X], rp, (r + k) % 3 ? 4 : 3, r * 10 + k);
        put_str(&col[N_Y], rp, (r + k) % 4 == 1 ? 3 : 4, YS[(r * 7 + k) % 13]);
    }
    /* c: null when r % 6 == 1, else r % 3 entries k<k> -> r * 1000 + k or null */
    if (r % 6 == 1) {
        put_str(&col[N_KEY], 0, 0, NULL), put_i64(&col[N_VALUE], 0, 0, 0);
    } else if (r % 3 == 0) {
        put_str(&col[N_KEY], 0, 1, NULL), put_i64(&col[N_VALUE], 0, 1, 0);
    }
    for (int k = 0; r % 6 != 1 && k < r % 3; k++) {
        int rp = k ? 1 : 0;
        put_str(&col[N_KEY], rp, 2, KS[k]);
        put_i64(&col[N_VALUE], rp, (r + k) % 4 ? 3 : 2, (int64_t)r * 1000 + k);
    }
    /* ll: null when r % 9 == 2, else r % 3 inner lists: null when
     * (r + k) % 4 == 3, else (r + k) % 3 values r + 10k + 100j, null when
     * (r + k + j) % 5 == 0 */
    ncol_t *ll = &col[N_LL];
    if (r % 9 == 2) put_i32(ll, 0, 0, 0);
    else if (r % 3 == 0) put_i32(ll, 0, 1, 0);
    for (int k = 0; r % 9 != 2 && k < r % 3; k++) {
        int rk = k ? 1 : 0;
        if ((r + k) % 4 == 3) {
            put_i32(ll, rk, 2, 0);
            continue;
        }
        if ((r + k) % 3 == 0) put_i32(ll, rk, 3, 0);
        for (int j = 0; j < (r + k) % 3; j++)
            put_i32(ll, j ? 2 : rk, (r + k + j) % 5 ? 5 : 4, r + 10 * k + 100 * j);
    }
    /* st: {p: r * r, q: null when r % 5 == 3 else q<r % 7>} */
    put_i64(&col[N_P], 0, 0, (int64_t)r * r);
    put_str(&col[N_Q], 0, r % 5 == 3 ? 0 : 1, QS[r % 7]);
}

static int write_nested(const char *path, const char *codec, bool dict, int rows) {
    ncol_t *col = calloc(N_COLS, sizeof(*col));
    for (int r = 0; r < rows; r++) nested_row(col, r);
    for (int c = 0; c < N_COLS; c++) col[c].start[rows] = col[c].n;
    fl_pq_writer_options_t o;
    fl_pq_writer_options_init(&o);
    o.codec = strcmp(codec, "none") == 0 ? FL_PQ_CODEC_UNCOMPRESSED : fl_pq_codec_of_name(codec);
    o.page_rows_max = 40;
    o.row_group_bytes_max = 40000;
    o.dictionary_bytes_max = dict ? 1u << 20 : 0;
    fl_pq_writer_t *w = NULL;
    fl_error_t err;
    int rc = 1;
    if (o.codec < 0) {
        snprintf(err.msg, sizeof(err.msg), "unknown codec %s", codec);
        goto out;
    }
    if (fl_pq_writer_open_tree(path, NESTED, sizeof(NESTED) / sizeof(NESTED[0]), &o, &w, &err))
        goto out;
    for (int at = 0; at < rows; at += 150) {
        int n = rows - at < 150 ? rows - at : 150;
        fl_pq_column_data_t cd[N_COLS];
        memset(cd, 0, sizeof(cd));
        for (int c = 0; c < N_COLS; c++) {
            size_t e0 = col[c].start[at];
            cd[c].values = col[c].vals + e0 * N_WIDTH[c];
            if (c == N_A) continue; /* flat and required: no levels, no valid */
            int max_def, max_rep;
            fl_pq_writer_levels(w, (size_t)c, &max_def, &max_rep);
            cd[c].def = col[c].def + e0;
            cd[c].rep = max_rep ? col[c].rep + e0 : NULL;
            cd[c].levels = col[c].start[at + n] - e0;
        }
        if (fl_pq_writer_append(w, cd, (size_t)n, &err)) goto out;
    }
    if (fl_pq_writer_finish(w, &err)) goto out;
    rc = 0;
out:
    if (rc) fprintf(stderr, "write %s: %s\n", path, err.msg);
    fl_pq_writer_destroy(w);
    for (int c = 0; c < N_COLS; c++) free(col[c].def), free(col[c].rep), free(col[c].vals);
    free(col);
    return rc;
}

/* A FIXED_LEN_BYTE_ARRAY decimal (big-endian two's complement) in base 10. */
static void print_fixed_decimal(const uint8_t *p, size_t n) {
    unsigned __int128 u = (p[0] & 0x80) ? ~(unsigned __int128)0 : 0;
    for (size_t i = 0; i < n; i++) u = u << 8 | p[i];
    bool neg = (__int128)u < 0;
    if (neg) u = -u;
    char digits[48];
    size_t at = sizeof(digits);
    digits[--at] = 0;
    do {
        digits[--at] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    printf("%s%s", neg ? "-" : "", digits + at);
}

static void print_value(const fl_pq_values_t *v, size_t k) {
    if (!v->valid[k]) {
        fputs("null", stdout);
        return;
    }
    switch (v->type) {
    case FL_PQ_BOOLEAN: printf("%d", ((const uint8_t *)v->values)[k]); break;
    case FL_PQ_INT32: printf("%" PRId32, ((const int32_t *)v->values)[k]); break;
    case FL_PQ_INT64: printf("%" PRId64, ((const int64_t *)v->values)[k]); break;
    case FL_PQ_FLOAT:
    case FL_PQ_DOUBLE: {
        double d = v->type == FL_PQ_FLOAT ? ((const float *)v->values)[k]
                                          : ((const double *)v->values)[k];
        if (isnan(d))
            fputs("\"NaN\"", stdout);
        else
            printf("%.17g", d);
        break;
    }
    case FL_PQ_FLBA: print_fixed_decimal((const uint8_t *)v->values + k * v->width, v->width); break;
    default:
        putchar('"');
        for (uint64_t p = v->offsets[k]; p < v->offsets[k + 1]; p++) printf("%02x", v->bytes[p]);
        putchar('"');
    }
}

static int read_file(const char *path) {
    fl_pq_reader_t *r;
    fl_error_t err;
    if (fl_pq_reader_open_file(path, 1u << 30, &r, &err)) goto fail;
    const fl_pq_file_meta_t *m = fl_pq_reader_meta(r);
    for (size_t c = 0; c < fl_pq_reader_columns(r); c++) {
        const fl_pq_schema_element_t *e = fl_pq_reader_column(r, c);
        int max_def, max_rep;
        fl_pq_reader_column_levels(r, c, &max_def, &max_rep);
        /* the path: names from the root's child down to the leaf */
        size_t chain[FL_PQ_LEVEL_MAX + 2], depth = 0;
        for (size_t a = fl_pq_reader_column_element(r, c); a != 0; a = fl_pq_reader_parent(r, a))
            chain[depth++] = a;
        printf("{\"name\": \"%s\", \"path\": [", e->name);
        while (depth--) printf("\"%s\"%s", m->schema[chain[depth]].name, depth ? ", " : "");
        printf("], \"field_id\": %d, \"max_def\": %d, \"max_rep\": %d, \"values\": [",
               e->has_field_id ? e->field_id : -1, max_def, max_rep);
        bool levels = max_rep > 0 || max_def > 1;
        fl_buf_t def, rep;
        fl_buf_init(&def);
        fl_buf_init(&rep);
        bool first = true;
        for (size_t g = 0; g < m->n_row_groups; g++) {
            fl_pq_values_t v;
            if (fl_pq_reader_read_column(r, g, c, &v, &err)) {
                fl_pq_reader_destroy(r);
                goto fail;
            }
            for (size_t k = 0; k < v.levels; k++) {
                if (!first) fputs(", ", stdout);
                first = false;
                print_value(&v, k);
            }
            if (levels) {
                fl_buf_append(&def, v.def, v.levels);
                if (v.rep) fl_buf_append(&rep, v.rep, v.levels);
            }
            fl_pq_values_free(&v);
        }
        fputs("]", stdout);
        if (levels) {
            fputs(", \"def\": [", stdout);
            for (size_t k = 0; k < def.len; k++) printf("%s%u", k ? ", " : "", def.data[k]);
            fputs("], \"rep\": [", stdout);
            for (size_t k = 0; k < rep.len; k++) printf("%s%u", k ? ", " : "", rep.data[k]);
            fputs("]", stdout);
        }
        fl_buf_free(&def);
        fl_buf_free(&rep);
        puts("}");
    }
    fl_pq_reader_destroy(r);
    return 0;
fail:
    fprintf(stderr, "read %s: %s\n", path, err.msg);
    return 1;
}

int main(int argc, char **argv) {
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "write") == 0) {
        int rows = argc == 5 ? atoi(argv[4]) : ROWS;
        if (rows < 1 || rows > ROWS) rows = ROWS;
        return write_sample(argv[2], argv[3], rows);
    }
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "write-nested") == 0) {
        int rows = argc == 6 ? atoi(argv[5]) : ROWS;
        if (rows < 1 || rows > ROWS) rows = ROWS;
        return write_nested(argv[2], argv[3], strcmp(argv[4], "dict") == 0, rows);
    }
    if (argc == 3 && strcmp(argv[1], "read") == 0) return read_file(argv[2]);
    fprintf(stderr, "usage: %s write PATH none|zstd|snappy|gzip [ROWS] | write-nested PATH "
            "none|zstd|snappy|gzip dict|plain [ROWS] | read PATH\n", argv[0]);
    return 2;
}
