/*
 * tier_sample.c — a test helper for the tiering writer's interop test
 * (tests/lake/test_tier_interop.py), built as lake_tier_sample:
 *
 *   lake_tier_sample DIR ARROW|INDEXED|COMPACTED [ROWS]
 *       builds log batches of every primitive Fluss type (BATCH_ROWS rows
 *       each, base offsets from BASE_OFFSET, commit timestamps BASE_TS +
 *       1000 × batch) in that log format with the record builders, tiers
 *       them for bucket BUCKET into DIR (small row groups, so a file has
 *       several), and prints the result as one JSON object: the files with
 *       path, file_path, record_count, file_size_in_bytes, split_offsets,
 *       first and last offsets and, per field id, column_size,
 *       value_count, null_count, nan_count (null when absent) and the
 *       lower/upper bounds as hex (null when absent).
 *
 * The values are the formulas in sample_row; the pytest computes the same.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_batch.h"
#include "record_builder.h"
#include "record_row_builder.h"
#include "tier_writer.h"
#include "types_row.h"
#include "types_schema.h"

#define BATCH_ROWS 200
#define BASE_OFFSET 10000
#define BASE_TS INT64_C(1700000000000)
#define BUCKET 5

enum { C_B, C_TI, C_SI, C_I, C_L, C_F, C_D, C_DAY, C_T, C_TS, C_LTZ, C_DEC9, C_DEC18, C_DEC38,
       C_C, C_S, C_BIN, C_BY, NCOL };

static const char *const NAMES[NCOL] = {"b", "ti", "si", "i", "l", "f", "d", "day", "t",
                                        "ts", "ltz", "dec9", "dec18", "dec38", "c", "s", "bin",
                                        "by"};
static const char *const TYPES[NCOL] = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INT NOT NULL", "BIGINT", "FLOAT", "DOUBLE NOT NULL",
    "DATE", "TIME(3)", "TIMESTAMP(9)", "TIMESTAMP_LTZ(6)", "DECIMAL(9, 2)",
    "DECIMAL(18, 4) NOT NULL", "DECIMAL(38, 10)", "CHAR(6)", "STRING", "BINARY(3)", "BYTES"};
static const char *const WORDS[3] = {"apple", "\xc3\xa9t\xc3\xa9", ""};

static void cell_bytes(fl_row_t *row, int k, const void *p, size_t n) {
    fl_row_set_bytes(row, (size_t)k, p, n);
}

static bool null_at(int r, int k) {
    switch (k) {
    case C_B: return r % 5 == 1;
    case C_SI: return r % 7 == 2;
    case C_L: return r % 7 == 0;
    case C_F: return r % 6 == 2;
    case C_DAY: return r % 8 == 5;
    case C_T: return r % 11 == 7;
    case C_DEC9: return r % 12 == 1;
    case C_DEC38: return r % 10 == 3;
    case C_S: return r % 4 == 2;
    case C_BY: return r % 9 == 4;
    default: return false;
    }
}

static void bytes_cell(int r, int k, fl_row_t *row) {
    char s[64];
    uint8_t b[3] = {(uint8_t)r, 0xFF, (uint8_t)(r * 3)};
    switch (k) {
    case C_C:
        snprintf(s, sizeof(s), "c%05d", r % 100000);
        cell_bytes(row, k, s, 6);
        break;
    case C_S:
        if (r % 9 == 0) snprintf(s, sizeof(s), "\xf0\x9f\x98\x80-long-string-value-%d", r);
        else snprintf(s, sizeof(s), "%s-%d", WORDS[r % 3], r);
        cell_bytes(row, k, s, strlen(s));
        break;
    case C_BIN: cell_bytes(row, k, b, 3); break;
    default: b[2] = 0, cell_bytes(row, k, b, (size_t)(r % 4)); break; /* C_BY */
    }
}

static void sample_row(int r, fl_row_t *row) {
    fl_row_reset(row, NCOL);
    for (int k = 0; k < NCOL; k++) {
        if (null_at(r, k)) continue;
        fl_cell_t *c = &row->cells[k];
        c->is_null = false;
        switch (k) {
        case C_B: c->i = r % 3 == 0; break;
        case C_TI: c->i = r % 256 - 128; break;
        case C_SI: c->i = r % 600 * 100 - 30000; break;
        case C_I: c->i = r * 7 - 1000; break;
        case C_L: c->i = (int64_t)r * 1000000007 - (INT64_C(1) << 40); break;
        case C_F: c->d = r % 13 == 5 ? NAN : (float)(r / 4.0 - 10.0); break;
        case C_D: c->d = r / 8.0 - 3.5; break;
        case C_DAY: c->i = r - 300; break;
        case C_T: c->i = ((int64_t)r * 3600007) % 86400000; break;
        case C_TS:
            c->i = -500000 + (int64_t)r * 1337;
            c->nanos = (int32_t)((int64_t)r * 123457 % 1000000);
            break;
        case C_LTZ: c->i = -1 - (int64_t)r * 99991, c->nanos = (r % 1000) * 1000; break;
        case C_DEC9: c->dec = r * 13 - 500; break;
        case C_DEC18: c->dec = (__int128)r * 123456789 - INT64_C(1000000000000); break;
        case C_DEC38: /* past 64 bits, both signs */
            c->dec = ((__int128)(r % 2 ? -r : r) * INT64_C(1000000000000000000)) * 1000000007 + r;
            break;
        default: bytes_cell(r, k, row); break;
        }
    }
}

static void sample_schema(fl_schema_t *s) {
    memset(s, 0, sizeof(*s));
    for (int k = 0; k < NCOL; k++) {
        const char *p = TYPES[k];
        fl_datatype_t *t;
        fl_error_t err;
        if (fl_datatype_parse(&p, &t, &err)) {
            fprintf(stderr, "%s: %s\n", TYPES[k], err.msg);
            exit(1);
        }
        fl_schema_add_column(s, NAMES[k], t, NULL);
    }
    fl_schema_assign_ids(s);
}

/* Rows [r0, r0 + n) as one batch of format fmt appended to out. */
static void build_batch(fl_buf_t *out, fl_log_format_t fmt, const fl_schema_t *s, int r0, int n) {
    fl_row_t row;
    fl_row_init(&row, NCOL);
    fl_error_t err;
    if (fmt == FL_LOG_FORMAT_ARROW) {
        fl_record_builder_t b;
        fl_record_builder_options_t o = {.schema_id = 1, .codec = FL_ARROW_CODEC_ZSTD};
        fl_record_builder_init(&b, s, &o);
        for (int r = r0; r < r0 + n; r++) {
            sample_row(r, &row);
            fl_record_builder_append(&b, &row);
        }
        if (fl_record_builder_finish(&b, -1, -1, out, &err)) exit(1);
        fl_record_builder_free(&b);
    } else {
        const fl_datatype_t *types[NCOL];
        for (int k = 0; k < NCOL; k++) types[k] = s->columns[k].type;
        fl_row_builder_t b;
        fl_row_builder_init(&b, fmt == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED,
                            types, NCOL, 1, false);
        for (int r = r0; r < r0 + n; r++) {
            sample_row(r, &row);
            if (fl_row_builder_append(&b, &row, FL_CHANGE_APPEND_ONLY, &err)) exit(1);
        }
        fl_row_builder_finish(&b, -1, -1, out);
        fl_row_builder_free(&b);
    }
    fl_row_free(&row);
}

static void print_hex(fl_avro_bytes_t b) {
    if (!b.p) {
        printf("null");
        return;
    }
    putchar('"');
    for (size_t i = 0; i < b.len; i++) printf("%02x", b.p[i]);
    putchar('"');
}

static void print_count(int64_t v) {
    if (v == FL_ICE_NONE) printf("null");
    else printf("%" PRId64, v);
}

static void print_file(const fl_tier_file_t *t) {
    const fl_ice_data_file_t *f = &t->file;
    printf("{\"path\":\"%s\",\"file_path\":\"%s\",\"file_format\":\"%s\",\"record_count\":%" PRId64
           ",\"file_size_in_bytes\":%" PRId64 ",\"first_offset\":%" PRId64
           ",\"last_offset\":%" PRId64 ",\"sort_order_id\":%d,\"split_offsets\":[",
           t->path, f->file_path, f->file_format, f->record_count, f->file_size_bytes,
           t->first_offset, t->last_offset, f->sort_order_id);
    for (size_t i = 0; i < f->n_split_offsets; i++)
        printf("%s%" PRId64, i ? "," : "", f->split_offsets[i]);
    printf("],\"columns\":[");
    for (size_t i = 0; i < f->n_columns; i++) {
        const fl_ice_column_stats_t *c = &f->columns[i];
        printf("%s{\"field_id\":%d,\"column_size\":%" PRId64 ",\"value_count\":%" PRId64
               ",\"null_count\":%" PRId64 ",\"nan_count\":",
               i ? "," : "", c->field_id, c->column_size, c->value_count, c->null_count);
        print_count(c->nan_count);
        printf(",\"lower\":");
        print_hex(c->lower);
        printf(",\"upper\":");
        print_hex(c->upper);
        putchar('}');
    }
    printf("]}");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR ARROW|INDEXED|COMPACTED [ROWS]\n", argv[0]);
        return 2;
    }
    int fmt = fl_log_format_from_name(argv[2]);
    int rows = argc > 3 ? atoi(argv[3]) : 3 * BATCH_ROWS;
    if (fmt < 0 || rows <= 0) return 2;
    fl_schema_t s;
    sample_schema(&s);
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_tier_writer_options_t o;
    fl_tier_writer_options_init(&o);
    o.dir = argv[1];
    o.prefix = "data";
    o.bucket = BUCKET;
    o.schema = &s;
    o.schema_id = 1;
    o.log_format = (fl_log_format_t)fmt;
    o.row_group_bytes = 16 * 1024; /* several row groups: split offsets */
    fl_tier_writer_t *w;
    fl_error_t err;
    const fl_tier_writer_result_t *res;
    if (fl_tier_writer_open(&o, &w, &err)) goto fail;
    for (int r0 = 0, b = 0; r0 < rows; r0 += BATCH_ROWS, b++) {
        int n = rows - r0 < BATCH_ROWS ? rows - r0 : BATCH_ROWS;
        fl_buf_reset(&buf);
        build_batch(&buf, (fl_log_format_t)fmt, &s, r0, n);
        fl_batch_set_base_offset(buf.data, BASE_OFFSET + r0);
        fl_batch_set_commit_timestamp(buf.data, BASE_TS + 1000 * b);
        if (fl_tier_writer_add_batch(w, buf.data, buf.len, &err)) goto fail;
    }
    if (fl_tier_writer_finish(w, &res, &err)) goto fail;
    printf("{\"bucket\":%d,\"record_count\":%" PRId64 ",\"first_offset\":%" PRId64
           ",\"next_offset\":%" PRId64 ",\"files\":[",
           res->bucket, res->record_count, res->first_offset, res->next_offset);
    for (size_t i = 0; i < res->n_files; i++) {
        if (i) putchar(',');
        print_file(&res->files[i]);
    }
    printf("]}\n");
    fl_tier_writer_close(w);
    fl_buf_free(&buf);
    fl_schema_free(&s);
    return 0;
fail:
    fprintf(stderr, "tier: %s\n", err.msg);
    return 1;
}
