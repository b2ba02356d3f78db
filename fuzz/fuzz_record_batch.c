/*
 * fuzz_record_batch.c — untrusted log batches as PRODUCE_LOG delivers them:
 * header parse and CRC check of each batch (fl_batch_peek_size /
 * fl_batch_parse / fl_batch_check_crc), then server-side projection of the
 * whole run (fl_record_project) with a fixed schema of several types and a
 * projection chosen by the first input byte. Invariants: parsed views stay
 * inside the input; a projected run parses again as whole batches.
 * FUZZ_VERBOSE=1 prints what each batch and the projection came to.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_buf.h"
#include "record_batch.h"
#include "record_project.h"
#include "types_datatype.h"
#include "fuzz_common.h"

static const fl_datatype_t *g_types[6];

static const fl_datatype_t *const *schema_types(void *ctx, int16_t schema_id, size_t *n) {
    (void)ctx;
    if (schema_id != 1) return NULL;
    *n = 6;
    return g_types;
}

static void init_types(void) {
    if (g_types[0]) return;
    const char *texts[6] = {"INT", "STRING", "DOUBLE", "ARRAY<BIGINT>", "MAP<STRING, INT>",
                            "ROW<a INT, b BYTES>"};
    for (int i = 0; i < 6; i++) {
        const char *p = texts[i];
        fl_datatype_t *t;
        fl_error_t err;
        FUZZ_CHECK(fl_datatype_parse(&p, &t, &err) == 0);
        g_types[i] = t;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_types();
    if (size < 1) return 0;
    uint8_t choice = data[0];
    data++;
    size--;
    bool verbose = getenv("FUZZ_VERBOSE") != NULL;
    /* every batch header on its own */
    for (size_t pos = 0; pos < size;) {
        size_t bsize;
        fl_error_t err;
        int rc = fl_batch_peek_size(data + pos, size - pos, size, &bsize, &err);
        if (rc != 0 || pos + bsize > size) break;
        fl_batch_view_t b;
        int prc = fl_batch_parse(data + pos, bsize, &b, &err), crc = -1;
        if (prc == 0) {
            FUZZ_CHECK(b.records_start <= b.size);
            FUZZ_CHECK(b.header_size <= b.size);
            crc = fl_batch_check_crc(&b, &err);
        }
        if (verbose) /* to check what the seeds reach */
            fprintf(stderr, "batch at %zu: %zu bytes, magic %d: parse %d, crc %d%s%s\n", pos,
                    bsize, (int)(int8_t)data[pos + 12], prc, crc, prc || crc ? ": " : "",
                    prc || crc ? err.msg : "");
        pos += bsize;
    }
    /* projection of the whole run */
    int32_t fields[6];
    size_t n = 0;
    for (int i = 0; i < 6; i++)
        if (choice & (1u << i)) fields[n++] = i;
    if (n == 0) fields[n++] = 0;
    fl_projection_t p = {.fields = fields, .field_count = n};
    fl_buf_t out;
    fl_buf_init(&out);
    fl_error_t err;
    int rc = fl_record_project(data, size, &p, schema_types, NULL, &out, &err);
    if (verbose)
        fprintf(stderr, "projection 0x%02x: %s %d %s\n", choice, rc ? "refused" : "projected", rc,
                rc ? err.msg : "");
    if (rc == 0) {
        for (size_t pos = 0; pos < out.len;) {
            size_t bsize;
            FUZZ_CHECK(fl_batch_peek_size(out.data + pos, out.len - pos, out.len, &bsize, &err) == 0);
            FUZZ_CHECK(pos + bsize <= out.len);
            fl_batch_view_t b;
            FUZZ_CHECK(fl_batch_parse(out.data + pos, bsize, &b, &err) == 0);
            pos += bsize;
        }
    }
    fl_buf_free(&out);
    return 0;
}
