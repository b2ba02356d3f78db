/*
 * arrow_project.c — FETCH_LOG projection pushdown on the Arrow body of a
 * log batch (protocol.md §3.7, Fluss's FileLogProjection): a new
 * RecordBatch message holding only the selected columns' field nodes and
 * buffers, with the body bytes copied verbatim (values are never decoded and
 * compressed buffers are never recompressed: compression is per buffer).
 * Thread rule: none.
 *
 * Output, for selected buffers b0..bk of the input (in input order):
 *
 * | Buffer entry | offset                       | length        |
 * |--------------|------------------------------|---------------|
 * | b0           | 0                            | b0.length     |
 * | bi           | Σ padded(bj), j < i          | bi.length     |
 *
 * padded(b) = next input buffer's offset − b.offset (bodyLength − b.offset
 * for the last input buffer), so the writer's 8- or 64-byte alignment of
 * each buffer survives; body = the padded ranges back to back.
 */
#include <string.h>

#include "arrow_int.h"
#include "common_alloc.h"

#define PJ_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static int fl_arrow_project_check(const int32_t *projected, size_t projected_count,
                                  size_t column_count, fl_error_t *err) {
    if (!projected || projected_count == 0)
        return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION, "empty column projection");
    for (size_t i = 0; i < projected_count; i++) {
        if (projected[i] < 0 || (size_t)projected[i] >= column_count)
            return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION,
                              "projected column %d is outside the %zu columns", projected[i],
                              column_count);
        if (i > 0 && projected[i] <= projected[i - 1])
            return fl_err_set(err, FLUSS_ERR_INVALID_COLUMN_PROJECTION,
                              "projected columns are not strictly ascending (%d after %d)",
                              projected[i], projected[i - 1]);
    }
    return 0;
}

/* One selected buffer: where it is in the source body, its padded length
 * there, and its Buffer.length. */
typedef struct fl_arrow_pick {
    int64_t src;
    int64_t padded;
    int64_t length;
} fl_arrow_pick_t;

int fl_arrow_project(const uint8_t *msg, size_t len, const fl_datatype_t *const *column_types,
                     size_t column_count, const int32_t *projected, size_t projected_count,
                     fl_buf_t *out, fl_error_t *err) {
    fl_arrow_batch_view_t v;
    int rc = fl_arrow_project_check(projected, projected_count, column_count, err);
    if (rc) return rc;
    if ((rc = fl_arrow_message_parse(msg, len, &v, err))) return rc;
    if (v.variadic_count)
        return fl_err_set(err, PJ_CORRUPT,
                          "arrow RecordBatch: variadicBufferCounts present (no Fluss type uses "
                          "view layouts)");
    if ((rc = fl_arrow_check_buffer_order(&v, err))) return rc;

    /* counts are bounded by the metadata size, hence by len */
    fl_arrow_node_t *nodes = fl_try_malloc((v.node_count ? v.node_count : 1) * sizeof(*nodes));
    fl_arrow_pick_t *picks = fl_try_malloc((v.buffer_count ? v.buffer_count : 1) * sizeof(*picks));
    fl_arrow_buffer_t *bufs = fl_try_malloc((v.buffer_count ? v.buffer_count : 1) * sizeof(*bufs));
    size_t start = out->len;
    if (!nodes || !picks || !bufs) {
        rc = fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory to project %zu buffers",
                        v.buffer_count);
        goto fail;
    }

    /* Walk every column: where its nodes and buffers start, and pick the
     * selected ones. */
    size_t node_at = 0, buf_at = 0, sel_nodes = 0, sel_bufs = 0, next = 0;
    int64_t body_len = 0;
    for (size_t c = 0; c < column_count; c++) {
        uint32_t cn, cb;
        if (fl_arrow_column_shape(column_types[c], &cn, &cb)) {
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: column %zu has no Arrow layout",
                            c);
            goto fail;
        }
        if (cn > v.node_count - node_at || cb > v.buffer_count - buf_at) {
            rc = fl_err_set(err, PJ_CORRUPT,
                            "arrow RecordBatch: %zu nodes and %zu buffers run out at column %zu "
                            "of the %zu-column schema",
                            v.node_count, v.buffer_count, c, column_count);
            goto fail;
        }
        fl_arrow_node_t top = fl_arrow_batch_node(&v, node_at);
        if (top.length != v.length) {
            rc = fl_err_set(err, PJ_CORRUPT,
                            "arrow RecordBatch: column %zu has length %lld in a batch of %lld "
                            "rows",
                            c, (long long)top.length, (long long)v.length);
            goto fail;
        }
        if (next < projected_count && (size_t)projected[next] == c) {
            for (uint32_t i = 0; i < cn; i++)
                nodes[sel_nodes++] = fl_arrow_batch_node(&v, node_at + i);
            for (uint32_t i = 0; i < cb; i++) {
                size_t k = buf_at + i;
                fl_arrow_buffer_t b = fl_arrow_batch_buffer(&v, k);
                int64_t end = k + 1 < v.buffer_count ? fl_arrow_batch_buffer(&v, k + 1).offset
                                                     : (int64_t)v.body_len;
                fl_arrow_pick_t *pk = &picks[sel_bufs];
                pk->src = b.offset;
                pk->padded = end - b.offset; /* >= length: ordered, checked above */
                pk->length = b.length;
                bufs[sel_bufs].offset = body_len;
                bufs[sel_bufs].length = b.length;
                body_len += pk->padded; /* <= v.body_len: ranges are disjoint */
                sel_bufs++;
            }
            next++;
        }
        node_at += cn;
        buf_at += cb;
    }
    if (node_at != v.node_count || buf_at != v.buffer_count) {
        rc = fl_err_set(err, PJ_CORRUPT,
                        "arrow RecordBatch: %zu nodes and %zu buffers, the schema's %zu columns "
                        "need %zu and %zu",
                        v.node_count, v.buffer_count, column_count, node_at, buf_at);
        goto fail;
    }

    fl_arrow_message_write_header(out, v.version, v.length, nodes, sel_nodes, bufs, sel_bufs,
                                  v.codec, body_len);
    uint8_t *d = fl_buf_try_reserve(out, (size_t)body_len);
    if (!d) {
        rc = fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory for a %lld-byte body",
                        (long long)body_len);
        goto fail;
    }
    for (size_t s = 0; s < sel_bufs; s++)
        memcpy(d + bufs[s].offset, v.body + picks[s].src, (size_t)picks[s].padded);
    out->len += (size_t)body_len;
    rc = 0;
fail:
    fl_free(nodes);
    fl_free(picks);
    fl_free(bufs);
    if (rc) out->len = start;
    return rc;
}
