/*
 * arrow_writer.c — builds one encapsulated Arrow IPC RecordBatch message
 * (the ARROW log batch body, protocol.md §4.3) from column buffers given in
 * flattened pre-order, as Fluss's ArrowWriter does for the client writer and
 * as the server does for generated changelogs. Thread rule: none.
 *
 * Body layout we write: each buffer at an offset that is a multiple of the
 * alignment (8, like Java, or 64, like arrow-rs), zero padded; a compressed
 * buffer is stored in the per-buffer form of arrow_compress.c; an empty
 * buffer takes no bytes (offset = the next aligned position, length 0).
 */
#include <string.h>

#include "arrow_int.h"
#include "common_alloc.h"

void fl_arrow_writer_init(fl_arrow_writer_t *w, const fl_arrow_write_options_t *opts) {
    memset(w, 0, sizeof(*w));
    w->opts.codec = FL_ARROW_CODEC_NONE;
    w->opts.alignment = 8;
    if (opts) {
        w->opts = *opts;
        if (w->opts.alignment != 64) w->opts.alignment = 8;
    }
    fl_buf_init(&w->body);
}

void fl_arrow_writer_reset(fl_arrow_writer_t *w) {
    fl_free(w->nodes);
    fl_free(w->buffers);
    fl_buf_free(&w->body);
    memset(w, 0, sizeof(*w));
    w->opts.codec = FL_ARROW_CODEC_NONE;
    w->opts.alignment = 8;
}

void fl_arrow_writer_add_node(fl_arrow_writer_t *w, int64_t length, int64_t null_count) {
    if (w->node_count == w->node_cap) {
        w->node_cap = w->node_cap ? 2 * w->node_cap : 8;
        w->nodes = fl_realloc(w->nodes, w->node_cap * sizeof(*w->nodes));
    }
    w->nodes[w->node_count].length = length;
    w->nodes[w->node_count].null_count = null_count;
    w->node_count++;
}

int fl_arrow_writer_add_buffer(fl_arrow_writer_t *w, const void *p, size_t n, fl_error_t *err) {
    if (n > FL_ARROW_BUFFER_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: %zu-byte buffer is too large", n);
    size_t offset = w->body.len;
    if (w->opts.codec == FL_ARROW_CODEC_NONE) {
        fl_buf_append(&w->body, p, n);
    } else {
        int rc = fl_arrow_compress(w->opts.codec, w->opts.level, p, n, &w->body, err);
        if (rc) {
            w->body.len = offset;
            return rc;
        }
    }
    size_t stored = w->body.len - offset;
    size_t pad = (w->opts.alignment - stored % w->opts.alignment) % w->opts.alignment;
    if (pad) {
        memset(fl_buf_reserve(&w->body, pad), 0, pad);
        w->body.len += pad;
    }
    if (w->buffer_count == w->buffer_cap) {
        w->buffer_cap = w->buffer_cap ? 2 * w->buffer_cap : 8;
        w->buffers = fl_realloc(w->buffers, w->buffer_cap * sizeof(*w->buffers));
    }
    w->buffers[w->buffer_count].offset = (int64_t)offset;
    w->buffers[w->buffer_count].length = (int64_t)stored;
    w->buffer_count++;
    return 0;
}

int fl_arrow_writer_finish(fl_arrow_writer_t *w, int64_t rows, fl_buf_t *out, fl_error_t *err) {
    if (rows < 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: negative row count %lld",
                          (long long)rows);
    fl_arrow_message_write_header(out, FL_ARROW_METADATA_V5, rows, w->nodes, w->node_count,
                                  w->buffers, w->buffer_count, w->opts.codec,
                                  (int64_t)w->body.len);
    fl_buf_append(out, w->body.data, w->body.len);
    return 0;
}
