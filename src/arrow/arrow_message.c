/*
 * arrow_message.c — the encapsulated Arrow IPC RecordBatch message that
 * forms the body of a Fluss ARROW log batch (protocol.md §4.3): parse into
 * a borrowed view, and write the prefix + Message metadata for the writer
 * and the projection. Thread rule: none.
 *
 * Prefix (little-endian):
 *
 * | off | size | field                                                  |
 * |-----|------|--------------------------------------------------------|
 * | 0   | 4    | 0xFFFFFFFF continuation marker                         |
 * | 4   | 4    | int32 metadata length M (0 = end of stream)            |
 * | 8   | M    | flatbuffer Message, zero padded                        |
 * | 8+M | B    | body, B = Message.bodyLength                           |
 *
 * Flatbuffer tables used (Message.fbs / Schema.fbs), by vtable slot:
 *
 * | table           | slot | field                | type                       |
 * |-----------------|------|----------------------|----------------------------|
 * | Message         | 0    | version              | int16 MetadataVersion (V5=4)|
 * | Message         | 1    | header_type          | uint8 (RecordBatch = 3)    |
 * | Message         | 2    | header               | offset → RecordBatch       |
 * | Message         | 3    | bodyLength           | int64                      |
 * | Message         | 4    | custom_metadata      | ignored                    |
 * | RecordBatch     | 0    | length               | int64 rows                 |
 * | RecordBatch     | 1    | nodes                | [FieldNode{int64 length, int64 null_count}] |
 * | RecordBatch     | 2    | buffers              | [Buffer{int64 offset, int64 length}] |
 * | RecordBatch     | 3    | compression          | offset → BodyCompression   |
 * | RecordBatch     | 4    | variadicBufferCounts | [int64]                    |
 * | BodyCompression | 0    | codec                | int8 LZ4_FRAME=0, ZSTD=1   |
 * | BodyCompression | 1    | method               | int8 BUFFER=0              |
 */
#include <string.h>

#include "arrow_flatbuf.h"
#include "arrow_int.h"

#define MSG_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

fl_arrow_node_t fl_arrow_batch_node(const fl_arrow_batch_view_t *v, size_t i) {
    const uint8_t *p = v->nodes_raw + i * FL_ARROW_STRUCT_BYTES;
    fl_arrow_node_t n = {(int64_t)fl_arrow_le64(p), (int64_t)fl_arrow_le64(p + 8)};
    return n;
}

fl_arrow_buffer_t fl_arrow_batch_buffer(const fl_arrow_batch_view_t *v, size_t i) {
    const uint8_t *p = v->buffers_raw + i * FL_ARROW_STRUCT_BYTES;
    fl_arrow_buffer_t b = {(int64_t)fl_arrow_le64(p), (int64_t)fl_arrow_le64(p + 8)};
    return b;
}

static int fl_arrow_parse_compression(const fl_arrow_fb_table_t *rb, fl_arrow_codec_t *codec,
                                      fl_error_t *err) {
    fl_arrow_fb_table_t bc;
    bool present;
    *codec = FL_ARROW_CODEC_NONE;
    int rc = fl_arrow_fb_child(rb, 3, "BodyCompression", &bc, &present, err);
    if (rc || !present) return rc;
    uint8_t c, method;
    if ((rc = fl_arrow_fb_u8(&bc, 0, 0, &c, err))) return rc;
    if ((rc = fl_arrow_fb_u8(&bc, 1, 0, &method, err))) return rc;
    if (c != FL_ARROW_CODEC_LZ4_FRAME && c != FL_ARROW_CODEC_ZSTD)
        return fl_err_set(err, MSG_CORRUPT, "arrow metadata: unknown compression codec %u", c);
    if (method != 0)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow metadata: unknown body compression method %u (only BUFFER)",
                          method);
    *codec = (fl_arrow_codec_t)c;
    return 0;
}

static int fl_arrow_check_entries(const fl_arrow_batch_view_t *v, fl_error_t *err) {
    for (size_t i = 0; i < v->node_count; i++) {
        fl_arrow_node_t n = fl_arrow_batch_node(v, i);
        if (n.length < 0 || n.null_count < 0 || n.null_count > n.length)
            return fl_err_set(err, MSG_CORRUPT,
                              "arrow RecordBatch: node %zu has length %lld and null count %lld",
                              i, (long long)n.length, (long long)n.null_count);
    }
    for (size_t i = 0; i < v->buffer_count; i++) {
        fl_arrow_buffer_t b = fl_arrow_batch_buffer(v, i);
        if (b.offset < 0 || b.length < 0 || (uint64_t)b.offset > v->body_len ||
            (uint64_t)b.length > v->body_len - (uint64_t)b.offset)
            return fl_err_set(err, MSG_CORRUPT,
                              "arrow RecordBatch: buffer %zu [offset %lld, length %lld] is "
                              "outside the %zu-byte body",
                              i, (long long)b.offset, (long long)b.length, v->body_len);
    }
    return 0;
}

int fl_arrow_message_parse(const uint8_t *p, size_t len, fl_arrow_batch_view_t *out,
                           fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    out->codec = FL_ARROW_CODEC_NONE;
    if (len < FL_ARROW_PREFIX_BYTES)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow message: %zu bytes, shorter than its 8-byte prefix", len);
    uint32_t marker = fl_arrow_le32(p);
    if (marker != FL_ARROW_CONTINUATION)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow message: continuation marker is 0x%08x, not 0xffffffff", marker);
    int32_t meta_len = (int32_t)fl_arrow_le32(p + 4);
    if (meta_len == 0)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow message: end-of-stream marker where a RecordBatch was expected");
    if (meta_len < 0 || (size_t)meta_len > len - FL_ARROW_PREFIX_BYTES)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow message: metadata length %d exceeds the %zu bytes that follow",
                          meta_len, len - FL_ARROW_PREFIX_BYTES);
    out->metadata = p + FL_ARROW_PREFIX_BYTES;
    out->metadata_len = (size_t)meta_len;

    fl_arrow_fb_table_t msg, rb;
    int rc = fl_arrow_fb_root(out->metadata, out->metadata_len, "Message", &msg, err);
    if (rc) return rc;
    if ((rc = fl_arrow_fb_i16(&msg, 0, 0, &out->version, err))) return rc;
    if (out->version != FL_ARROW_METADATA_V4 && out->version != FL_ARROW_METADATA_V5)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow metadata: MetadataVersion %d (need V4=3 or V5=4)",
                          out->version);
    uint8_t header_type;
    if ((rc = fl_arrow_fb_u8(&msg, 1, 0, &header_type, err))) return rc;
    if (header_type != FL_ARROW_HEADER_RECORD_BATCH)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow metadata: message header type %u, not RecordBatch (3)",
                          header_type);
    int64_t body_len;
    if ((rc = fl_arrow_fb_i64(&msg, 3, 0, &body_len, err))) return rc;
    size_t room = len - FL_ARROW_PREFIX_BYTES - out->metadata_len;
    if (body_len < 0 || (uint64_t)body_len > room)
        return fl_err_set(err, MSG_CORRUPT,
                          "arrow message: bodyLength %lld exceeds the %zu bytes that follow",
                          (long long)body_len, room);
    out->body = out->metadata + out->metadata_len;
    out->body_len = (size_t)body_len;
    out->message_len = FL_ARROW_PREFIX_BYTES + out->metadata_len + out->body_len;

    bool present;
    if ((rc = fl_arrow_fb_child(&msg, 2, "RecordBatch", &rb, &present, err))) return rc;
    if (!present)
        return fl_err_set(err, MSG_CORRUPT, "arrow metadata: Message has no RecordBatch header");
    if ((rc = fl_arrow_fb_i64(&rb, 0, 0, &out->length, err))) return rc;
    if (out->length < 0)
        return fl_err_set(err, MSG_CORRUPT, "arrow RecordBatch: negative length %lld",
                          (long long)out->length);
    if ((rc = fl_arrow_fb_vector(&rb, 1, FL_ARROW_STRUCT_BYTES, "nodes", &out->nodes_raw,
                                 &out->node_count, err)))
        return rc;
    if ((rc = fl_arrow_fb_vector(&rb, 2, FL_ARROW_STRUCT_BYTES, "buffers", &out->buffers_raw,
                                 &out->buffer_count, err)))
        return rc;
    const uint8_t *variadic;
    if ((rc = fl_arrow_fb_vector(&rb, 4, 8, "variadicBufferCounts", &variadic,
                                 &out->variadic_count, err)))
        return rc;
    if ((rc = fl_arrow_parse_compression(&rb, &out->codec, err))) return rc;
    return fl_arrow_check_entries(out, err);
}

void fl_arrow_message_write_header(fl_buf_t *out, int16_t version, int64_t rows,
                                   const fl_arrow_node_t *nodes, size_t node_count,
                                   const fl_arrow_buffer_t *buffers, size_t buffer_count,
                                   fl_arrow_codec_t codec, int64_t body_len) {
    size_t start = out->len;
    fl_buf_reserve(out, FL_ARROW_PREFIX_BYTES);
    memset(out->data + out->len, 0, FL_ARROW_PREFIX_BYTES);
    out->len += FL_ARROW_PREFIX_BYTES;

    fl_arrow_fb_builder_t b;
    fl_arrow_fb_builder_init(&b, out);
    size_t fpos[4];
    const fl_arrow_fb_field_t msg_fields[] = {
        {0, 2, (uint16_t)version},
        {1, 1, FL_ARROW_HEADER_RECORD_BATCH},
        {2, 4, 0},
        {3, 8, (uint64_t)body_len},
    };
    size_t msg = fl_arrow_fb_add_table(&b, msg_fields, 4, fpos);
    size_t header_field = fpos[2];

    const fl_arrow_fb_field_t rb_fields[] = {
        {0, 8, (uint64_t)rows}, {1, 4, 0}, {2, 4, 0}, {3, 4, 0}};
    size_t rb_n = codec == FL_ARROW_CODEC_NONE ? 3 : 4;
    size_t rb = fl_arrow_fb_add_table(&b, rb_fields, rb_n, fpos);
    fl_arrow_fb_patch(&b, header_field, rb);
    size_t nodes_field = fpos[1], buffers_field = fpos[2], comp_field = fpos[3];

    if (codec != FL_ARROW_CODEC_NONE) {
        const fl_arrow_fb_field_t bc_fields[] = {{0, 1, (uint8_t)codec}, {1, 1, 0}};
        fl_arrow_fb_patch(&b, comp_field, fl_arrow_fb_add_table(&b, bc_fields, 2, NULL));
    }

    size_t v = fl_arrow_fb_add_vector(&b, NULL, node_count, FL_ARROW_STRUCT_BYTES);
    for (size_t i = 0; i < node_count; i++) {
        uint8_t *e = fl_arrow_fb_at(&b, v + 4 + i * FL_ARROW_STRUCT_BYTES);
        fl_arrow_put_le64(e, (uint64_t)nodes[i].length);
        fl_arrow_put_le64(e + 8, (uint64_t)nodes[i].null_count);
    }
    fl_arrow_fb_patch(&b, nodes_field, v);
    v = fl_arrow_fb_add_vector(&b, NULL, buffer_count, FL_ARROW_STRUCT_BYTES);
    for (size_t i = 0; i < buffer_count; i++) {
        uint8_t *e = fl_arrow_fb_at(&b, v + 4 + i * FL_ARROW_STRUCT_BYTES);
        fl_arrow_put_le64(e, (uint64_t)buffers[i].offset);
        fl_arrow_put_le64(e + 8, (uint64_t)buffers[i].length);
    }
    fl_arrow_fb_patch(&b, buffers_field, v);

    size_t meta_len = fl_arrow_fb_finish(&b, msg, FL_ARROW_PREFIX_BYTES);
    fl_arrow_put_le32(out->data + start, FL_ARROW_CONTINUATION);
    fl_arrow_put_le32(out->data + start + 4, (uint32_t)meta_len);
}
