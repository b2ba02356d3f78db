/*
 * record_project.c — projection pushdown over log batches
 * (record_project.h).
 */
#include "record_project.h"

#include <string.h>

#include "arrow_ipc.h"
#include "common_alloc.h"
#include "record_batch.h"

int fl_projection_check(const int32_t *fields, size_t n, size_t column_count, fl_error_t *err) {
    const int code = FLUSS_ERR_INVALID_COLUMN_PROJECTION;
    if (n == 0) return fl_err_set(err, code, "The projection must not be empty.");
    for (size_t i = 0; i < n; i++) {
        if (fields[i] < 0 || (size_t)fields[i] >= column_count)
            return fl_err_set(err, code,
                              "Projected field index %d is out of bounds for a schema of %zu "
                              "fields.",
                              fields[i], column_count);
        if (i > 0 && fields[i] <= fields[i - 1])
            return fl_err_set(err, code,
                              "The projection %s: field %d follows %d; projected fields must be "
                              "strictly ascending.",
                              fields[i] == fields[i - 1] ? "has a duplicate" : "is not in order",
                              fields[i], fields[i - 1]);
    }
    return 0;
}

static int fl_project_batch(const fl_batch_view_t *b, const fl_projection_t *p,
                            fl_schema_types_fn schema_types, void *ctx, fl_buf_t *out,
                            fl_error_t *err) {
    if (b->record_count == 0) { /* header only */
        fl_buf_append(out, b->data, b->size);
        return 0;
    }
    size_t columns = 0;
    const fl_datatype_t *const *types = schema_types(ctx, b->schema_id, &columns);
    if (!types)
        return fl_err_set(err, FLUSS_ERR_SCHEMA_NOT_EXIST, "Unknown schema id %d in a log batch.",
                          b->schema_id);
    const int32_t *fields = p->fields;
    int32_t *mapped = NULL;
    int rc = 0;
    if (p->positions) {
        mapped = fl_calloc(p->field_count ? p->field_count : 1, sizeof(int32_t));
        rc = p->positions(ctx, b->schema_id, p->fields, p->field_count, mapped, err);
        fields = mapped;
    }
    if (!rc) rc = fl_projection_check(fields, p->field_count, columns, err);
    if (rc) {
        fl_free(mapped);
        return rc;
    }
    size_t vector = (b->attributes & FL_BATCH_ATTR_APPEND_ONLY) ? 0 : (size_t)b->record_count;
    size_t body = b->records_start + vector;
    if (body > b->size) {
        fl_free(mapped);
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                          "the change-type vector runs past the batch");
    }
    size_t start = out->len;
    fl_buf_append(out, b->data, b->header_size); /* statistics dropped below */
    if (b->magic >= 1) fl_put_le32(out->data + start + b->header_size - 4, 0);
    fl_buf_append(out, b->data + b->records_start, vector);
    rc = fl_arrow_project(b->data + body, b->size - body, types, columns, fields,
                          p->field_count, out, err);
    fl_free(mapped);
    if (rc) {
        out->len = start;
        return rc;
    }
    fl_batch_set_length(out->data + start, out->len - start);
    return 0;
}

int fl_record_project(const uint8_t *records, size_t len, const fl_projection_t *p,
                      fl_schema_types_fn schema_types, void *ctx, fl_buf_t *out,
                      fl_error_t *err) {
    for (size_t pos = 0; pos < len;) {
        size_t bsize;
        int rc = fl_batch_peek_size(records + pos, len - pos, len - pos, &bsize, err);
        if (rc == 1 || (rc == 0 && pos + bsize > len))
            return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION,
                              "a stored batch is cut off at byte %zu", pos);
        if (rc) return rc;
        fl_batch_view_t b;
        if ((rc = fl_batch_parse(records + pos, bsize, &b, err))) return rc;
        if ((rc = fl_project_batch(&b, p, schema_types, ctx, out, err))) return rc;
        pos += bsize;
    }
    return 0;
}
