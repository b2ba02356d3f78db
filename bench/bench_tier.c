/*
 * bench_tier.c — the lake tiering writer (src/tier) on its own: N rows of
 * a log table built in memory as ARROW log batches of B rows (what
 * clients send), then tiered by fl_tier_writer into Parquet files (ZSTD,
 * the lake tables' default) in a directory, timed. One line of JSON per
 * round on stdout; bench/run_tier.sh interleaves rounds with pyarrow's
 * write_table of the same rows (bench/bench_tier_pyarrow.py) and the
 * page-cache write of as many bytes (--mode write).
 *
 * BENCH_TIER_KEEP=1 in the environment leaves the files.
 *
 *   bench_tier --mode col|row|write [--rows N] [--batch B] [--arrow-codec zstd|none]
 *              [--bytes BYTES] [--rounds R] [--label L] [--schema flat|nested]
 *              [--parquet-codec zstd|none] --dir DIR
 *
 * col: the writer as built (ARROW batches column by column); row: the same
 * with options.row_path (every record through a row, as before the column
 * path); write: BYTES written to a new file in 1 MiB write(2) calls, no
 * fsync (the page-cache limit of the output). --label names the mode in
 * the output (a build of an older commit: "before"). CPU seconds are
 * getrusage(RUSAGE_SELF) user + system over the timed part only; the
 * input is built before it, the files deleted after it.
 *
 * The rows (bench_tier_pyarrow.py builds the same):
 *   id BIGINT NOT NULL = i; user_id INT = i * 7919 % 100000;
 *   name STRING = "customer-%07d-%03d" (i * 2654435761 % 10^7, i % 997), 20 bytes;
 *   price DOUBLE = (i % 10000) / 100.0; ts TIMESTAMP_LTZ(3) = 1.7e12 + 3 i ms;
 *   qty INT = i % 10 + 1, NULL when i % 10 == 3;
 *   note STRING = "note %02d item %05d" (i % 50, i * 31 % 100000), NULL when i % 5 == 1;
 *   score DOUBLE = (i % 1000) * 0.001, NULL when i % 7 == 2.
 *
 * --schema nested (bench/run_tier_nested.sh: nested columns, Iceberg list,
 * map and struct columns with repetition and definition levels):
 *   id BIGINT NOT NULL = i;
 *   tags ARRAY<STRING> = i % 4 elements "tag-%02d" ((i * 7 + k) % 50), NULL when i % 13 == 5;
 *   attrs MAP<STRING, INT> = i % 3 entries "k<k>" -> (i + k) % 1000 (NULL when
 *     (i + k) % 11 == 0), NULL when i % 17 == 3;
 *   pos ROW<x INT, label STRING> = (i % 1000, "p%05d" (i % 100000), label NULL when
 *     i % 5 == 0), NULL when i % 19 == 7;
 *   scores ARRAY<DOUBLE> = i % 5 elements (i % 1000) * 0.01 + k.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lake_parquet_writer.h"
#include "record_batch.h"
#include "record_builder.h"
#include "tier_writer.h"
#include "types_row.h"
#include "types_row_format.h"
#include "types_row_nested.h"
#include "types_schema.h"

#define BT_COLS 8

static const char *const NAMES[BT_COLS] = {"id",  "user_id", "name", "price",
                                           "ts",  "qty",     "note", "score"};
static const char *const TYPES[BT_COLS] = {"BIGINT NOT NULL", "INT",    "STRING",
                                           "DOUBLE",          "TIMESTAMP_LTZ(3)", "INT",
                                           "STRING",          "DOUBLE"};

#define BT_NESTED_COLS 5
static const char *const NESTED_NAMES[BT_NESTED_COLS] = {"id", "tags", "attrs", "pos", "scores"};
static const char *const NESTED_TYPES[BT_NESTED_COLS] = {
    "BIGINT NOT NULL", "ARRAY<STRING>", "MAP<STRING, INT>", "ROW<x INT, label STRING>",
    "ARRAY<DOUBLE>"};
static bool g_nested;

static void die(const char *what, const fl_error_t *err) {
    fprintf(stderr, "bench_tier: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static void schema_make(fl_schema_t *s) {
    memset(s, 0, sizeof(*s));
    size_t n = g_nested ? BT_NESTED_COLS : BT_COLS;
    for (size_t k = 0; k < n; k++) {
        const char *p = g_nested ? NESTED_TYPES[k] : TYPES[k];
        fl_datatype_t *t;
        fl_error_t err;
        if (fl_datatype_parse(&p, &t, &err)) die(p, &err);
        fl_schema_add_column(s, g_nested ? NESTED_NAMES[k] : NAMES[k], t, NULL);
    }
    fl_schema_assign_ids(s);
}

/* The nested row i (the header's formulas), values encoded COMPACTED. */
static void nested_row_make(const fl_schema_t *s, int64_t i, fl_row_t *row, fl_row_t *a,
                            fl_row_t *b, fl_buf_t *enc) {
    char txt[32];
    fl_row_reset(row, BT_NESTED_COLS);
    row->cells[0].is_null = false;
    row->cells[0].i = i;
    if (i % 13 != 5) {
        int n = (int)(i % 4);
        fl_row_reset(a, 4);
        for (int k = 0; k < n; k++) {
            int len = snprintf(txt, sizeof(txt), "tag-%02d", (int)((i * 7 + k) % 50));
            fl_row_set_bytes(a, (size_t)k, txt, (size_t)len);
        }
        fl_buf_reset(enc);
        fl_nested_array_encode(a, (size_t)n, s->columns[1].type->element, enc);
        fl_row_set_bytes(row, 1, enc->data ? enc->data : (const uint8_t *)"", enc->len);
    }
    if (i % 17 != 3) {
        int n = (int)(i % 3);
        fl_row_reset(a, 3);
        fl_row_reset(b, 3);
        for (int k = 0; k < n; k++) {
            int len = snprintf(txt, sizeof(txt), "k%d", k);
            fl_row_set_bytes(a, (size_t)k, txt, (size_t)len);
            if ((i + k) % 11 != 0) {
                b->cells[k].is_null = false;
                b->cells[k].i = (i + k) % 1000;
            }
        }
        fl_buf_reset(enc);
        fl_nested_map_encode(a, b, (size_t)n, s->columns[2].type, enc);
        fl_row_set_bytes(row, 2, enc->data ? enc->data : (const uint8_t *)"", enc->len);
    }
    if (i % 19 != 7) {
        const fl_datatype_t *pt = s->columns[3].type;
        const fl_datatype_t *ft[2] = {pt->fields[0].type, pt->fields[1].type};
        fl_row_reset(a, 2);
        a->cells[0].is_null = false;
        a->cells[0].i = i % 1000;
        if (i % 5 != 0) {
            int len = snprintf(txt, sizeof(txt), "p%05d", (int)(i % 100000));
            fl_row_set_bytes(a, 1, txt, (size_t)len);
        }
        fl_buf_reset(enc);
        fl_error_t err;
        if (fl_row_encode(FL_ROW_COMPACTED, a, ft, 2, enc, &err)) die("encode", &err);
        fl_row_set_bytes(row, 3, enc->data, enc->len);
    }
    int n = (int)(i % 5);
    fl_row_reset(a, 5);
    for (int k = 0; k < n; k++) {
        a->cells[k].is_null = false;
        a->cells[k].d = (double)(i % 1000) * 0.01 + k;
    }
    fl_buf_reset(enc);
    fl_nested_array_encode(a, (size_t)n, s->columns[4].type->element, enc);
    fl_row_set_bytes(row, 4, enc->data ? enc->data : (const uint8_t *)"", enc->len);
}

static void row_make(int64_t i, fl_row_t *row) {
    char s[64];
    fl_row_reset(row, BT_COLS);
    for (int k = 0; k < BT_COLS; k++) row->cells[k].is_null = false;
    row->cells[0].i = i;
    row->cells[1].i = i * 7919 % 100000;
    int n = snprintf(s, sizeof(s), "customer-%07lld-%03lld",
                     (long long)((uint64_t)i * 2654435761u % 10000000u), (long long)(i % 997));
    fl_row_set_bytes(row, 2, s, (size_t)n);
    row->cells[3].d = (double)(i % 10000) / 100.0;
    row->cells[4].i = 1700000000000LL + 3 * i;
    row->cells[4].nanos = 0;
    if (i % 10 == 3) row->cells[5].is_null = true;
    else row->cells[5].i = i % 10 + 1;
    if (i % 5 == 1) {
        row->cells[6].is_null = true;
    } else {
        n = snprintf(s, sizeof(s), "note %02lld item %05lld", (long long)(i % 50),
                     (long long)(i * 31 % 100000));
        fl_row_set_bytes(row, 6, s, (size_t)n);
    }
    if (i % 7 == 2) row->cells[7].is_null = true;
    else row->cells[7].d = (double)(i % 1000) * 0.001;
}

/* rows rows as ARROW log batches of `batch` rows, one after the other. */
static void batches_make(const fl_schema_t *s, int64_t rows, int batch, fl_arrow_codec_t codec,
                         fl_buf_t *out) {
    fl_row_t row, ra, rb;
    fl_row_init(&row, BT_COLS);
    fl_row_init(&ra, 1);
    fl_row_init(&rb, 1);
    fl_buf_t enc;
    fl_buf_init(&enc);
    fl_record_builder_options_t o = {.schema_id = 1, .codec = codec, .zstd_level = 3};
    for (int64_t r0 = 0; r0 < rows; r0 += batch) {
        fl_record_builder_t b;
        fl_record_builder_init(&b, s, &o);
        if (g_nested) fl_record_builder_set_nested(&b, FL_ROW_COMPACTED);
        int64_t n = rows - r0 < batch ? rows - r0 : batch;
        for (int64_t i = r0; i < r0 + n; i++) {
            if (g_nested) nested_row_make(s, i, &row, &ra, &rb, &enc);
            else row_make(i, &row);
            fl_record_builder_append(&b, &row);
        }
        size_t at = out->len;
        fl_error_t err;
        if (fl_record_builder_finish(&b, -1, -1, out, &err)) die("build", &err);
        fl_record_builder_free(&b);
        fl_batch_set_base_offset(out->data + at, r0);
        fl_batch_set_commit_timestamp(out->data + at, 1700000000000LL + r0);
    }
    fl_row_free(&row);
    fl_row_free(&ra);
    fl_row_free(&rb);
    fl_buf_free(&enc);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

static const fl_schema_t *one_schema(void *ctx, int16_t id) { return id == 1 ? ctx : NULL; }

/* Tiers buf into dir; the output bytes. The finished writer in *out: its
 * abort deletes the files, after the timing. */
static uint64_t tier(const fl_schema_t *s, const fl_buf_t *buf, const char *dir, bool row_path,
                     int32_t pq_codec, size_t *n_files, fl_tier_writer_t **out_w) {
    fl_tier_writer_options_t o;
    fl_tier_writer_options_init(&o);
    o.dir = dir;
    o.prefix = "bench";
    o.schema = s;
    o.schema_id = 1;
    o.schema_of = one_schema;
    o.schema_ctx = (void *)s;
    o.row_path = row_path;
    o.codec = pq_codec;
    /* a lake table's ids: nested columns need them (1.. in the type's pre-order here) */
    int32_t ids[64];
    size_t n_ids = fl_tier_field_id_count(s);
    if (n_ids > 64) die("too many field ids", NULL);
    for (size_t k = 0; k < n_ids; k++) ids[k] = (int32_t)k + 1;
    o.field_ids = ids;
    fl_tier_writer_t *w;
    fl_error_t err;
    if (fl_tier_writer_open(&o, &w, &err)) die("open", &err);
    size_t pos = 0;
    while (pos < buf->len) {
        size_t start = pos;
        fl_batch_view_t v;
        if (fl_batch_parse_next(buf->data, buf->len, &pos, &v, &err)) die("parse", &err);
        if (fl_tier_writer_add_batch(w, buf->data + start, pos - start, &err)) die("add", &err);
    }
    const fl_tier_writer_result_t *res;
    if (fl_tier_writer_finish(w, &res, &err)) die("finish", &err);
    uint64_t out = 0;
    for (size_t i = 0; i < res->n_files; i++) out += (uint64_t)res->files[i].file.file_size_bytes;
    *n_files = res->n_files;
    *out_w = w;
    return out;
}

/* bytes written to a new file in 1 MiB writes; unlinked after. */
static void write_limit(const char *dir, uint64_t bytes) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench-write-limit", dir);
    static uint8_t chunk[1 << 20];
    memset(chunk, 0x5A, sizeof(chunk));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open write-limit file", NULL);
    for (uint64_t done = 0; done < bytes;) {
        size_t n = bytes - done < sizeof(chunk) ? (size_t)(bytes - done) : sizeof(chunk);
        ssize_t k = write(fd, chunk, n);
        if (k <= 0) die("write", NULL);
        done += (uint64_t)k;
    }
    close(fd);
    unlink(path);
}

int main(int argc, char **argv) {
    const char *mode = "col", *dir = NULL, *codec_name = "zstd", *label = NULL;
    int32_t pq_codec = FL_PQ_CODEC_ZSTD;
    int64_t rows = 1000000;
    int batch = 1000, rounds = 1;
    uint64_t bytes = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "--rows")) rows = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--arrow-codec")) codec_name = argv[i + 1];
        else if (!strcmp(argv[i], "--bytes")) bytes = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
        else if (!strcmp(argv[i], "--label")) label = argv[i + 1];
        else if (!strcmp(argv[i], "--schema")) g_nested = !strcmp(argv[i + 1], "nested");
        else if (!strcmp(argv[i], "--parquet-codec"))
            pq_codec = !strcmp(argv[i + 1], "none") ? FL_PQ_CODEC_UNCOMPRESSED : FL_PQ_CODEC_ZSTD;
        else die(argv[i], NULL);
    }
    if (!dir || dir[0] != '/' || rows <= 0 || batch <= 0) die("usage: --dir /abs/path ...", NULL);
    if (!strcmp(mode, "write")) {
        for (int r = 0; r < rounds; r++) {
            double c0 = cpu_s(), t0 = now_s();
            write_limit(dir, bytes);
            double t1 = now_s(), c1 = cpu_s();
            printf("{\"mode\":\"write\",\"out_bytes\":%llu,\"wall_s\":%.6f,\"cpu_s\":%.6f}\n",
                   (unsigned long long)bytes, t1 - t0, c1 - c0);
        }
        return 0;
    }
    fl_arrow_codec_t codec = !strcmp(codec_name, "none") ? FL_ARROW_CODEC_NONE
                                                          : FL_ARROW_CODEC_ZSTD;
    fl_schema_t s;
    schema_make(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    batches_make(&s, rows, batch, codec, &buf);
    bool row_path = !strcmp(mode, "row");
    bool keep = getenv("BENCH_TIER_KEEP") != NULL; /* leave the files (a look at them) */
    for (int r = 0; r < rounds; r++) {
        size_t n_files;
        double c0 = cpu_s(), t0 = now_s();
        fl_tier_writer_t *w;
        uint64_t out = tier(&s, &buf, dir, row_path, pq_codec, &n_files, &w);
        double t1 = now_s(), c1 = cpu_s();
        if (keep) fl_tier_writer_close(w);
        else fl_tier_writer_abort(w);
        printf("{\"mode\":\"%s\",\"schema\":\"%s\",\"arrow_codec\":\"%s\",\"rows\":%lld,\"batch\":%d,"
               "\"in_bytes\":%zu,\"out_bytes\":%llu,\"files\":%zu,\"wall_s\":%.6f,"
               "\"cpu_s\":%.6f}\n",
               label ? label : mode, g_nested ? "nested" : "flat", codec_name, (long long)rows, batch, buf.len, (unsigned long long)out,
               n_files, t1 - t0, c1 - c0);
        fflush(stdout);
    }
    fl_buf_free(&buf);
    fl_schema_free(&s);
    return 0;
}
