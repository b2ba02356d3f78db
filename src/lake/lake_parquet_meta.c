/*
 * lake_parquet_meta.c — encode and decode of the Parquet footer and page
 * headers (field table in lake_parquet_meta.h). Decode goes field by
 * field: a known id with the wrong wire type is corrupt, an unknown id is
 * skipped whatever its type. List counts were checked against the bytes
 * left by the thrift reader; allocations they size still use the try
 * allocator since a count of n elements can ask for n * sizeof(struct).
 */
#include "lake_parquet_meta.h"

#include <strings.h>

#include <string.h>

#include "common_alloc.h"
#include "lake_thrift.h"

/* ---- encode ---- */

static void encode_logical(fl_tc_writer_t *w, const fl_pq_logical_t *l) {
    fl_tc_field_struct_begin(w, 10);
    fl_tc_field_struct_begin(w, l->kind);
    switch (l->kind) {
    case FL_PQ_LT_DECIMAL:
        fl_tc_field_i32(w, 1, l->scale);
        fl_tc_field_i32(w, 2, l->precision);
        break;
    case FL_PQ_LT_TIME:
    case FL_PQ_LT_TIMESTAMP:
        fl_tc_field_bool(w, 1, l->utc);
        fl_tc_field_struct_begin(w, 2);
        fl_tc_field_struct_begin(w, l->unit);
        fl_tc_struct_end(w);
        fl_tc_struct_end(w);
        break;
    default: break; /* STRING{}, DATE{}: empty structs */
    }
    fl_tc_struct_end(w);
    fl_tc_struct_end(w);
}

static void encode_schema_element(fl_tc_writer_t *w, const fl_pq_schema_element_t *e) {
    fl_tc_struct_begin(w);
    if (e->type >= 0) fl_tc_field_i32(w, 1, e->type);
    if (e->type == FL_PQ_FLBA) fl_tc_field_i32(w, 2, e->type_length);
    if (e->repetition >= 0) fl_tc_field_i32(w, 3, e->repetition);
    fl_tc_field_string(w, 4, e->name);
    if (e->type < 0) fl_tc_field_i32(w, 5, e->num_children);
    if (e->converted_type >= 0) fl_tc_field_i32(w, 6, e->converted_type);
    if (e->converted_type == FL_PQ_CT_DECIMAL) {
        fl_tc_field_i32(w, 7, e->scale);
        fl_tc_field_i32(w, 8, e->precision);
    }
    if (e->has_field_id) fl_tc_field_i32(w, 9, e->field_id);
    if (e->logical.kind != FL_PQ_LT_NONE) encode_logical(w, &e->logical);
    fl_tc_struct_end(w);
}

static void encode_stats(fl_tc_writer_t *w, const fl_pq_stats_t *s) {
    fl_tc_field_struct_begin(w, 12);
    if (s->has_null_count) fl_tc_field_i64(w, 3, s->null_count);
    if (s->has_max) fl_tc_field_binary(w, 5, s->max, s->max_len);
    if (s->has_min) fl_tc_field_binary(w, 6, s->min, s->min_len);
    fl_tc_struct_end(w);
}

static void encode_column_meta(fl_tc_writer_t *w, const fl_pq_column_meta_t *c) {
    fl_tc_field_struct_begin(w, 3);
    fl_tc_field_i32(w, 1, c->type);
    fl_tc_field_list_begin(w, 2, FL_TC_I32, (uint32_t)c->n_encodings);
    for (size_t i = 0; i < c->n_encodings; i++) fl_tc_i32(w, c->encodings[i]);
    fl_tc_field_list_begin(w, 3, FL_TC_BINARY, (uint32_t)c->n_path);
    for (size_t i = 0; i < c->n_path; i++) fl_tc_binary(w, c->path[i], strlen(c->path[i]));
    fl_tc_field_i32(w, 4, c->codec);
    fl_tc_field_i64(w, 5, c->num_values);
    fl_tc_field_i64(w, 6, c->total_uncompressed_size);
    fl_tc_field_i64(w, 7, c->total_compressed_size);
    fl_tc_field_i64(w, 9, c->data_page_offset);
    if (c->has_dictionary_page_offset) fl_tc_field_i64(w, 11, c->dictionary_page_offset);
    if (c->has_stats) encode_stats(w, &c->stats);
    fl_tc_struct_end(w);
}

static void encode_row_group(fl_tc_writer_t *w, const fl_pq_row_group_t *g) {
    fl_tc_struct_begin(w);
    fl_tc_field_list_begin(w, 1, FL_TC_STRUCT, (uint32_t)g->n_columns);
    for (size_t i = 0; i < g->n_columns; i++) {
        fl_tc_struct_begin(w);
        fl_tc_field_i64(w, 2, g->columns[i].file_offset);
        encode_column_meta(w, &g->columns[i].meta);
        fl_tc_struct_end(w);
    }
    fl_tc_field_i64(w, 2, g->total_byte_size);
    fl_tc_field_i64(w, 3, g->num_rows);
    fl_tc_field_i64(w, 5, g->file_offset);
    fl_tc_field_i64(w, 6, g->total_compressed_size);
    fl_tc_field_header(w, 7, FL_TC_I16);
    fl_tc_i32(w, g->ordinal);
    fl_tc_struct_end(w);
}

void fl_pq_file_meta_encode(fl_buf_t *out, const fl_pq_file_meta_t *m) {
    fl_tc_writer_t w;
    fl_tc_writer_init(&w, out);
    fl_tc_struct_begin(&w);
    fl_tc_field_i32(&w, 1, m->version);
    fl_tc_field_list_begin(&w, 2, FL_TC_STRUCT, (uint32_t)m->n_schema);
    for (size_t i = 0; i < m->n_schema; i++) encode_schema_element(&w, &m->schema[i]);
    fl_tc_field_i64(&w, 3, m->num_rows);
    fl_tc_field_list_begin(&w, 4, FL_TC_STRUCT, (uint32_t)m->n_row_groups);
    for (size_t i = 0; i < m->n_row_groups; i++) encode_row_group(&w, &m->row_groups[i]);
    if (m->created_by) fl_tc_field_string(&w, 6, m->created_by);
    if (m->n_column_orders) {
        fl_tc_field_list_begin(&w, 7, FL_TC_STRUCT, (uint32_t)m->n_column_orders);
        for (size_t i = 0; i < m->n_column_orders; i++) {
            fl_tc_struct_begin(&w); /* ColumnOrder union */
            fl_tc_field_struct_begin(&w, 1); /* TYPE_ORDER: TypeDefinedOrder{} */
            fl_tc_struct_end(&w);
            fl_tc_struct_end(&w);
        }
    }
    fl_tc_struct_end(&w);
}

void fl_pq_page_header_encode(fl_buf_t *out, const fl_pq_page_header_t *h) {
    fl_tc_writer_t w;
    fl_tc_writer_init(&w, out);
    fl_tc_struct_begin(&w);
    fl_tc_field_i32(&w, 1, h->type);
    fl_tc_field_i32(&w, 2, h->uncompressed_page_size);
    fl_tc_field_i32(&w, 3, h->compressed_page_size);
    if (h->has_data) {
        fl_tc_field_struct_begin(&w, 5);
        fl_tc_field_i32(&w, 1, h->data_num_values);
        fl_tc_field_i32(&w, 2, h->data_encoding);
        fl_tc_field_i32(&w, 3, h->def_encoding);
        fl_tc_field_i32(&w, 4, h->rep_encoding);
        fl_tc_struct_end(&w);
    }
    if (h->has_dictionary) {
        fl_tc_field_struct_begin(&w, 7);
        fl_tc_field_i32(&w, 1, h->dict_num_values);
        fl_tc_field_i32(&w, 2, h->dict_encoding);
        fl_tc_struct_end(&w);
    }
    fl_tc_struct_end(&w);
}

/* ---- decode ---- */

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (x) return FLUSS_ERR__CORRUPT;                                                          \
    } while (0)

static int want(uint8_t got, uint8_t type, int16_t id, const char *what, fl_error_t *err) {
    if (got == type) return 0;
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet %s: field %d has wire type %u", what, id,
                      got);
}

static int read_i32_field(fl_tc_reader_t *r, uint8_t t, int16_t id, const char *what,
                          int32_t *v, fl_error_t *err) {
    if (t == FL_TC_I16 || t == FL_TC_I32) return fl_tc_read_i32(r, v, err);
    return want(t, FL_TC_I32, id, what, err);
}

static int read_i64_field(fl_tc_reader_t *r, uint8_t t, int16_t id, const char *what,
                          int64_t *v, fl_error_t *err) {
    CHECK(want(t, FL_TC_I64, id, what, err));
    return fl_tc_read_i64(r, v, err);
}

static int read_bytes_field(fl_tc_reader_t *r, uint8_t t, int16_t id, const char *what,
                            uint8_t **out, uint32_t *n_out, fl_error_t *err) {
    const uint8_t *p;
    uint32_t n;
    CHECK(want(t, FL_TC_BINARY, id, what, err));
    CHECK(fl_tc_read_binary(r, &p, &n, err));
    uint8_t *c = fl_try_malloc((size_t)n + 1);
    if (!c) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet %s: %u bytes", what, n);
    memcpy(c, p, n);
    c[n] = 0;
    fl_free(*out); /* a repeated field: the last one wins */
    *out = c;
    if (n_out) *n_out = n;
    return 0;
}

/* Reads fields until stop, calling fn for each; fn returns 1 for a field
 * it does not know (skipped here). */
typedef int (*field_fn)(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj, fl_error_t *err);

static int read_struct(fl_tc_reader_t *r, field_fn fn, void *obj, fl_error_t *err) {
    CHECK(fl_tc_read_struct_begin(r, err));
    for (;;) {
        int16_t id;
        uint8_t t;
        CHECK(fl_tc_read_field(r, &id, &t, err));
        if (t == FL_TC_STOP) break;
        int rc = fn(r, id, t, obj, err);
        if (rc == 1) rc = fl_tc_skip(r, t, true, err);
        if (rc) return rc;
    }
    fl_tc_read_struct_end(r);
    return 0;
}

static int struct_field(fl_tc_reader_t *r, uint8_t t, int16_t id, const char *what, field_fn fn,
                        void *obj, fl_error_t *err) {
    CHECK(want(t, FL_TC_STRUCT, id, what, err));
    return read_struct(r, fn, obj, err);
}

/* A list of elem; *n elements of size `size` allocated zeroed. */
static int list_field(fl_tc_reader_t *r, uint8_t t, int16_t id, const char *what, uint8_t elem,
                      size_t size, void **arr, size_t *n, fl_error_t *err) {
    uint8_t e;
    uint32_t count;
    CHECK(want(t, FL_TC_LIST, id, what, err));
    CHECK(fl_tc_read_list_header(r, &e, &count, err));
    if (e != elem && !(elem == FL_TC_I32 && e == FL_TC_I16))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet %s: field %d lists type %u", what, id,
                          e);
    if (*arr) /* repeated: the earlier elements were freed by the caller's type */
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet %s: field %d twice", what, id);
    void *a = fl_try_malloc(count ? (size_t)count * size : 1);
    if (!a) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet %s: list of %u", what, count);
    memset(a, 0, count ? (size_t)count * size : 1);
    *arr = a;
    *n = count;
    return 0;
}

static int timeunit_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                           fl_error_t *err) {
    fl_pq_logical_t *l = obj;
    l->unit = id;
    return 1;
}

static int logical_member_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                                 fl_error_t *err) {
    fl_pq_logical_t *l = obj;
    if (l->kind == FL_PQ_LT_DECIMAL) {
        if (id == 1) return read_i32_field(r, t, id, "DecimalType", &l->scale, err);
        if (id == 2) return read_i32_field(r, t, id, "DecimalType", &l->precision, err);
    } else if (l->kind == FL_PQ_LT_TIME || l->kind == FL_PQ_LT_TIMESTAMP) {
        if (id == 1) return fl_tc_field_bool_value(t, &l->utc, err);
        if (id == 2) return struct_field(r, t, id, "TimeUnit", timeunit_fields, l, err);
    }
    return 1;
}

static int logical_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj, fl_error_t *err) {
    fl_pq_logical_t *l = obj;
    if (l->kind != FL_PQ_LT_NONE)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet LogicalType: a union with two members");
    l->kind = id;
    return struct_field(r, t, id, "LogicalType", logical_member_fields, l, err);
}

static int schema_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj, fl_error_t *err) {
    fl_pq_schema_element_t *e = obj;
    const char *w = "SchemaElement";
    switch (id) {
    case 1: return read_i32_field(r, t, id, w, &e->type, err);
    case 2: return read_i32_field(r, t, id, w, &e->type_length, err);
    case 3: return read_i32_field(r, t, id, w, &e->repetition, err);
    case 4: return read_bytes_field(r, t, id, w, (uint8_t **)&e->name, NULL, err);
    case 5: return read_i32_field(r, t, id, w, &e->num_children, err);
    case 6: return read_i32_field(r, t, id, w, &e->converted_type, err);
    case 7: return read_i32_field(r, t, id, w, &e->scale, err);
    case 8: return read_i32_field(r, t, id, w, &e->precision, err);
    case 9: e->has_field_id = true; return read_i32_field(r, t, id, w, &e->field_id, err);
    case 10:
        memset(&e->logical, 0, sizeof(e->logical));
        return struct_field(r, t, id, w, logical_fields, &e->logical, err);
    default: return 1;
    }
}

static int stats_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj, fl_error_t *err) {
    fl_pq_stats_t *s = obj;
    switch (id) {
    case 3: s->has_null_count = true; return read_i64_field(r, t, id, "Statistics", &s->null_count, err);
    case 5: s->has_max = true; return read_bytes_field(r, t, id, "Statistics", &s->max, &s->max_len, err);
    case 6: s->has_min = true; return read_bytes_field(r, t, id, "Statistics", &s->min, &s->min_len, err);
    default: return 1;
    }
}

static int column_meta_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                              fl_error_t *err) {
    fl_pq_column_meta_t *c = obj;
    const char *w = "ColumnMetaData";
    switch (id) {
    case 1: return read_i32_field(r, t, id, w, &c->type, err);
    case 2:
        CHECK(list_field(r, t, id, w, FL_TC_I32, sizeof(int32_t), (void **)&c->encodings,
                         &c->n_encodings, err));
        for (size_t i = 0; i < c->n_encodings; i++) CHECK(fl_tc_read_i32(r, &c->encodings[i], err));
        return 0;
    case 3:
        CHECK(list_field(r, t, id, w, FL_TC_BINARY, sizeof(char *), (void **)&c->path, &c->n_path,
                         err));
        for (size_t i = 0; i < c->n_path; i++)
            CHECK(read_bytes_field(r, FL_TC_BINARY, id, w, (uint8_t **)&c->path[i], NULL, err));
        return 0;
    case 4: return read_i32_field(r, t, id, w, &c->codec, err);
    case 5: return read_i64_field(r, t, id, w, &c->num_values, err);
    case 6: return read_i64_field(r, t, id, w, &c->total_uncompressed_size, err);
    case 7: return read_i64_field(r, t, id, w, &c->total_compressed_size, err);
    case 9: return read_i64_field(r, t, id, w, &c->data_page_offset, err);
    case 11:
        c->has_dictionary_page_offset = true;
        return read_i64_field(r, t, id, w, &c->dictionary_page_offset, err);
    case 12: c->has_stats = true; return struct_field(r, t, id, w, stats_fields, &c->stats, err);
    default: return 1;
    }
}

static int column_chunk_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                               fl_error_t *err) {
    fl_pq_column_chunk_t *c = obj;
    switch (id) {
    case 1: c->has_file_path = true; return 1;
    case 2: return read_i64_field(r, t, id, "ColumnChunk", &c->file_offset, err);
    case 3:
        c->has_meta = true;
        return struct_field(r, t, id, "ColumnChunk", column_meta_fields, &c->meta, err);
    default: return 1;
    }
}

static int row_group_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                            fl_error_t *err) {
    fl_pq_row_group_t *g = obj;
    const char *w = "RowGroup";
    switch (id) {
    case 1:
        CHECK(list_field(r, t, id, w, FL_TC_STRUCT, sizeof(fl_pq_column_chunk_t),
                         (void **)&g->columns, &g->n_columns, err));
        for (size_t i = 0; i < g->n_columns; i++)
            CHECK(read_struct(r, column_chunk_fields, &g->columns[i], err));
        return 0;
    case 2: return read_i64_field(r, t, id, w, &g->total_byte_size, err);
    case 3: return read_i64_field(r, t, id, w, &g->num_rows, err);
    case 5: return read_i64_field(r, t, id, w, &g->file_offset, err);
    case 6: return read_i64_field(r, t, id, w, &g->total_compressed_size, err);
    case 7: return read_i32_field(r, t, id, w, &g->ordinal, err);
    default: return 1;
    }
}

static void schema_element_init(fl_pq_schema_element_t *e) {
    memset(e, 0, sizeof(*e));
    e->type = -1;
    e->repetition = -1;
    e->converted_type = -1;
}

static int file_meta_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                            fl_error_t *err) {
    fl_pq_file_meta_t *m = obj;
    const char *w = "FileMetaData";
    switch (id) {
    case 1: return read_i32_field(r, t, id, w, &m->version, err);
    case 2:
        CHECK(list_field(r, t, id, w, FL_TC_STRUCT, sizeof(fl_pq_schema_element_t),
                         (void **)&m->schema, &m->n_schema, err));
        for (size_t i = 0; i < m->n_schema; i++) schema_element_init(&m->schema[i]);
        for (size_t i = 0; i < m->n_schema; i++)
            CHECK(read_struct(r, schema_fields, &m->schema[i], err));
        return 0;
    case 3: return read_i64_field(r, t, id, w, &m->num_rows, err);
    case 4:
        CHECK(list_field(r, t, id, w, FL_TC_STRUCT, sizeof(fl_pq_row_group_t),
                         (void **)&m->row_groups, &m->n_row_groups, err));
        for (size_t i = 0; i < m->n_row_groups; i++)
            CHECK(read_struct(r, row_group_fields, &m->row_groups[i], err));
        return 0;
    case 6: return read_bytes_field(r, t, id, w, (uint8_t **)&m->created_by, NULL, err);
    case 7: {
        uint8_t e;
        uint32_t n;
        CHECK(want(t, FL_TC_LIST, id, w, err));
        CHECK(fl_tc_read_list_header(r, &e, &n, err));
        for (uint32_t i = 0; i < n; i++) CHECK(fl_tc_skip(r, e, false, err));
        m->n_column_orders = n;
        return 0;
    }
    default: return 1;
    }
}

static void column_meta_free(fl_pq_column_meta_t *c) {
    fl_free(c->encodings);
    for (size_t i = 0; c->path && i < c->n_path; i++) fl_free(c->path[i]);
    fl_free(c->path);
    fl_free(c->stats.min);
    fl_free(c->stats.max);
}

void fl_pq_file_meta_free(fl_pq_file_meta_t *m) {
    for (size_t i = 0; m->schema && i < m->n_schema; i++) fl_free(m->schema[i].name);
    fl_free(m->schema);
    for (size_t i = 0; m->row_groups && i < m->n_row_groups; i++) {
        fl_pq_row_group_t *g = &m->row_groups[i];
        for (size_t k = 0; g->columns && k < g->n_columns; k++) column_meta_free(&g->columns[k].meta);
        fl_free(g->columns);
    }
    fl_free(m->row_groups);
    fl_free(m->created_by);
    memset(m, 0, sizeof(*m));
}

int fl_pq_file_meta_decode(const uint8_t *p, size_t len, fl_pq_file_meta_t *m, fl_error_t *err) {
    memset(m, 0, sizeof(*m));
    fl_tc_reader_t r;
    fl_tc_reader_init(&r, p, len);
    int rc = read_struct(&r, file_meta_fields, m, err);
    if (rc) {
        fl_err_prefix(err, "FileMetaData: ");
        fl_pq_file_meta_free(m);
    }
    return rc;
}

static int dict_header_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                              fl_error_t *err) {
    fl_pq_page_header_t *h = obj;
    if (id == 1) return read_i32_field(r, t, id, "DictionaryPageHeader", &h->dict_num_values, err);
    if (id == 2) return read_i32_field(r, t, id, "DictionaryPageHeader", &h->dict_encoding, err);
    return 1;
}

static int data_header_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                              fl_error_t *err) {
    fl_pq_page_header_t *h = obj;
    const char *w = "DataPageHeader";
    switch (id) {
    case 1: return read_i32_field(r, t, id, w, &h->data_num_values, err);
    case 2: return read_i32_field(r, t, id, w, &h->data_encoding, err);
    case 3: return read_i32_field(r, t, id, w, &h->def_encoding, err);
    case 4: return read_i32_field(r, t, id, w, &h->rep_encoding, err);
    default: return 1;
    }
}

static int page_header_fields(fl_tc_reader_t *r, int16_t id, uint8_t t, void *obj,
                              fl_error_t *err) {
    fl_pq_page_header_t *h = obj;
    const char *w = "PageHeader";
    switch (id) {
    case 1: return read_i32_field(r, t, id, w, &h->type, err);
    case 2: return read_i32_field(r, t, id, w, &h->uncompressed_page_size, err);
    case 3: return read_i32_field(r, t, id, w, &h->compressed_page_size, err);
    case 5: h->has_data = true; return struct_field(r, t, id, w, data_header_fields, h, err);
    case 7:
        h->has_dictionary = true;
        return struct_field(r, t, id, w, dict_header_fields, h, err);
    default: return 1;
    }
}

int fl_pq_page_header_decode(const uint8_t *p, size_t len, fl_pq_page_header_t *h, size_t *used,
                             fl_error_t *err) {
    memset(h, 0, sizeof(*h));
    h->type = -1;
    fl_tc_reader_t r;
    fl_tc_reader_init(&r, p, len);
    int rc = read_struct(&r, page_header_fields, h, err);
    if (rc) return rc;
    *used = r.pos;
    return 0;
}

int32_t fl_pq_codec_of_name(const char *name) {
    static const struct {
        const char *name;
        int32_t codec;
    } names[] = {{"uncompressed", FL_PQ_CODEC_UNCOMPRESSED},
                 {"snappy", FL_PQ_CODEC_SNAPPY},
                 {"gzip", FL_PQ_CODEC_GZIP},
                 {"zstd", FL_PQ_CODEC_ZSTD}};
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(name, names[i].name) == 0) return names[i].codec;
    return -1;
}

/* ---- the schema tree ---- */

void fl_pq_schema_tree_free(fl_pq_schema_tree_t *t) {
    fl_free(t->parent);
    fl_free(t->def);
    fl_free(t->rep);
    fl_free(t->first_leaf);
    fl_free(t->n_leaves);
    fl_free(t->leaves);
    memset(t, 0, sizeof(*t));
}

static int tree_corrupt(fl_pq_schema_tree_t *t, fl_error_t *err, const char *what, size_t i) {
    fl_pq_schema_tree_free(t);
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet schema: %s (element %zu)", what, i);
}

/* One pass in pre-order with a stack of the open groups and the children
 * each still expects: the depth bound keeps the stack on the C stack. */
int fl_pq_schema_tree_build(const fl_pq_schema_element_t *s, size_t n, fl_pq_schema_tree_t *t,
                            fl_error_t *err) {
    memset(t, 0, sizeof(*t));
    if (n < 2 || !s) return tree_corrupt(t, err, "no columns", 0);
    if (s[0].type >= 0 || s[0].num_children < 1) return tree_corrupt(t, err, "root is no group", 0);
    size_t m = n;
    t->parent = fl_try_malloc(m * sizeof(*t->parent));
    t->def = fl_try_malloc(m);
    t->rep = fl_try_malloc(m);
    t->first_leaf = fl_try_malloc(m * sizeof(size_t));
    t->n_leaves = fl_try_malloc(m * sizeof(size_t));
    t->leaves = fl_try_malloc(m * sizeof(size_t));
    if (!t->parent || !t->def || !t->rep || !t->first_leaf || !t->n_leaves || !t->leaves) {
        fl_pq_schema_tree_free(t);
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet schema of %zu elements", n);
    }
    t->n_elements = n;
    struct {
        size_t element;
        int64_t left;
    } stack[FL_PQ_LEVEL_MAX + 1];
    size_t depth = 1, i = 1;
    stack[0].element = 0;
    stack[0].left = s[0].num_children;
    t->parent[0] = -1;
    t->def[0] = t->rep[0] = 0;
    t->first_leaf[0] = 0;
    while (depth > 0) {
        size_t top = stack[depth - 1].element;
        if (stack[depth - 1].left == 0) {
            t->n_leaves[top] = t->n_columns - t->first_leaf[top];
            depth--;
            continue;
        }
        stack[depth - 1].left--;
        if (i >= n) return tree_corrupt(t, err, "children past the end", top);
        const fl_pq_schema_element_t *e = &s[i];
        if (e->repetition < FL_PQ_REQUIRED || e->repetition > FL_PQ_REPEATED)
            return tree_corrupt(t, err, "repetition", i);
        int def = t->def[top] + (e->repetition != FL_PQ_REQUIRED);
        int rep = t->rep[top] + (e->repetition == FL_PQ_REPEATED);
        if (def > FL_PQ_LEVEL_MAX) return tree_corrupt(t, err, "too many levels", i);
        t->parent[i] = (int32_t)top;
        t->def[i] = (uint8_t)def;
        t->rep[i] = (uint8_t)rep;
        t->first_leaf[i] = t->n_columns;
        if (e->type < 0) {
            if (e->num_children < 1) return tree_corrupt(t, err, "group without children", i);
            if (depth > FL_PQ_LEVEL_MAX) return tree_corrupt(t, err, "groups too deep", i);
            stack[depth].element = i;
            stack[depth].left = e->num_children;
            depth++;
        } else {
            if (e->num_children != 0) return tree_corrupt(t, err, "typed element with children", i);
            t->n_leaves[i] = 1;
            t->leaves[t->n_columns++] = i;
        }
        i++;
    }
    if (i != n) return tree_corrupt(t, err, "elements after the root's last child", i);
    return 0;
}
