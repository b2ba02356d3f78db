/*
 * fuzz_arrow_message.c — fuzzes the Arrow IPC RecordBatch message of ARROW
 * log batches (arrow_ipc.h), which clients send in PRODUCE_LOG: the parser,
 * buffer decompression with a cap, and projection over a fixed schema of
 * every Fluss type (the corpus is pyarrow's messages for that schema).
 *
 * Invariants checked: a parsed view stays inside the input (nodes sane,
 * buffers within bodyLength within the input); decompression never appends
 * more than the cap; a projection parses, has the flattened node/buffer
 * counts of the selected columns, a body no larger than the input's, copies
 * each selected buffer's bytes verbatim, and projecting it again with the
 * identity projection of the projected schema gives the same bytes. The
 * input's first byte also picks a codec for a direct decompression of the
 * rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_ipc.h"
#include "common_buf.h"
#include "common_error.h"
#include "types_datatype.h"
#include "fuzz_common.h"

#define FUZZ_CAP (256u * 1024u)
#define COLS 21

/* make_fixtures.SCHEMA of tests/unit/data/arrow */
static const char *const sql[COLS] = {
    "TINYINT",   "SMALLINT",     "INT",          "BIGINT",         "BOOLEAN",
    "FLOAT",     "DOUBLE",       "STRING",       "BYTES",          "BINARY(4)",
    "DECIMAL(10, 2)", "DATE",    "TIME(3)",      "TIME(6)",        "TIMESTAMP(0)",
    "TIMESTAMP(3)", "TIMESTAMP_LTZ(6)", "TIMESTAMP(9)", "ARRAY<STRING>",
    "MAP<STRING NOT NULL, INT>", "ROW<a INT, b STRING>",
};

/* The schema is built once per process and never changes: read-only after
 * the first call, so it is not mutable state between inputs. */
static const fl_datatype_t *const *fuzz_schema(void) {
    static fl_datatype_t *types[COLS];
    static int built;
    if (!built) {
        for (int i = 0; i < COLS; i++) {
            const char *p = sql[i];
            fl_error_t err;
            FUZZ_CHECK(fl_datatype_parse(&p, &types[i], &err) == 0);
        }
        built = 1;
    }
    return (const fl_datatype_t *const *)types;
}

static void fuzz_project(const uint8_t *data, size_t size, const fl_arrow_batch_view_t *in,
                         const int32_t *cols, size_t n) {
    const fl_datatype_t *const *schema = fuzz_schema();
    fl_buf_t out, again;
    fl_buf_init(&out);
    fl_buf_init(&again);
    fl_error_t err;
    if (fl_arrow_project(data, size, schema, COLS, cols, n, &out, &err) != 0) {
        FUZZ_CHECK(out.len == 0);
        FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION ||
                   err.code == FLUSS_ERR__NO_MEMORY);
        goto done;
    }
    fl_arrow_batch_view_t v;
    FUZZ_CHECK(fl_arrow_message_parse(out.data, out.len, &v, &err) == 0);
    FUZZ_CHECK(v.message_len == out.len);
    FUZZ_CHECK(v.length == in->length && v.codec == in->codec);
    FUZZ_CHECK(v.body_len <= in->body_len);
    /* counts of the selected columns, and verbatim buffers */
    size_t nodes = 0, bufs = 0, src_node = 0, src_buf = 0, next = 0;
    for (int c = 0; c < COLS; c++) {
        uint32_t cn, cb;
        FUZZ_CHECK(fl_arrow_column_shape(schema[c], &cn, &cb) == 0);
        if (next < n && cols[next] == c) {
            for (uint32_t i = 0; i < cn; i++) {
                fl_arrow_node_t a = fl_arrow_batch_node(&v, nodes + i);
                fl_arrow_node_t b = fl_arrow_batch_node(in, src_node + i);
                FUZZ_CHECK(a.length == b.length && a.null_count == b.null_count);
            }
            for (uint32_t i = 0; i < cb; i++) {
                fl_arrow_buffer_t a = fl_arrow_batch_buffer(&v, bufs + i);
                fl_arrow_buffer_t b = fl_arrow_batch_buffer(in, src_buf + i);
                FUZZ_CHECK(a.length == b.length);
                FUZZ_CHECK(memcmp(v.body + a.offset, in->body + b.offset, (size_t)a.length) == 0);
            }
            nodes += cn;
            bufs += cb;
            next++;
        }
        src_node += cn;
        src_buf += cb;
    }
    FUZZ_CHECK(nodes == v.node_count && bufs == v.buffer_count);
    /* identity projection of the projected schema: same bytes */
    const fl_datatype_t *sub[COLS];
    int32_t ident[COLS];
    for (size_t i = 0; i < n; i++) {
        sub[i] = schema[cols[i]];
        ident[i] = (int32_t)i;
    }
    FUZZ_CHECK(fl_arrow_project(out.data, out.len, sub, n, ident, n, &again, &err) == 0);
    FUZZ_CHECK(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
done:
    fl_buf_free(&out);
    fl_buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_buf_t buf;
    fl_buf_init(&buf);
    fl_error_t err;

    if (size > 0) {
        fl_arrow_codec_t codec = data[0] & 1 ? FL_ARROW_CODEC_ZSTD : FL_ARROW_CODEC_LZ4_FRAME;
        if (fl_arrow_decompress(codec, data + 1, size - 1, FUZZ_CAP, &buf, &err) == 0)
            FUZZ_CHECK(buf.len <= FUZZ_CAP);
        fl_buf_reset(&buf);
    }

    fl_arrow_batch_view_t v;
    if (fl_arrow_message_parse(data, size, &v, &err) != 0) {
        FUZZ_CHECK(err.code == FLUSS_ERR_CORRUPT_RECORD_EXCEPTION);
        fl_buf_free(&buf);
        return 0;
    }
    FUZZ_CHECK(v.message_len <= size);
    FUZZ_CHECK(v.body >= data && v.body_len <= size - (size_t)(v.body - data));
    for (size_t i = 0; i < v.node_count; i++) {
        fl_arrow_node_t nd = fl_arrow_batch_node(&v, i);
        FUZZ_CHECK(nd.length >= 0 && nd.null_count >= 0 && nd.null_count <= nd.length);
    }
    for (size_t i = 0; i < v.buffer_count; i++) {
        fl_arrow_buffer_t b = fl_arrow_batch_buffer(&v, i);
        FUZZ_CHECK(b.offset >= 0 && b.length >= 0);
        FUZZ_CHECK((uint64_t)b.offset + (uint64_t)b.length <= v.body_len);
        fl_buf_reset(&buf);
        if (fl_arrow_buffer_get(&v, i, FUZZ_CAP, &buf, &err) == 0) FUZZ_CHECK(buf.len <= FUZZ_CAP);
    }
    fl_buf_free(&buf);

    static const int32_t p0[] = {0};
    static const int32_t p1[] = {7, 18, 19, 20};
    static const int32_t p2[] = {1, 4, 8, 9, 10, 17};
    int32_t all[COLS];
    for (int i = 0; i < COLS; i++) all[i] = i;
    fuzz_project(data, size, &v, p0, 1);
    fuzz_project(data, size, &v, p1, 4);
    fuzz_project(data, size, &v, p2, 6);
    fuzz_project(data, size, &v, all, COLS);
    return 0;
}
