/*
 * record_validate.c — PRODUCE_LOG records checked against their header and
 * schema before they are stored (record_validate.h).
 */
#include "record_validate.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arrow_validate.h"
#include "record_batch.h"
#include "record_row_builder.h"

#define RV_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

int fl_log_format_from_name(const char *name) {
    if (!name || strcasecmp(name, "ARROW") == 0) return FL_LOG_FORMAT_ARROW;
    if (strcasecmp(name, "INDEXED") == 0) return FL_LOG_FORMAT_INDEXED;
    if (strcasecmp(name, "COMPACTED") == 0) return FL_LOG_FORMAT_COMPACTED;
    return -1;
}

static int fl_change_type_check(uint8_t c, const char *where, int32_t record, fl_error_t *err) {
    if (c <= FL_CHANGE_TYPE_MAX) return 0;
    return fl_err_set(err, RV_CORRUPT, "record %d has change type byte %u in its %s (0..4)",
                      record, c, where);
}

static int fl_validate_arrow(const fl_batch_view_t *b, const uint8_t *body, size_t n,
                             const fl_datatype_t *const *types, size_t columns, fl_error_t *err) {
    size_t vector = (b->attributes & FL_BATCH_ATTR_APPEND_ONLY) ? 0 : (size_t)b->record_count;
    if (vector > n)
        return fl_err_set(err, RV_CORRUPT,
                          "the change-type vector of %zu bytes runs past the %zu record bytes",
                          vector, n);
    for (size_t i = 0; i < vector; i++) {
        int rc = fl_change_type_check(body[i], "change-type vector", (int32_t)i, err);
        if (rc) return rc;
    }
    return fl_arrow_validate(body + vector, n - vector, types, columns, b->record_count, err);
}

/* The bytes every row of the schema takes at least: its header. */
static size_t fl_row_header_bytes(fl_log_format_t format, const fl_datatype_t *const *types,
                                  size_t columns) {
    size_t bytes = (columns + 7) / 8;
    if (format != FL_LOG_FORMAT_INDEXED) return bytes;
    for (size_t i = 0; i < columns; i++) {
        const fl_datatype_t *t = types[i];
        bool var = t->root == FL_TYPE_STRING || t->root == FL_TYPE_BYTES ||
                   t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP ||
                   t->root == FL_TYPE_ROW ||
                   (t->root == FL_TYPE_DECIMAL && t->precision > 18);
        if (var) bytes += 4;
    }
    return bytes;
}

static int fl_validate_rows(const fl_batch_view_t *b, const uint8_t *body, size_t n,
                            size_t row_min, fl_error_t *err) {
    size_t pos = 0;
    for (int32_t i = 0; i < b->record_count; i++) {
        fl_change_type_t ct;
        const uint8_t *row;
        size_t row_len;
        int rc = fl_row_record_next(body, n, &pos, i, &ct, &row, &row_len, err);
        if (rc) return rc;
        if (row_len < row_min)
            return fl_err_set(err, RV_CORRUPT,
                              "record %d has a %zu-byte row, shorter than the %zu-byte row "
                              "header of its schema",
                              i, row_len, row_min);
    }
    if (pos != n)
        return fl_err_set(err, RV_CORRUPT, "%zu bytes follow the last of the batch's %d records",
                          n - pos, b->record_count);
    return 0;
}

static int fl_validate_batch(const fl_batch_view_t *b, fl_log_format_t format,
                             fl_schema_types_fn schema_types, void *ctx, fl_error_t *err) {
    int rc = fl_batch_check_crc(b, err);
    if (rc) return rc;
    size_t columns = 0;
    const fl_datatype_t *const *types = schema_types(ctx, b->schema_id, &columns);
    if (!types)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST,
                          "The record batch has schema id %d, which the table does not have.",
                          b->schema_id);
    const uint8_t *body = b->data + b->records_start;
    size_t n = b->size - b->records_start;
    if (b->record_count == 0) {
        if (n == 0) return 0;
        return fl_err_set(err, RV_CORRUPT, "an empty batch (RecordCount 0) has %zu record bytes",
                          n);
    }
    if (format == FL_LOG_FORMAT_ARROW) return fl_validate_arrow(b, body, n, types, columns, err);
    return fl_validate_rows(b, body, n, fl_row_header_bytes(format, types, columns), err);
}

/* Puts "record batch at byte pos: " before a batch's error message. */
static int fl_validate_where(int rc, size_t pos, fl_error_t *err) {
    if (!err) return rc;
    char head[96];
    int n = snprintf(head, sizeof(head), "Invalid record batch at byte %zu of the records: ", pos);
    size_t hn = n > 0 && (size_t)n < sizeof(head) ? (size_t)n : 0;
    size_t keep = strnlen(err->msg, sizeof(err->msg) - 1);
    if (keep > sizeof(err->msg) - 1 - hn) keep = sizeof(err->msg) - 1 - hn;
    memmove(err->msg + hn, err->msg, keep);
    memcpy(err->msg, head, hn);
    err->msg[hn + keep] = '\0';
    return rc;
}

int fl_record_validate(const uint8_t *records, size_t len, fl_log_format_t log_format,
                       fl_schema_types_fn schema_types, void *ctx, fl_error_t *err) {
    for (size_t pos = 0; pos < len;) {
        size_t bsize;
        int rc = fl_batch_peek_size(records + pos, len - pos, len - pos, &bsize, err);
        if (rc == 1 || rc == FLUSS_ERR_RECORD_TOO_LARGE_EXCEPTION)
            return fl_err_set(err, RV_CORRUPT, "the records end inside a batch at byte %zu", pos);
        if (rc) return fl_validate_where(rc, pos, err);
        fl_batch_view_t b;
        if ((rc = fl_batch_parse(records + pos, bsize, &b, err)) ||
            (rc = fl_validate_batch(&b, log_format, schema_types, ctx, err)))
            return fl_validate_where(rc, pos, err);
        pos += bsize;
    }
    return 0;
}
