/*
 * client_batch.c — a fetched log record batch decoded for libfluss's
 * readers (fluss.h fluss_record_batch_*): the V0/V1/V2 header
 * (record_batch.h), the change-type vector of non-append-only batches,
 * and the ARROW body's columns decoded by arrow_decode.h into memory the
 * batch owns (Fluss's DefaultLogRecordBatch + ArrowLogRecordReader).
 * Bytes come from a server and are validated there. Thread rule: a batch
 * has one user at a time; it owns everything (type clones included), so
 * it outlives its scanner and table.
 */
#include <string.h>

#include "client_filter.h"
#include "types_schema_map.h"
#include "client_table.h"
#include "common_alloc.h"
#include "record_batch.h"

#define FL_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION


/* A fetched buffer may not inflate past this: a server's answer is at most
 * a few MiB of batches, and a compressed buffer that claims gigabytes is a
 * decompression bomb, not data. */
#define FL_CLIENT_BUFFER_BYTES_MAX ((size_t)256 << 20)

void fluss_record_batch_free(fluss_record_batch_t *b) {
    if (!b) return;
    for (size_t i = 0; i < b->column_count; i++) {
        fl_arrow_array_free(&b->cols[i]);
        fl_free(b->names[i]);
        fl_datatype_destroy(b->types[i]);
    }
    fl_free(b->cols);
    fl_free(b->names);
    fl_free(b->types);
    fl_free(b->change_types);
    fl_free(b->offsets);
    fl_free(b->timestamps);
    fl_free(b);
}

/* The rows of the Arrow batch from skip on that match filter, as Arrow
 * row indexes into *idx (malloc'd); returns their count. Every filtered
 * column is among the decoded ones (the scanner fetches them). */
static size_t fl_batch_select(const fluss_table_t *t, const fl_cfilter_t *filter,
                              const fl_arrow_array_t *cols, const int32_t *msg_cols,
                              size_t msg_count, int64_t skip, int64_t rows, int64_t **idx) {
    size_t ncols = t->desc.schema.column_count;
    const fl_arrow_array_t **by_pos = fl_calloc(ncols ? ncols : 1, sizeof(*by_pos));
    for (size_t m = 0; m < msg_count; m++) by_pos[msg_cols[m]] = &cols[m];
    for (size_t k = 0; k < filter->count; k++)
        if (!by_pos[filter->preds[k].column]) abort(); /* the scanner fetches filter columns */
    *idx = fl_malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
    size_t n = 0;
    for (int64_t r = skip; r < rows; r++)
        if (fl_cfilter_match(filter, by_pos, r)) (*idx)[n++] = r;
    fl_free(by_pos);
    return n;
}

/* The batch of the presented columns (moved out of cols/types), rows
 * skip.. of the Arrow batch, or only rows idx[0..n) (taken, with their
 * offsets) when idx is not NULL. */
static fluss_record_batch_t *fl_batch_assemble(const fluss_table_t *t, const fl_batch_view_t *bv,
                                               const uint8_t *ct, fl_arrow_array_t *cols,
                                               fl_datatype_t **types, const int32_t *msg_cols,
                                               size_t msg_count, const int32_t *present,
                                               size_t present_count, int64_t skip,
                                               const int64_t *idx, size_t n) {
    fluss_record_batch_t *b = fl_calloc(1, sizeof(*b));
    b->partition_id = -1;
    b->skip = idx ? 0 : (size_t)skip;
    b->rows = idx ? n : (size_t)(bv->record_count - skip);
    b->base_offset = bv->base_offset + (idx ? idx[0] : skip);
    b->commit_timestamp = bv->commit_timestamp;
    b->column_count = present_count;
    b->cols = fl_calloc(present_count ? present_count : 1, sizeof(fl_arrow_array_t));
    b->names = fl_calloc(present_count ? present_count : 1, sizeof(char *));
    b->types = fl_calloc(present_count ? present_count : 1, sizeof(fl_datatype_t *));
    for (size_t k = 0; k < present_count; k++) {
        size_t m = 0;
        while (m < msg_count && msg_cols[m] != present[k]) m++;
        if (m == msg_count || !types[m]) abort(); /* the scanner checks projections */
        if (idx) {
            fl_arrow_take(&cols[m], idx, n, &b->cols[k]);
        } else {
            b->cols[k] = cols[m];
            memset(&cols[m], 0, sizeof(cols[m]));
        }
        b->types[k] = types[m]; /* the taken columns point at it too */
        types[m] = NULL;
        b->names[k] = fl_strdup(t->desc.schema.columns[present[k]].name);
    }
    size_t nct = idx ? n : (size_t)bv->record_count;
    if (ct) {
        b->change_types = fl_malloc(nct ? nct : 1);
        for (size_t r = 0; r < nct; r++) b->change_types[r] = ct[idx ? (size_t)idx[r] : r];
    }
    if (idx) {
        b->offsets = fl_malloc(n * sizeof(int64_t));
        for (size_t r = 0; r < n; r++) b->offsets[r] = bv->base_offset + idx[r];
    }
    return b;
}

/* The message's columns, the handle's schema positions msg_cols in
 * order, into cols/types (clones). */
static int fl_batch_decode_columns(const fluss_table_t *t, const fl_arrow_batch_view_t *av,
                                   const int32_t *msg_cols, size_t msg_count,
                                   fl_arrow_array_t *cols, fl_datatype_t **types,
                                   fl_error_t *err) {
    fl_arrow_decoder_t dec;
    fl_arrow_decoder_init(&dec, av, FL_CLIENT_BUFFER_BYTES_MAX);
    int rc = 0;
    for (size_t i = 0; i < msg_count && !rc; i++) {
        types[i] = fl_datatype_clone(fl_table_type(t, (size_t)msg_cols[i]));
        rc = fl_arrow_decoder_next(&dec, types[i], &cols[i], err);
    }
    return rc;
}

static int fl_cmp_pos(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The same for a batch of another schema (evo): the message's columns
 * are that schema's (all of them, or those of msg_cols it has, in its
 * order), read with its types; each of msg_cols takes the one with its
 * column id, or NULLs of the handle's type. */
static int fl_batch_decode_evolved(const fluss_table_t *t, const fl_arrow_batch_view_t *av,
                                   const int32_t *msg_cols, size_t msg_count,
                                   const fl_batch_schema_t *evo, fl_arrow_array_t *cols,
                                   fl_datatype_t **types, fl_error_t *err) {
    const fl_schema_t *old = evo->schema;
    const fl_schema_map_t *map = evo->map;
    size_t on = old->column_count;
    int32_t *order = fl_malloc((on ? on : 1) * sizeof(int32_t));
    size_t n = 0;
    if (evo->whole) {
        for (size_t i = 0; i < on; i++) order[n++] = (int32_t)i;
    } else {
        for (size_t m = 0; m < msg_count; m++)
            if (map->source[msg_cols[m]] >= 0 && n < on) order[n++] = map->source[msg_cols[m]];
        qsort(order, n, sizeof(int32_t), fl_cmp_pos);
    }
    fl_arrow_array_t *ocols = fl_calloc(n ? n : 1, sizeof(fl_arrow_array_t));
    fl_datatype_t **otypes = fl_calloc(n ? n : 1, sizeof(fl_datatype_t *));
    fl_arrow_decoder_t dec;
    fl_arrow_decoder_init(&dec, av, FL_CLIENT_BUFFER_BYTES_MAX);
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        otypes[k] = fl_datatype_clone(old->columns[order[k]].type);
        rc = fl_arrow_decoder_next(&dec, otypes[k], &ocols[k], err);
    }
    for (size_t m = 0; m < msg_count && !rc; m++) {
        int32_t p = map->source[msg_cols[m]];
        size_t k = 0;
        while (p >= 0 && k < n && order[k] != p) k++;
        if (p >= 0 && k < n && otypes[k]) {
            cols[m] = ocols[k];
            types[m] = otypes[k];
            memset(&ocols[k], 0, sizeof(ocols[k]));
            otypes[k] = NULL;
        } else {
            types[m] = fl_datatype_clone(fl_table_type(t, (size_t)msg_cols[m]));
            fl_arrow_null_array(types[m], (int)types[m]->root, av->length, &cols[m]);
        }
    }
    for (size_t k = 0; k < n; k++) {
        fl_arrow_array_free(&ocols[k]);
        fl_datatype_destroy(otypes[k]);
    }
    fl_free(ocols);
    fl_free(otypes);
    fl_free(order);
    return rc;
}

int fl_record_batch_decode_filtered(const fluss_table_t *t, const uint8_t *p, size_t len,
                                    int32_t bucket, const int32_t *msg_cols, size_t msg_count,
                                    const int32_t *present, size_t present_count,
                                    int64_t min_offset, bool check_crc,
                                    const fl_cfilter_t *filter, const fl_batch_schema_t *evo,
                                    fluss_record_batch_t **out, fl_error_t *err) {
    *out = NULL;
    fl_batch_view_t bv;
    int rc = fl_batch_parse(p, len, &bv, err);
    if (rc) return rc;
    if (check_crc && (rc = fl_batch_check_crc(&bv, err))) return rc;
    /* a server assigns offsets from 0; anything that could overflow the
     * per-row offsets below is not a real log */
    if (bv.base_offset < 0 || bv.base_offset > INT64_MAX / 2)
        return fl_err_set(err, FL_CORRUPT, "fetched batch has base offset %lld",
                          (long long)bv.base_offset);
    if (bv.record_count <= 0 || fl_batch_last_offset(&bv) < min_offset) return 0;
    size_t pos = bv.records_start;
    const uint8_t *ct = NULL;
    if (!(bv.attributes & FL_BATCH_ATTR_APPEND_ONLY)) {
        if (len - pos < (size_t)bv.record_count)
            return fl_err_set(err, FL_CORRUPT, "change-type vector cut short");
        ct = p + pos;
        pos += (size_t)bv.record_count;
    }
    fl_arrow_batch_view_t av;
    if ((rc = fl_arrow_message_parse(p + pos, len - pos, &av, err))) return rc;
    if (av.length != bv.record_count)
        return fl_err_set(err, FL_CORRUPT, "arrow batch has %lld rows, the header says %d",
                          (long long)av.length, bv.record_count);
    fl_arrow_array_t *cols = fl_calloc(msg_count ? msg_count : 1, sizeof(fl_arrow_array_t));
    fl_datatype_t **types = fl_calloc(msg_count ? msg_count : 1, sizeof(fl_datatype_t *));
    rc = evo ? fl_batch_decode_evolved(t, &av, msg_cols, msg_count, evo, cols, types, err)
             : fl_batch_decode_columns(t, &av, msg_cols, msg_count, cols, types, err);
    int64_t skip = min_offset > bv.base_offset ? min_offset - bv.base_offset : 0;
    int64_t *idx = NULL;
    size_t n = 0;
    if (!rc && filter && filter->count > 0)
        n = fl_batch_select(t, filter, cols, msg_cols, msg_count, skip, bv.record_count, &idx);
    bool all = !idx || (int64_t)n == bv.record_count - skip;
    if (!rc && (all || n > 0)) {
        *out = fl_batch_assemble(t, &bv, ct, cols, types, msg_cols, msg_count, present,
                                 present_count, skip, all ? NULL : idx, n);
        (*out)->bucket = bucket;
    }
    fl_free(idx);
    for (size_t i = 0; i < msg_count; i++) {
        fl_arrow_array_free(&cols[i]);
        fl_datatype_destroy(types[i]);
    }
    fl_free(cols);
    fl_free(types);
    return rc;
}

fluss_record_batch_t *fl_record_batch_of_columns(const fluss_table_t *t, fl_arrow_array_t *cols,
                                                fl_datatype_t **types, int64_t rows,
                                                const int32_t *present, size_t present_count,
                                                const fl_cfilter_t *filter) {
    size_t n_all = t->desc.schema.column_count;
    int32_t *all = fl_malloc((n_all ? n_all : 1) * sizeof(int32_t));
    for (size_t i = 0; i < n_all; i++) all[i] = (int32_t)i;
    fl_batch_view_t bv;
    memset(&bv, 0, sizeof(bv));
    bv.record_count = (int32_t)rows;
    int64_t *idx = NULL;
    size_t n = 0;
    if (filter && filter->count > 0) n = fl_batch_select(t, filter, cols, all, n_all, 0, rows, &idx);
    bool every = !idx || (int64_t)n == rows;
    fluss_record_batch_t *b = NULL;
    if (rows > 0 && (every || n > 0))
        b = fl_batch_assemble(t, &bv, NULL, cols, types, all, n_all, present, present_count, 0,
                              every ? NULL : idx, n);
    fl_free(idx);
    fl_free(all);
    return b;
}

int fl_record_batch_decode(const fluss_table_t *t, const uint8_t *p, size_t len, int32_t bucket,
                           const int32_t *msg_cols, size_t msg_count, const int32_t *present,
                           size_t present_count, int64_t min_offset, bool check_crc,
                           fluss_record_batch_t **out, fl_error_t *err) {
    return fl_record_batch_decode_filtered(t, p, len, bucket, msg_cols, msg_count, present,
                                           present_count, min_offset, check_crc, NULL, NULL, out,
                                           err);
}

/* ---- accessors ---- */

int32_t fluss_record_batch_bucket(const fluss_record_batch_t *b) { return b->bucket; }
int64_t fluss_record_batch_partition_id(const fluss_record_batch_t *b) { return b->partition_id; }
int64_t fluss_record_batch_base_offset(const fluss_record_batch_t *b) { return b->base_offset; }
size_t fluss_record_batch_row_count(const fluss_record_batch_t *b) { return b->rows; }
size_t fluss_record_batch_column_count(const fluss_record_batch_t *b) { return b->column_count; }

const char *fluss_record_batch_column_name(const fluss_record_batch_t *b, size_t col) {
    return col < b->column_count ? b->names[col] : NULL;
}

int64_t fluss_record_batch_offset(const fluss_record_batch_t *b, size_t row) {
    if (b->offsets && row < b->rows) return b->offsets[row];
    return b->base_offset + (int64_t)row;
}

int64_t fluss_record_batch_timestamp(const fluss_record_batch_t *b, size_t row) {
    if (b->timestamps && row < b->rows) return b->timestamps[row];
    return b->commit_timestamp;
}

fluss_change_type_t fluss_record_batch_change_type(const fluss_record_batch_t *b, size_t row) {
    if (!b->change_types || row >= b->rows) return FLUSS_CHANGE_APPEND_ONLY;
    return (fluss_change_type_t)b->change_types[b->skip + row];
}

bool fluss_record_batch_is_null(const fluss_record_batch_t *b, size_t row, size_t col) {
    if (row >= b->rows || col >= b->column_count) return true;
    return fl_arrow_array_is_null(&b->cols[col], (int64_t)(b->skip + row));
}

size_t fluss_record_batch_value_text(const fluss_record_batch_t *b, size_t row, size_t col,
                                     int flags, char *buf, size_t cap) {
    fl_buf_t t;
    fl_buf_init(&t);
    if (row < b->rows && col < b->column_count)
        fl_client_value_text(&b->cols[col], (int64_t)(b->skip + row), flags, &t);
    size_t n = t.len;
    if (cap > 0) {
        size_t k = n < cap - 1 ? n : cap - 1;
        if (k) memcpy(buf, t.data, k);
        buf[k] = '\0';
    }
    fl_buf_free(&t);
    return n;
}
