/*
 * record_rows.c — the rows of one log batch in any log format
 * (record_rows.h).
 */
#include "record_rows.h"

#include <string.h>

#include "arrow_ipc.h"
#include "arrow_rows.h"
#include "common_alloc.h"
#include "record_row_builder.h"
#include "types_row_format.h"

#define RR_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static void free_columns(fl_batch_rows_t *it, size_t decoded) {
    for (size_t i = 0; i < decoded; i++) fl_arrow_array_free(&it->cols[i]);
    fl_free(it->cols);
    it->cols = NULL;
}

/* The change-type vector (changelog batches only) and the Arrow message
 * after it, every column decoded. */
static int open_arrow(fl_batch_rows_t *it, fl_error_t *err) {
    const fl_batch_view_t *b = it->b;
    size_t pos = b->records_start, rows = (size_t)b->record_count;
    if (!(b->attributes & FL_BATCH_ATTR_APPEND_ONLY)) {
        if (b->size - pos < rows)
            return fl_err_set(err, RR_CORRUPT, "the change-type vector of %zu bytes runs past the "
                                               "batch's %zu record bytes",
                              rows, b->size - pos);
        it->change_types = b->data + pos;
        pos += rows;
    }
    fl_arrow_batch_view_t av;
    int rc = fl_arrow_message_parse(b->data + pos, b->size - pos, &av, err);
    if (rc) return rc;
    if (av.length != b->record_count)
        return fl_err_set(err, RR_CORRUPT, "the Arrow message has %lld rows, the header %d",
                          (long long)av.length, b->record_count);
    it->cols = fl_calloc(it->n ? it->n : 1, sizeof(*it->cols));
    fl_arrow_decoder_t d;
    fl_arrow_decoder_init(&d, &av, FL_BATCH_ROWS_BUFFER_MAX);
    for (size_t i = 0; i < it->n; i++)
        if ((rc = fl_arrow_decoder_next(&d, it->types[i], &it->cols[i], err))) {
            free_columns(it, i);
            return rc;
        }
    return 0;
}

int fl_batch_rows_open(fl_batch_rows_t *it, const fl_batch_view_t *b, fl_log_format_t format,
                       const fl_datatype_t *const *types, size_t n, fl_error_t *err) {
    memset(it, 0, sizeof(*it));
    it->b = b;
    it->format = format;
    it->types = types;
    it->n = n;
    it->pos = b->records_start;
    /* an empty batch is its header alone, in every format */
    if (b->record_count == 0 || format != FL_LOG_FORMAT_ARROW) return 0;
    return open_arrow(it, err);
}

static fl_batch_rows_next_t next_arrow(fl_batch_rows_t *it, fl_change_type_t *ct, fl_row_t *row,
                                       fl_error_t *err) {
    int32_t i = it->index;
    uint8_t c = it->change_types ? it->change_types[i] : FL_CHANGE_APPEND_ONLY;
    if (c > FL_CHANGE_TYPE_MAX) {
        fl_err_set(err, RR_CORRUPT, "record %d has change type byte %u (0..4)", i, c);
        return FL_BATCH_ROWS_ERROR;
    }
    if (fl_arrow_row_read(it->cols, it->n, it->types, i, row, err)) return FL_BATCH_ROWS_ERROR;
    *ct = (fl_change_type_t)c;
    it->index++;
    return FL_BATCH_ROWS_ROW;
}

static fl_batch_rows_next_t next_row(fl_batch_rows_t *it, fl_change_type_t *ct, fl_row_t *row,
                                     fl_error_t *err) {
    const fl_batch_view_t *b = it->b;
    const uint8_t *p;
    size_t len;
    if (fl_row_record_next(b->data, b->size, &it->pos, it->index, ct, &p, &len, err))
        return FL_BATCH_ROWS_ERROR;
    fl_row_reset(row, it->n);
    fl_row_format_t f = it->format == FL_LOG_FORMAT_INDEXED ? FL_ROW_INDEXED : FL_ROW_COMPACTED;
    if (fl_row_decode(f, p, len, it->types, it->n, row, err)) {
        fl_err_prefix(err, "record %d: ", it->index);
        return FL_BATCH_ROWS_ERROR;
    }
    it->index++;
    return FL_BATCH_ROWS_ROW;
}

fl_batch_rows_next_t fl_batch_rows_next(fl_batch_rows_t *it, fl_change_type_t *ct, fl_row_t *row,
                                        fl_error_t *err) {
    if (it->index == it->b->record_count) {
        /* rows end exactly at the batch end; Arrow messages may carry
         * padding, which fl_arrow_message_parse bounds */
        if (it->format != FL_LOG_FORMAT_ARROW && it->pos != it->b->size) {
            fl_err_set(err, RR_CORRUPT, "%zu bytes follow the last of the batch's %d records",
                       it->b->size - it->pos, it->b->record_count);
            return FL_BATCH_ROWS_ERROR;
        }
        return FL_BATCH_ROWS_END;
    }
    return it->format == FL_LOG_FORMAT_ARROW ? next_arrow(it, ct, row, err)
                                             : next_row(it, ct, row, err);
}

void fl_batch_rows_close(fl_batch_rows_t *it) {
    if (it->cols) free_columns(it, it->n);
}
