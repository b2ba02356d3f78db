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
#include "types_row_format.h"

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

/* Every record of an INDEXED or COMPACTED batch: the framing, then the
 * row decoded strictly in the format's value encoding (types_row_indexed.h,
 * types_row_compacted.h: exactly one row of the schema, nothing after it),
 * so rows of the other format or of another schema are refused here and
 * not at a reader. The decoded row is discarded. */
static int fl_validate_rows(const fl_batch_view_t *b, const uint8_t *body, size_t n,
                            fl_log_format_t format, const fl_datatype_t *const *types,
                            size_t columns, fl_error_t *err) {
    size_t pos = 0;
    fl_row_t row;
    fl_row_init(&row, columns);
    int rc = 0;
    for (int32_t i = 0; i < b->record_count && !rc; i++) {
        fl_change_type_t ct;
        const uint8_t *p;
        size_t len;
        rc = fl_row_record_next(body, n, &pos, i, &ct, &p, &len, err);
        if (rc) break;
        fl_row_reset(&row, columns);
        rc = fl_row_decode(format == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED, p,
                           len, types, columns, &row, err);
        if (rc) fl_err_prefix(err, "record %d: ", i);
    }
    fl_row_free(&row);
    if (rc) return rc;
    if (pos != n)
        return fl_err_set(err, RV_CORRUPT, "%zu bytes follow the last of the batch's %d records",
                          n - pos, b->record_count);
    return 0;
}

static int fl_validate_records(const fl_batch_view_t *b, const uint8_t *body, size_t n,
                               fl_log_format_t format, const fl_datatype_t *const *types,
                               size_t columns, fl_error_t *err) {
    if (format == FL_LOG_FORMAT_ARROW) return fl_validate_arrow(b, body, n, types, columns, err);
    return fl_validate_rows(b, body, n, format, types, columns, err);
}

static const char *const fl_format_records[] = {
    [FL_LOG_FORMAT_ARROW] = "Arrow IPC",
    [FL_LOG_FORMAT_INDEXED] = "INDEXED rows",
    [FL_LOG_FORMAT_COMPACTED] = "COMPACTED rows",
};
static const char *const fl_format_names[] = {
    [FL_LOG_FORMAT_ARROW] = "ARROW",
    [FL_LOG_FORMAT_INDEXED] = "INDEXED",
    [FL_LOG_FORMAT_COMPACTED] = "COMPACTED",
};

/* Which other formats' records the batch's records are whole and valid
 * in (a bit per fl_log_format_t), for a refusal that tells the writer
 * what it sent. An Arrow body that is not valid still counts when it
 * starts with the IPC continuation marker, after the change-type vector
 * or without one. */
static unsigned fl_records_shapes(const fl_batch_view_t *b, const uint8_t *body, size_t n,
                                  fl_log_format_t format, const fl_datatype_t *const *types,
                                  size_t columns) {
    unsigned shapes = 0;
    for (int f = FL_LOG_FORMAT_ARROW; f <= FL_LOG_FORMAT_COMPACTED; f++) {
        if (f == (int)format) continue;
        fl_error_t ignored;
        if (fl_validate_records(b, body, n, (fl_log_format_t)f, types, columns, &ignored) == 0)
            shapes |= 1u << f;
    }
    size_t vector = (b->attributes & FL_BATCH_ATTR_APPEND_ONLY) ? 0 : (size_t)b->record_count;
    static const uint8_t marker[4] = {0xff, 0xff, 0xff, 0xff};
    if (format != FL_LOG_FORMAT_ARROW &&
        ((n >= 4 && memcmp(body, marker, 4) == 0) ||
         (vector <= n && n - vector >= 4 && memcmp(body + vector, marker, 4) == 0)))
        shapes |= 1u << FL_LOG_FORMAT_ARROW;
    return shapes;
}

/* Replaces err's message, when the records are those of another format,
 * by one that names the table's format and what was sent. */
static int fl_name_mismatch(int rc, const fl_batch_view_t *b, const uint8_t *body, size_t n,
                            fl_log_format_t format, const fl_datatype_t *const *types,
                            size_t columns, fl_error_t *err) {
    unsigned shapes = fl_records_shapes(b, body, n, format, types, columns);
    if (!shapes || !err) return rc;
    char seen[64] = "";
    for (int f = FL_LOG_FORMAT_ARROW; f <= FL_LOG_FORMAT_COMPACTED; f++)
        if (shapes & (1u << f)) {
            size_t k = strlen(seen);
            snprintf(seen + k, sizeof(seen) - k, "%s%s", k ? " or " : "",
                     f == FL_LOG_FORMAT_ARROW ? "an Arrow IPC message" : fl_format_records[f]);
        }
    return fl_err_set(err, RV_CORRUPT,
                      "records are not %s; this table's log format is %s (they are %s)",
                      fl_format_records[format], fl_format_names[format], seen);
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
    rc = fl_validate_records(b, body, n, format, types, columns, err);
    if (rc == RV_CORRUPT) rc = fl_name_mismatch(rc, b, body, n, format, types, columns, err);
    return rc;
}

/* Puts "record batch at byte pos: " before a batch's error message. */
static int fl_validate_where(int rc, size_t pos, fl_error_t *err) {
    fl_err_prefix(err, "Invalid record batch at byte %zu of the records: ", pos);
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
