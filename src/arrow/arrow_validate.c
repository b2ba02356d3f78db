/*
 * arrow_validate.c — structural check of an ARROW log batch body against its
 * schema before it is stored (arrow_validate.h): the RecordBatch message's
 * field nodes and buffers walked column by column in the flattened
 * pre-order of arrow_layout.c, every size compared with what the node's
 * length needs, no value decoded, no buffer inflated. Thread rule: none.
 *
 * What each Fluss column needs, n = its node's length (Arrow columnar
 * format; validity may be empty when null_count = 0):
 *
 * | Fluss root                  | buffers (bytes at least)                    | children        |
 * |-----------------------------|---------------------------------------------|-----------------|
 * | BOOLEAN                     | validity ⌈n/8⌉, values ⌈n/8⌉                | —               |
 * | fixed width w (INT, BINARY…)| validity ⌈n/8⌉, values n·w                  | —               |
 * | CHAR, STRING, BYTES         | validity, offsets 4(n+1), data ≥ off[n]     | —               |
 * | ARRAY<e>                    | validity, offsets 4(n+1)                    | e: ≥ off[n]     |
 * | MAP<k, v>                   | validity, offsets 4(n+1)                    | entries: ≥ off[n], 1 buffer (validity); k, v: ≥ entries |
 * | ROW<f…>                     | validity                                    | each f: ≥ n     |
 *
 * (n = 0 allows empty offsets.) In a compressed body a buffer's size is the
 * uncompressed length of its 8-byte prefix; its offsets are read only when
 * the prefix says −1 (stored raw).
 *
 * LZ4 frame (lz4 frame format 1.6.x), walked without inflating:
 *
 * | size | field                                                       |
 * |------|-------------------------------------------------------------|
 * | 4    | magic 0x184D2204                                            |
 * | 3-15 | FLG, BD, [content size 8], [dict id 4], header checksum 1  |
 * | 4+m  | block: uint32 (bit 31 = stored raw) m ≤ block max, data, [checksum 4] ... |
 * | 4    | end mark 0                                                  |
 * | 0/4  | content checksum                                            |
 *
 * The header (and its checksum) is decoded by LZ4F_getFrameInfo, the ZSTD
 * frames are sized by ZSTD_findFrameCompressedSize (block headers only).
 */
#include "arrow_validate.h"

#include <lz4frame.h>
#include <string.h>
#include <zstd.h>

#include "arrow_flatbuf.h"
#include "arrow_int.h"

#define AV_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define FL_ARROW_NODE_LENGTH_MAX INT32_MAX /* Arrow int32 offsets, Fluss int32 counts */
#define FL_LZ4_MAGIC 0x184D2204u
#define FL_LZ4_BLOCK_RAW 0x80000000u

/* One walk over a parsed message. */
typedef struct fl_arrow_walk {
    const fl_arrow_batch_view_t *v;
    size_t node_at, buf_at;
    size_t column;       /* top-level column being walked, for messages */
    LZ4F_dctx *lz4;      /* made on the first LZ4 buffer */
    fl_error_t *err;
} fl_arrow_walk_t;

/* A buffer as the checks see it: its uncompressed size, and its bytes when
 * they can be read without inflating (NULL otherwise). */
typedef struct fl_arrow_sized {
    uint64_t size;
    const uint8_t *bytes;
} fl_arrow_sized_t;

int fl_arrow_check_buffer_order(const fl_arrow_batch_view_t *v, fl_error_t *err) {
    for (size_t i = 0; i + 1 < v->buffer_count; i++) {
        fl_arrow_buffer_t a = fl_arrow_batch_buffer(v, i), b = fl_arrow_batch_buffer(v, i + 1);
        if (a.offset + a.length > b.offset) /* no overflow: both within body_len */
            return fl_err_set(err, AV_CORRUPT,
                              "arrow RecordBatch: buffer %zu [%lld, +%lld) overlaps or follows "
                              "buffer %zu at %lld",
                              i, (long long)a.offset, (long long)a.length, i + 1,
                              (long long)b.offset);
    }
    return 0;
}

/* ---- compressed buffers ---------------------------------------------------- */

static size_t fl_lz4_block_max(LZ4F_blockSizeID_t id) {
    switch (id) {
    case LZ4F_max256KB: return 256u << 10;
    case LZ4F_max1MB: return 1u << 20;
    case LZ4F_max4MB: return 4u << 20;
    default: return 64u << 10;
    }
}

static int fl_arrow_lz4_frame_check(fl_arrow_walk_t *w, const uint8_t *p, size_t n,
                                    uint64_t want, fl_error_t *err) {
    if (n < 4 || fl_arrow_le32(p) != FL_LZ4_MAGIC)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu is not an LZ4 frame (no frame magic)",
                          w->column, w->buf_at);
    if (!w->lz4 && LZ4F_isError(LZ4F_createDecompressionContext(&w->lz4, LZ4F_VERSION))) {
        w->lz4 = NULL;
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory for an LZ4 context");
    }
    LZ4F_resetDecompressionContext(w->lz4);
    LZ4F_frameInfo_t info;
    size_t pos = n;
    size_t rc = LZ4F_getFrameInfo(w->lz4, &info, p, &pos); /* pos: header bytes consumed */
    if (LZ4F_isError(rc))
        return fl_err_set(err, AV_CORRUPT, "arrow: column %zu, buffer %zu: bad LZ4 frame header: %s",
                          w->column, w->buf_at, LZ4F_getErrorName(rc));
    size_t block_max = fl_lz4_block_max(info.blockSizeID);
    size_t block_trailer = info.blockChecksumFlag == LZ4F_blockChecksumEnabled ? 4 : 0;
    uint64_t out_max = 0;
    for (;;) {
        if (n - pos < 4)
            return fl_err_set(err, AV_CORRUPT,
                              "arrow: column %zu, buffer %zu: LZ4 frame ends before its end mark",
                              w->column, w->buf_at);
        uint32_t word = fl_arrow_le32(p + pos);
        pos += 4;
        if (word == 0) break;
        size_t size = word & ~FL_LZ4_BLOCK_RAW;
        if (size > block_max || size + block_trailer > n - pos)
            return fl_err_set(err, AV_CORRUPT,
                              "arrow: column %zu, buffer %zu: LZ4 block of %zu bytes (block "
                              "maximum %zu, %zu bytes left)",
                              w->column, w->buf_at, size, block_max, n - pos);
        out_max += (word & FL_LZ4_BLOCK_RAW) ? size : block_max;
        pos += size + block_trailer;
    }
    if (info.contentChecksumFlag == LZ4F_contentChecksumEnabled) pos += 4;
    if (pos != n)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu: %zu bytes after the LZ4 frame end "
                          "(or a cut content checksum)",
                          w->column, w->buf_at, n > pos ? n - pos : 0);
    if (info.contentSize && info.contentSize != want)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu: LZ4 frame content size %llu, the "
                          "buffer declares %llu",
                          w->column, w->buf_at, (unsigned long long)info.contentSize,
                          (unsigned long long)want);
    if (out_max < want)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu: LZ4 blocks hold at most %llu bytes, "
                          "the buffer declares %llu",
                          w->column, w->buf_at, (unsigned long long)out_max,
                          (unsigned long long)want);
    return 0;
}

static int fl_arrow_zstd_frames_check(const fl_arrow_walk_t *w, const uint8_t *p, size_t n,
                                      uint64_t want, fl_error_t *err) {
    uint64_t total = 0;
    bool known = true;
    size_t frames = 0;
    for (size_t pos = 0; pos < n; frames++) {
        size_t fsize = ZSTD_findFrameCompressedSize(p + pos, n - pos);
        if (ZSTD_isError(fsize))
            return fl_err_set(err, AV_CORRUPT, "arrow: column %zu, buffer %zu: bad ZSTD frame: %s",
                              w->column, w->buf_at, ZSTD_getErrorName(fsize));
        unsigned long long cs = ZSTD_getFrameContentSize(p + pos, fsize);
        if (cs == ZSTD_CONTENTSIZE_ERROR)
            return fl_err_set(err, AV_CORRUPT, "arrow: column %zu, buffer %zu: bad ZSTD frame header",
                              w->column, w->buf_at);
        if (cs == ZSTD_CONTENTSIZE_UNKNOWN) known = false;
        else total += cs;
        pos += fsize;
    }
    if (frames == 0)
        return fl_err_set(err, AV_CORRUPT, "arrow: column %zu, buffer %zu: no ZSTD frame",
                          w->column, w->buf_at);
    if (known && total != want)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu: ZSTD frames hold %llu bytes, the "
                          "buffer declares %llu",
                          w->column, w->buf_at, (unsigned long long)total,
                          (unsigned long long)want);
    return 0;
}

/* The next buffer of the walk, sized (and its frame checked) per the codec. */
static int fl_arrow_walk_buffer(fl_arrow_walk_t *w, fl_arrow_sized_t *out) {
    fl_arrow_buffer_t b = fl_arrow_batch_buffer(w->v, w->buf_at); /* inside the body: parsed */
    const uint8_t *p = w->v->body + b.offset;
    size_t n = (size_t)b.length;
    int rc = 0;
    if (w->v->codec == FL_ARROW_CODEC_NONE || n == 0) {
        out->size = n;
        out->bytes = p;
    } else if (n < FL_ARROW_LENGTH_PREFIX) {
        rc = fl_err_set(w->err, AV_CORRUPT,
                        "arrow: column %zu, buffer %zu: %zu compressed bytes, no 8-byte length "
                        "prefix",
                        w->column, w->buf_at, n);
    } else {
        int64_t ulen = (int64_t)fl_arrow_le64(p);
        p += FL_ARROW_LENGTH_PREFIX;
        n -= FL_ARROW_LENGTH_PREFIX;
        out->bytes = NULL;
        out->size = (uint64_t)ulen;
        if (ulen == FL_ARROW_RAW_LENGTH) {
            out->size = n;
            out->bytes = p;
        } else if (ulen < 0 || (uint64_t)ulen > FL_ARROW_BUFFER_BYTES_MAX) {
            rc = fl_err_set(w->err, AV_CORRUPT,
                            "arrow: column %zu, buffer %zu declares %lld uncompressed bytes",
                            w->column, w->buf_at, (long long)ulen);
        } else if (ulen == 0) {
            if (n != 0)
                rc = fl_err_set(w->err, AV_CORRUPT,
                                "arrow: column %zu, buffer %zu: %zu bytes after a zero length",
                                w->column, w->buf_at, n);
        } else if (w->v->codec == FL_ARROW_CODEC_LZ4_FRAME) {
            rc = fl_arrow_lz4_frame_check(w, p, n, out->size, w->err);
        } else {
            rc = fl_arrow_zstd_frames_check(w, p, n, out->size, w->err);
        }
    }
    w->buf_at++;
    return rc;
}

/* ---- columns ------------------------------------------------------------- */

static int fl_arrow_need(const fl_arrow_walk_t *w, const char *what, uint64_t have,
                         uint64_t need, int64_t rows) {
    if (have >= need) return 0;
    return fl_err_set(w->err, AV_CORRUPT,
                      "arrow: column %zu, buffer %zu (%s) has %llu bytes, %lld rows need %llu",
                      w->column, w->buf_at - 1, what, (unsigned long long)have, (long long)rows,
                      (unsigned long long)need);
}

static int fl_arrow_walk_validity(fl_arrow_walk_t *w, fl_arrow_node_t node) {
    fl_arrow_sized_t b;
    int rc = fl_arrow_walk_buffer(w, &b);
    if (rc) return rc;
    if (node.null_count == 0 && b.size == 0) return 0; /* bitmap may be left out */
    return fl_arrow_need(w, "validity", b.size, ((uint64_t)node.length + 7) / 8, node.length);
}

/* An offsets buffer of a node of n rows; *last is its last offset when it
 * can be read, else -1. */
static int fl_arrow_walk_offsets(fl_arrow_walk_t *w, fl_arrow_node_t node, int64_t *last) {
    fl_arrow_sized_t b;
    *last = -1;
    int rc = fl_arrow_walk_buffer(w, &b);
    if (rc) return rc;
    if (node.length == 0) {
        *last = 0;
        return 0;
    }
    if ((rc = fl_arrow_need(w, "offsets", b.size, ((uint64_t)node.length + 1) * 4, node.length)))
        return rc;
    if (!b.bytes) return 0;
    int32_t first = (int32_t)fl_arrow_le32(b.bytes);
    int32_t end = (int32_t)fl_arrow_le32(b.bytes + (size_t)node.length * 4);
    if (first < 0 || end < first)
        return fl_err_set(w->err, AV_CORRUPT,
                          "arrow: column %zu, buffer %zu: offsets run from %d to %d", w->column,
                          w->buf_at - 1, first, end);
    *last = end;
    return 0;
}

static int fl_arrow_walk_field(fl_arrow_walk_t *w, const fl_datatype_t *t, int depth,
                               int64_t min_length, bool exact);

static int fl_arrow_walk_children(fl_arrow_walk_t *w, const fl_datatype_t *t, int depth,
                                  fl_arrow_node_t node) {
    int rc = 0;
    int64_t last;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        if ((rc = fl_arrow_walk_offsets(w, node, &last))) return rc;
        return fl_arrow_walk_field(w, t->element, depth + 1, last < 0 ? 0 : last, false);
    case FL_TYPE_MAP: {
        if ((rc = fl_arrow_walk_offsets(w, node, &last))) return rc;
        /* the "entries" struct: a node and its validity, then key and value
         * (there: the map's shape was checked against the counts) */
        fl_arrow_node_t entries = fl_arrow_batch_node(w->v, w->node_at++);
        if (entries.length > FL_ARROW_NODE_LENGTH_MAX || entries.length < (last < 0 ? 0 : last))
            return fl_err_set(w->err, AV_CORRUPT,
                              "arrow: column %zu: map entries of length %lld, the offsets reach "
                              "%lld",
                              w->column, (long long)entries.length, (long long)last);
        if ((rc = fl_arrow_walk_validity(w, entries))) return rc;
        if ((rc = fl_arrow_walk_field(w, t->key, depth + 1, entries.length, false))) return rc;
        return fl_arrow_walk_field(w, t->value, depth + 1, entries.length, false);
    }
    case FL_TYPE_ROW:
        for (size_t i = 0; i < t->field_count && !rc; i++)
            rc = fl_arrow_walk_field(w, t->fields[i].type, depth + 1, node.length, false);
        return rc;
    default:
        return 0;
    }
}

/* The leaf buffers after the validity bitmap. */
static int fl_arrow_walk_values(fl_arrow_walk_t *w, const fl_datatype_t *t,
                                fl_arrow_node_t node) {
    fl_arrow_sized_t b;
    int rc;
    uint64_t n = (uint64_t)node.length;
    switch (t->root) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: {
        int64_t last;
        if ((rc = fl_arrow_walk_offsets(w, node, &last))) return rc;
        if ((rc = fl_arrow_walk_buffer(w, &b))) return rc;
        return fl_arrow_need(w, "data, to the last offset", b.size, last < 0 ? 0 : (uint64_t)last,
                             node.length);
    }
    case FL_TYPE_BOOLEAN:
        if ((rc = fl_arrow_walk_buffer(w, &b))) return rc;
        return fl_arrow_need(w, "values", b.size, (n + 7) / 8, node.length);
    default: /* fixed width: width <= INT32_MAX, n <= INT32_MAX, no overflow */
        if ((rc = fl_arrow_walk_buffer(w, &b))) return rc;
        return fl_arrow_need(w, "values", b.size, n * fl_arrow_value_width(t), node.length);
    }
}

static bool fl_type_is_leaf(fl_type_root_t r) {
    return r != FL_TYPE_ARRAY && r != FL_TYPE_MAP && r != FL_TYPE_ROW;
}

static int fl_arrow_walk_field(fl_arrow_walk_t *w, const fl_datatype_t *t, int depth,
                               int64_t min_length, bool exact) {
    uint32_t nodes, buffers;
    if (depth > FL_TYPE_DEPTH_MAX || fl_arrow_column_shape(t, &nodes, &buffers))
        return fl_err_set(w->err, FLUSS_ERR__INVALID_ARG, "arrow: column %zu has no Arrow layout",
                          w->column);
    if (nodes > w->v->node_count - w->node_at || buffers > w->v->buffer_count - w->buf_at)
        return fl_err_set(w->err, AV_CORRUPT,
                          "arrow RecordBatch: %zu nodes and %zu buffers run out at column %zu",
                          w->v->node_count, w->v->buffer_count, w->column);
    fl_arrow_node_t node = fl_arrow_batch_node(w->v, w->node_at++);
    if (exact ? node.length != min_length
              : node.length < min_length || node.length > FL_ARROW_NODE_LENGTH_MAX)
        return fl_err_set(w->err, AV_CORRUPT,
                          "arrow: column %zu: a node of length %lld where %s%lld rows are due",
                          w->column, (long long)node.length, exact ? "" : "at least ",
                          (long long)min_length);
    int rc = fl_arrow_walk_validity(w, node);
    if (rc) return rc;
    return fl_type_is_leaf(t->root) ? fl_arrow_walk_values(w, t, node)
                                    : fl_arrow_walk_children(w, t, depth, node);
}

static int fl_arrow_walk_columns(fl_arrow_walk_t *w, const fl_datatype_t *const *column_types,
                                 size_t column_count) {
    const fl_arrow_batch_view_t *v = w->v;
    for (w->column = 0; w->column < column_count; w->column++) {
        const fl_datatype_t *t = column_types[w->column];
        fl_arrow_node_t top = w->node_at < v->node_count ? fl_arrow_batch_node(v, w->node_at)
                                                         : (fl_arrow_node_t){0, 0};
        if (t && !t->nullable && top.null_count > 0)
            return fl_err_set(w->err, AV_CORRUPT,
                              "arrow: column %zu is NOT NULL but has %lld nulls", w->column,
                              (long long)top.null_count);
        int rc = fl_arrow_walk_field(w, t, 0, v->length, true);
        if (rc) return rc;
    }
    if (w->node_at != v->node_count || w->buf_at != v->buffer_count)
        return fl_err_set(w->err, AV_CORRUPT,
                          "arrow RecordBatch: %zu nodes and %zu buffers, the schema's %zu columns "
                          "need %zu and %zu",
                          v->node_count, v->buffer_count, column_count, w->node_at, w->buf_at);
    return 0;
}

int fl_arrow_validate(const uint8_t *msg, size_t len, const fl_datatype_t *const *column_types,
                      size_t column_count, int64_t rows, fl_error_t *err) {
    fl_arrow_batch_view_t v;
    int rc = fl_arrow_message_parse(msg, len, &v, err);
    if (rc) return rc;
    if (v.message_len != len)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow: %zu bytes follow the RecordBatch message in the batch",
                          len - v.message_len);
    if (v.variadic_count)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow RecordBatch: variadicBufferCounts present (no Fluss type uses "
                          "view layouts)");
    if (v.length != rows)
        return fl_err_set(err, AV_CORRUPT,
                          "arrow RecordBatch of %lld rows in a batch of %lld records",
                          (long long)v.length, (long long)rows);
    if ((rc = fl_arrow_check_buffer_order(&v, err))) return rc;
    fl_arrow_walk_t w;
    memset(&w, 0, sizeof(w));
    w.v = &v;
    w.err = err;
    rc = fl_arrow_walk_columns(&w, column_types, column_count);
    if (w.lz4) LZ4F_freeDecompressionContext(w.lz4);
    return rc;
}
