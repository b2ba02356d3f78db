/*
 * record_row_builder.c — INDEXED/COMPACTED LogRecordBatch bodies from rows
 * and the walk over their records (record_row_builder.h).
 */
#include "record_row_builder.h"

#include <string.h>

void fl_row_builder_init(fl_row_builder_t *b, fl_row_format_t format,
                         const fl_datatype_t *const *types, size_t n, int16_t schema_id,
                         bool changelog) {
    memset(b, 0, sizeof(*b));
    b->format = format;
    b->types = types;
    b->type_count = n;
    b->schema_id = schema_id;
    b->changelog = changelog;
    fl_buf_init(&b->body);
}

void fl_row_builder_free(fl_row_builder_t *b) {
    fl_buf_free(&b->body);
}

int fl_row_builder_append(fl_row_builder_t *b, const fl_row_t *row, fl_change_type_t ct,
                          fl_error_t *err) {
    size_t start = b->body.len;
    memset(fl_buf_reserve(&b->body, 5), 0, 5);
    b->body.len += 5;
    int rc = fl_row_encode(b->format, row, b->types, b->type_count, &b->body, err);
    if (rc) {
        b->body.len = start;
        return rc;
    }
    size_t rest = b->body.len - start - 4;
    uint8_t *p = b->body.data + start;
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(rest >> (8 * i));
    p[4] = (uint8_t)ct;
    if (ct != FL_CHANGE_APPEND_ONLY) b->changelog = true;
    b->rows++;
    return 0;
}

void fl_row_builder_finish(fl_row_builder_t *b, int64_t writer_id, int32_t sequence,
                           fl_buf_t *out) {
    size_t start = out->len;
    memset(fl_buf_reserve(out, FL_BATCH_HEADER_V0), 0, FL_BATCH_HEADER_V0);
    out->len += FL_BATCH_HEADER_V0;
    fl_buf_append(out, b->body.data, b->body.len);
    fl_batch_header_t h = {
        .magic = 0,
        .leader_epoch = -1,
        .schema_id = b->schema_id,
        .attributes = b->changelog ? 0 : FL_BATCH_ATTR_APPEND_ONLY,
        .last_offset_delta = b->rows > 0 ? b->rows - 1 : 0,
        .writer_id = writer_id,
        .batch_sequence = sequence,
        .record_count = b->rows,
    };
    fl_batch_write_header(out->data + start, out->len - start, &h);
}

int fl_row_record_next(const uint8_t *p, size_t len, size_t *pos, int32_t index,
                       fl_change_type_t *ct, const uint8_t **row, size_t *row_len,
                       fl_error_t *err) {
    size_t left = *pos <= len ? len - *pos : 0;
    if (left < 5)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "the records end after %d records", index);
    int32_t size = fl_get_le32(p + *pos);
    if (size < 1 || (size_t)size > left - 4)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "record %d has length %d with %zu record bytes left", index, size,
                          left - 4);
    uint8_t c = p[*pos + 4];
    if (c > FL_CHANGE_TYPE_MAX)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "record %d has change type byte %u in its attributes (0..4)", index, c);
    *ct = (fl_change_type_t)c;
    *row = p + *pos + 5;
    *row_len = (size_t)size - 1;
    *pos += 4 + (size_t)size;
    return 0;
}
