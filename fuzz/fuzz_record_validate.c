/*
 * fuzz_record_validate.c — untrusted PRODUCE_LOG records through the
 * produce-time check (fl_record_validate, record_validate.h) with a fixed
 * schema of several types (id 1) in the log format chosen by the top two
 * bits of the first input byte (0 ARROW, 1 INDEXED, 2 COMPACTED, 3 ARROW);
 * the low six bits choose a projection. Invariants — the rule the check
 * keeps: a run that passes parses as whole batches with good CRCs, and, for
 * ARROW, projects (fl_record_project) to whole batches again. The CRC of
 * every whole batch is recomputed before the check so that mutations reach
 * the body checks (fuzz_record_batch covers the CRC check itself).
 * FUZZ_VERBOSE=1 prints whether each input was accepted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_buf.h"
#include "record_batch.h"
#include "record_project.h"
#include "record_validate.h"
#include "types_datatype.h"
#include "fuzz_common.h"

#define FV_COLUMNS 6

static const fl_datatype_t *g_types[FV_COLUMNS];

static const fl_datatype_t *const *schema_types(void *ctx, int16_t schema_id, size_t *n) {
    (void)ctx;
    if (schema_id != 1) return NULL;
    *n = FV_COLUMNS;
    return g_types;
}

static void init_types(void) {
    if (g_types[0]) return;
    const char *texts[FV_COLUMNS] = {"INT", "STRING", "DOUBLE", "ARRAY<BIGINT>",
                                     "MAP<STRING, INT>", "ROW<a INT, b BYTES>"};
    for (int i = 0; i < FV_COLUMNS; i++) {
        const char *p = texts[i];
        fl_datatype_t *t;
        fl_error_t err;
        FUZZ_CHECK(fl_datatype_parse(&p, &t, &err) == 0);
        g_types[i] = t;
    }
}

static void check_whole_batches(const uint8_t *p, size_t n, bool crc) {
    fl_error_t err;
    for (size_t pos = 0; pos < n;) {
        size_t bsize;
        FUZZ_CHECK(fl_batch_peek_size(p + pos, n - pos, n - pos, &bsize, &err) == 0);
        FUZZ_CHECK(pos + bsize <= n);
        fl_batch_view_t b;
        FUZZ_CHECK(fl_batch_parse(p + pos, bsize, &b, &err) == 0);
        if (crc) FUZZ_CHECK(fl_batch_check_crc(&b, &err) == 0);
        pos += bsize;
    }
}

static void fix_crcs(uint8_t *p, size_t n) {
    fl_error_t err;
    for (size_t pos = 0; pos < n;) {
        size_t bsize;
        if (fl_batch_peek_size(p + pos, n - pos, n - pos, &bsize, &err) != 0) return;
        int8_t magic = (int8_t)p[pos + 12];
        if (bsize >= FL_BATCH_HEADER_V0 && magic >= 0 && magic <= FL_BATCH_MAGIC_MAX)
            fl_put_le32(p + pos + (magic == 2 ? 25 : 21),
                        fl_batch_compute_crc(p + pos, bsize, magic));
        pos += bsize;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_types();
    if (size < 1) return 0;
    uint8_t choice = data[0];
    data++;
    size--;
    static const fl_log_format_t formats[4] = {FL_LOG_FORMAT_ARROW, FL_LOG_FORMAT_INDEXED,
                                               FL_LOG_FORMAT_COMPACTED, FL_LOG_FORMAT_ARROW};
    fl_log_format_t format = formats[choice >> 6];
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    data = copy;
    fix_crcs(copy, size);
    fl_error_t err;
    int rc = fl_record_validate(data, size, format, schema_types, NULL, &err);
    if (getenv("FUZZ_VERBOSE")) /* to check what the seeds reach */
        fprintf(stderr, "format %d, %zu bytes: %s %d %s\n", (int)format, size,
                rc ? "refused" : "accepted", rc, rc ? err.msg : "");
    if (rc) {
        free(copy);
        FUZZ_CHECK(err.code == rc && err.msg[0]);
        FUZZ_CHECK(rc == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION || rc == FLUSS_ERR_SCHEMA_NOT_EXIST);
        return 0;
    }
    check_whole_batches(data, size, true);
    if (format != FL_LOG_FORMAT_ARROW) {
        free(copy);
        return 0;
    }
    int32_t fields[FV_COLUMNS];
    size_t n = 0;
    for (int i = 0; i < FV_COLUMNS; i++)
        if (choice & (1u << i)) fields[n++] = i;
    if (n == 0) fields[n++] = 0;
    fl_projection_t p = {.fields = fields, .field_count = n};
    fl_buf_t out;
    fl_buf_init(&out);
    rc = fl_record_project(data, size, &p, schema_types, NULL, &out, &err);
    if (rc) fprintf(stderr, "accepted records do not project: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
    check_whole_batches(out.data, out.len, false);
    fl_buf_free(&out);
    free(copy);
    return 0;
}
