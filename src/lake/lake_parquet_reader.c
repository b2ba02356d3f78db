/*
 * lake_parquet_reader.c — the Parquet subset reader (lake_parquet_reader.h).
 * Open: magic at both ends, footer length inside the file, FileMetaData
 * decoded, the schema's tree shape checked (fl_pq_schema_tree_build) and
 * every leaf and chunk's metadata checked against the subset. Reading a
 * column chunk: pages from the chunk's first page to its end, each header
 * and body inside the chunk, bodies inflated to exactly their declared
 * size, repetition and definition levels and values decoded with every
 * count checked against the level entries the chunk declared, every level
 * against its maximum, and the rows the levels start against the row
 * group's. Pages need not start at a row (parquet-cpp's v1 pages may split
 * one), only the chunk.
 */
#include "lake_parquet_reader.h"

#include <assert.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "lake_rle.h"

struct fl_pq_reader {
    const uint8_t *file;
    size_t len;
    size_t data_end; /* where the footer starts */
    fl_buf_t owned;
    fl_pq_file_meta_t meta;
    fl_pq_schema_tree_t tree;
};

static int unsupported(fl_error_t *err, const char *what, long long v) {
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: %s %lld outside the subset", what, v);
}

static int check_schema(fl_pq_reader_t *r, fl_error_t *err) {
    const fl_pq_file_meta_t *m = &r->meta;
    if (fl_pq_schema_tree_build(m->schema, m->n_schema, &r->tree, err)) return err ? err->code : FLUSS_ERR__CORRUPT;
    for (size_t i = 1; i < m->n_schema; i++)
        if (!m->schema[i].name) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: unnamed element");
    for (size_t c = 0; c < r->tree.n_columns; c++) {
        const fl_pq_schema_element_t *e = &m->schema[r->tree.leaves[c]];
        if (e->type != FL_PQ_BYTE_ARRAY && e->type != FL_PQ_FLBA && !fl_pq_fixed_width(e->type))
            return unsupported(err, "physical type", e->type);
        if (e->type == FL_PQ_FLBA && (e->type_length < 1 || e->type_length > FL_PQ_FLBA_BYTES_MAX))
            return unsupported(err, "FIXED_LEN_BYTE_ARRAY length", e->type_length);
    }
    return 0;
}

static int check_row_groups(const fl_pq_reader_t *r, fl_error_t *err) {
    const fl_pq_file_meta_t *m = &r->meta;
    size_t leaves = r->tree.n_columns;
    int64_t rows = 0;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        const fl_pq_row_group_t *rg = &m->row_groups[g];
        if (rg->n_columns != leaves || !rg->columns)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: row group %zu has %zu columns",
                              g, rg->n_columns);
        if (rg->num_rows < 0 || rg->num_rows > (int64_t)FL_PQ_GROUP_ROWS_MAX)
            return unsupported(err, "row group rows", rg->num_rows);
        rows += rg->num_rows;
        for (size_t c = 0; c < leaves; c++) {
            const fl_pq_column_chunk_t *cc = &rg->columns[c];
            const fl_pq_schema_element_t *leaf = &m->schema[r->tree.leaves[c]];
            if (cc->has_file_path) return unsupported(err, "chunk in another file, column", (long long)c);
            if (!cc->has_meta)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: chunk without metadata");
            if (cc->meta.type != leaf->type)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: chunk type %d, column type %d",
                                  cc->meta.type, leaf->type);
            if (cc->meta.codec != FL_PQ_CODEC_UNCOMPRESSED && cc->meta.codec != FL_PQ_CODEC_ZSTD &&
                cc->meta.codec != FL_PQ_CODEC_GZIP && cc->meta.codec != FL_PQ_CODEC_SNAPPY)
                return unsupported(err, "codec", cc->meta.codec);
            /* one entry per row without repetition, at least one with */
            bool repeated = r->tree.rep[r->tree.leaves[c]] > 0;
            if (repeated && cc->meta.num_values > (int64_t)FL_PQ_CHUNK_LEVELS_MAX)
                return unsupported(err, "chunk level entries", cc->meta.num_values);
            if (repeated ? cc->meta.num_values < rg->num_rows : cc->meta.num_values != rg->num_rows)
                return fl_err_set(err, FLUSS_ERR__CORRUPT,
                                  "parquet: chunk of %lld values in a group of %lld rows",
                                  (long long)cc->meta.num_values, (long long)rg->num_rows);
        }
    }
    if (rows != m->num_rows)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: %lld rows in groups, %lld in footer",
                          (long long)rows, (long long)m->num_rows);
    return 0;
}

int fl_pq_reader_open(const uint8_t *file, size_t len, fl_pq_reader_t **out, fl_error_t *err) {
    *out = NULL;
    if (len < 12 || memcmp(file, "PAR1", 4) || memcmp(file + len - 4, "PAR1", 4))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: no PAR1 magic at both ends");
    uint32_t flen = (uint32_t)file[len - 8] | (uint32_t)file[len - 7] << 8 |
                    (uint32_t)file[len - 6] << 16 | (uint32_t)file[len - 5] << 24;
    if (flen > len - 12)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: footer of %u bytes in a file of %zu",
                          flen, len);
    fl_pq_reader_t *r = fl_calloc(1, sizeof(*r));
    r->file = file;
    r->len = len;
    r->data_end = len - 8 - flen;
    int rc = fl_pq_file_meta_decode(file + r->data_end, flen, &r->meta, err);
    if (!rc) rc = check_schema(r, err);
    if (!rc) rc = check_row_groups(r, err);
    if (rc) {
        fl_pq_reader_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

int fl_pq_reader_open_file(const char *path, size_t max_bytes, fl_pq_reader_t **out,
                           fl_error_t *err) {
    fl_buf_t b;
    fl_buf_init(&b);
    int rc = fl_fs_read_all(path, max_bytes, &b, NULL, err);
    if (!rc) rc = fl_pq_reader_open(b.data ? b.data : (const uint8_t *)"", b.len, out, err);
    if (rc) {
        fl_buf_free(&b);
        return rc;
    }
    (*out)->owned = b;
    return 0;
}

const fl_pq_file_meta_t *fl_pq_reader_meta(const fl_pq_reader_t *r) { return &r->meta; }
size_t fl_pq_reader_columns(const fl_pq_reader_t *r) { return r->tree.n_columns; }
const fl_pq_schema_element_t *fl_pq_reader_column(const fl_pq_reader_t *r, size_t i) {
    assert(i < r->tree.n_columns);
    return &r->meta.schema[r->tree.leaves[i]];
}

void fl_pq_reader_column_levels(const fl_pq_reader_t *r, size_t i, int *max_def, int *max_rep) {
    assert(i < r->tree.n_columns);
    *max_def = r->tree.def[r->tree.leaves[i]];
    *max_rep = r->tree.rep[r->tree.leaves[i]];
}

size_t fl_pq_reader_column_element(const fl_pq_reader_t *r, size_t i) {
    assert(i < r->tree.n_columns);
    return r->tree.leaves[i];
}

size_t fl_pq_reader_parent(const fl_pq_reader_t *r, size_t element) {
    assert(element < r->tree.n_elements);
    return r->tree.parent[element] > 0 ? (size_t)r->tree.parent[element] : 0;
}

int fl_pq_reader_element_of(const fl_pq_reader_t *r, int32_t field_id) {
    for (size_t e = 1; field_id >= 0 && e < r->meta.n_schema; e++) {
        const fl_pq_schema_element_t *s = &r->meta.schema[e];
        if (s->has_field_id && s->field_id == field_id) return (int)e;
    }
    return -1;
}

void fl_pq_reader_element_columns(const fl_pq_reader_t *r, size_t e, size_t *first, size_t *n) {
    assert(e < r->tree.n_elements);
    *first = r->tree.first_leaf[e];
    *n = r->tree.n_leaves[e];
}

int fl_pq_reader_column_of(const fl_pq_reader_t *r, int32_t field_id) {
    for (size_t i = 0; field_id >= 0 && i < fl_pq_reader_columns(r); i++) {
        const fl_pq_schema_element_t *e = fl_pq_reader_column(r, i);
        if (e->has_field_id && e->field_id == field_id) return (int)i;
    }
    return -1;
}

void fl_pq_reader_destroy(fl_pq_reader_t *r) {
    if (!r) return;
    fl_pq_file_meta_free(&r->meta);
    fl_pq_schema_tree_free(&r->tree);
    fl_buf_free(&r->owned);
    fl_free(r);
}

void fl_pq_values_free(fl_pq_values_t *v) {
    fl_free(v->valid);
    fl_free(v->values);
    fl_free(v->offsets);
    fl_free(v->bytes);
    fl_free(v->def);
    fl_free(v->rep);
    memset(v, 0, sizeof(*v));
}

/* ---- a column chunk ---- */

typedef struct pq_read {
    const fl_pq_schema_element_t *col;
    int32_t codec;
    fl_pq_values_t *out;
    size_t entries; /* level entries of the chunk (its num_values) */
    size_t got; /* entries filled */
    int max_def, max_rep;
    uint8_t rep_def[FL_PQ_LEVEL_MAX + 1]; /* [r]: def level of the r-th repeated ancestor */
    uint8_t *def, *rep; /* per entry; rep NULL when max_rep == 0 */
    fl_buf_t bytes; /* BYTE_ARRAY values */
    fl_buf_t page; /* the inflated body */
    fl_buf_t dict_page; /* kept while the chunk's data pages refer to it */
    uint64_t *dict_off; /* n_dict + 1 offsets into dict_page (values, no length) */
    uint32_t *dict_len;
    size_t n_dict;
    bool has_dict;
    uint32_t *scratch; /* levels or indices of a page */
} pq_read_t;

/* A level block of a v1 data page at p[*pos]: u32-LE length, then n
 * levels as RLE at the width of max, each checked against max. */
static int page_levels(pq_read_t *rd, const uint8_t *p, size_t len, size_t *pos, int32_t encoding,
                       int max, uint8_t *out, size_t n, fl_error_t *err) {
    if (encoding != FL_PQ_ENC_RLE) return unsupported(err, "level encoding", encoding);
    if (len - *pos < 4) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: levels truncated");
    const uint8_t *q = p + *pos;
    uint32_t l = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    if (l > len - *pos - 4) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: levels of %u bytes", l);
    if (fl_rle_decode(q + 4, l, fl_rle_bit_width((uint32_t)max), rd->scratch, n, NULL, err))
        return FLUSS_ERR__CORRUPT;
    for (size_t i = 0; i < n; i++) {
        if (rd->scratch[i] > (uint32_t)max)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: level %u over its max %d",
                              rd->scratch[i], max);
        out[i] = (uint8_t)rd->scratch[i];
    }
    *pos += 4 + (size_t)l;
    return 0;
}

/* A GZIP page (RFC 1952: what parquet-mr's GzipCodec writes) into d,
 * exactly ulen bytes. */
static int page_gunzip(uint8_t *d, size_t ulen, const uint8_t *src, size_t clen, fl_error_t *err) {
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: cannot start inflating");
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)clen;
    z.next_out = d;
    z.avail_out = (uInt)ulen;
    int zr = inflate(&z, Z_FINISH);
    size_t got = z.total_out;
    inflateEnd(&z);
    if (zr != Z_STREAM_END || got != ulen || clen > UINT32_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: gzip page: %s",
                          zr == Z_STREAM_END ? "size differs" : "does not inflate");
    return 0;
}

static int page_inflate(pq_read_t *rd, const uint8_t *src, size_t clen, size_t ulen, fl_buf_t *dst,
                        fl_error_t *err) {
    fl_buf_reset(dst);
    if (ulen > FL_PQ_PAGE_BYTES_MAX) return unsupported(err, "page bytes", (long long)ulen);
    uint8_t *d = fl_buf_try_reserve(dst, ulen ? ulen : 1);
    if (!d) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: page of %zu bytes", ulen);
    if (rd->codec == FL_PQ_CODEC_UNCOMPRESSED) {
        if (clen != ulen)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: page sizes %zu/%zu", clen, ulen);
        memcpy(d, src, clen);
    } else if (rd->codec == FL_PQ_CODEC_GZIP) {
        int rc = page_gunzip(d, ulen, src, clen, err);
        if (rc) return rc;
    } else if (rd->codec == FL_PQ_CODEC_SNAPPY) {
        /* a raw Snappy block (Parquet's SNAPPY is not the framed format);
         * its own length header must agree with the page header's */
        size_t want = 0, got = ulen;
        if (snappy_uncompressed_length((const char *)src, clen, &want) != SNAPPY_OK ||
            want != ulen ||
            snappy_uncompress((const char *)src, clen, (char *)d, &got) != SNAPPY_OK ||
            got != ulen)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: snappy page does not inflate "
                              "to its %zu bytes", ulen);
    } else {
        size_t got = ZSTD_decompress(d, ulen, src, clen);
        if (ZSTD_isError(got) || got != ulen)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: zstd page: %s",
                              ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs");
    }
    dst->len = ulen;
    return 0;
}

/* PLAIN BYTE_ARRAY entry at p[*pos]: 4-byte length and bytes. */
static int plain_bytes(const uint8_t *p, size_t len, size_t *pos, const uint8_t **v,
                       uint32_t *n, fl_error_t *err) {
    if (len - *pos < 4) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: PLAIN value truncated");
    const uint8_t *q = p + *pos;
    uint32_t l = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    if (l > len - *pos - 4)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: PLAIN value of %u bytes truncated", l);
    *v = q + 4;
    *n = l;
    *pos += 4 + (size_t)l;
    return 0;
}

static int dictionary_page(pq_read_t *rd, const fl_pq_page_header_t *h, fl_error_t *err) {
    if (!h->has_dictionary || rd->has_dict || rd->got)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: misplaced dictionary page");
    if (h->dict_encoding != FL_PQ_ENC_PLAIN && h->dict_encoding != FL_PQ_ENC_PLAIN_DICTIONARY)
        return unsupported(err, "dictionary encoding", h->dict_encoding);
    if (rd->col->type == FL_PQ_BOOLEAN) return unsupported(err, "BOOLEAN dictionary", 0);
    const uint8_t *p = rd->dict_page.data;
    size_t len = rd->dict_page.len, pos = 0;
    size_t w = rd->out->width;
    if (h->dict_num_values < 0 || (size_t)h->dict_num_values > len)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: dictionary of %d values in %zu bytes",
                          h->dict_num_values, len);
    size_t n = (size_t)h->dict_num_values;
    rd->dict_off = fl_try_malloc((n + 1) * sizeof(uint64_t));
    rd->dict_len = fl_try_malloc((n + 1) * sizeof(uint32_t));
    if (!rd->dict_off || !rd->dict_len)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: dictionary of %zu", n);
    for (size_t i = 0; i < n; i++) {
        if (w) {
            if (len - pos < w) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: dictionary truncated");
            rd->dict_off[i] = pos;
            rd->dict_len[i] = (uint32_t)w;
            pos += w;
        } else {
            const uint8_t *v;
            uint32_t l;
            if (plain_bytes(p, len, &pos, &v, &l, err)) return FLUSS_ERR__CORRUPT;
            rd->dict_off[i] = (uint64_t)(v - p);
            rd->dict_len[i] = l;
        }
    }
    rd->n_dict = n;
    rd->has_dict = true;
    return 0;
}

/* Stores value v (len bytes, PLAIN form without length) at row `row`. */
static int put_value(pq_read_t *rd, size_t row, const uint8_t *v, size_t len, fl_error_t *err) {
    fl_pq_values_t *o = rd->out;
    if (o->type == FL_PQ_BYTE_ARRAY) {
        uint8_t *d = fl_buf_try_reserve(&rd->bytes, len ? len : 1);
        if (!d) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: %zu value bytes", len);
        memcpy(d, v, len);
        rd->bytes.len += len;
    } else {
        memcpy((uint8_t *)o->values + row * o->width, v, len);
    }
    return 0;
}

static void close_rows(pq_read_t *rd, size_t upto) {
    /* BYTE_ARRAY offsets of rows filled so far (nulls are empty) */
    if (rd->out->type == FL_PQ_BYTE_ARRAY)
        for (size_t r = rd->got; r < upto; r++) rd->out->offsets[r + 1] = rd->bytes.len;
}

static int plain_values(pq_read_t *rd, const uint8_t *p, size_t len, const uint8_t *valid,
                        size_t n, fl_error_t *err) {
    fl_pq_values_t *o = rd->out;
    size_t pos = 0, bit = 0, w = o->width;
    for (size_t i = 0; i < n; i++) {
        size_t row = rd->got + i;
        if (valid[i]) {
            if (o->type == FL_PQ_BOOLEAN) {
                if (bit / 8 >= len)
                    return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: PLAIN booleans truncated");
                ((uint8_t *)o->values)[row] = (p[bit / 8] >> (bit % 8)) & 1;
                bit++;
            } else if (w) {
                if (len - pos < w)
                    return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: PLAIN values truncated");
                if (put_value(rd, row, p + pos, w, err)) return err ? err->code : FLUSS_ERR__CORRUPT;
                pos += w;
            } else {
                const uint8_t *v;
                uint32_t l;
                if (plain_bytes(p, len, &pos, &v, &l, err)) return FLUSS_ERR__CORRUPT;
                if (put_value(rd, row, v, l, err)) return FLUSS_ERR__NO_MEMORY;
            }
        }
        if (o->type == FL_PQ_BYTE_ARRAY) o->offsets[row + 1] = rd->bytes.len;
    }
    return 0;
}

static int dict_values(pq_read_t *rd, const uint8_t *p, size_t len, const uint8_t *valid,
                       size_t n, size_t present, fl_error_t *err) {
    if (!rd->has_dict) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: no dictionary page");
    if (len < 1) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: no index bit width");
    int width = p[0];
    if (fl_rle_decode(p + 1, len - 1, width, rd->scratch, present, NULL, err))
        return FLUSS_ERR__CORRUPT;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t row = rd->got + i;
        if (valid[i]) {
            uint32_t e = rd->scratch[k++];
            if (e >= rd->n_dict)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: index %u of %zu", e, rd->n_dict);
            if (put_value(rd, row, rd->dict_page.data + rd->dict_off[e], rd->dict_len[e], err))
                return FLUSS_ERR__NO_MEMORY;
        }
        if (rd->out->type == FL_PQ_BYTE_ARRAY) rd->out->offsets[row + 1] = rd->bytes.len;
    }
    return 0;
}

static int data_page(pq_read_t *rd, const fl_pq_page_header_t *h, fl_error_t *err) {
    fl_pq_values_t *o = rd->out;
    if (!h->has_data) return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: data page without header");
    if (h->data_num_values < 0 || (size_t)h->data_num_values > rd->entries - rd->got)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "parquet: page of %d values past the chunk's %zu", h->data_num_values,
                          rd->entries);
    size_t n = (size_t)h->data_num_values;
    const uint8_t *p = rd->page.data;
    size_t len = rd->page.len, pos = 0;
    uint8_t *valid = o->valid + rd->got, *def = rd->def + rd->got;
    size_t present = n;
    if (rd->max_rep > 0) {
        uint8_t *rep = rd->rep + rd->got;
        if (page_levels(rd, p, len, &pos, h->rep_encoding, rd->max_rep, rep, n, err))
            return err ? err->code : FLUSS_ERR__CORRUPT;
        if (n && rd->got == 0 && rep[0] != 0)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: chunk starts inside a row");
    }
    if (rd->max_def > 0) {
        if (page_levels(rd, p, len, &pos, h->def_encoding, rd->max_def, def, n, err))
            return err ? err->code : FLUSS_ERR__CORRUPT;
        present = 0;
        for (size_t i = 0; i < n; i++) {
            valid[i] = def[i] == rd->max_def;
            present += valid[i];
        }
    } else {
        memset(valid, 1, n);
        memset(def, 0, n);
    }
    /* a continued list (rep r > 0) needs its r-th repeated field present */
    for (size_t i = 0; rd->max_rep > 0 && i < n; i++) {
        uint8_t r = rd->rep[rd->got + i];
        if (r > 0 && def[i] < rd->rep_def[r])
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: rep %u with def %u below %u", r,
                              def[i], rd->rep_def[r]);
    }
    int rc;
    if (h->data_encoding == FL_PQ_ENC_PLAIN)
        rc = plain_values(rd, p + pos, len - pos, valid, n, err);
    else if (h->data_encoding == FL_PQ_ENC_RLE_DICTIONARY ||
             h->data_encoding == FL_PQ_ENC_PLAIN_DICTIONARY)
        rc = dict_values(rd, p + pos, len - pos, valid, n, present, err);
    else
        rc = unsupported(err, "data encoding", h->data_encoding);
    if (rc) return rc;
    rd->got += n;
    return 0;
}

static int read_pages(const fl_pq_reader_t *r, pq_read_t *rd, size_t start, size_t end,
                      fl_error_t *err) {
    size_t pos = start;
    while (rd->got < rd->entries) {
        if (pos >= end)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: chunk ends after %zu of %zu values",
                              rd->got, rd->entries);
        fl_pq_page_header_t h;
        size_t used;
        if (fl_pq_page_header_decode(r->file + pos, end - pos, &h, &used, err)) {
            fl_err_prefix(err, "page header at %zu: ", pos);
            return FLUSS_ERR__CORRUPT;
        }
        pos += used;
        if (h.compressed_page_size < 0 || (size_t)h.compressed_page_size > end - pos ||
            h.uncompressed_page_size < 0)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: page of %d bytes at %zu",
                              h.compressed_page_size, pos);
        const uint8_t *body = r->file + pos;
        size_t clen = (size_t)h.compressed_page_size;
        pos += clen;
        int rc;
        if (h.type == FL_PQ_PAGE_DICTIONARY) {
            rc = page_inflate(rd, body, clen, (size_t)h.uncompressed_page_size, &rd->dict_page, err);
            if (!rc) rc = dictionary_page(rd, &h, err);
        } else if (h.type == FL_PQ_PAGE_DATA) {
            rc = page_inflate(rd, body, clen, (size_t)h.uncompressed_page_size, &rd->page, err);
            if (!rc) rc = data_page(rd, &h, err);
        } else {
            rc = unsupported(err, "page type", h.type);
        }
        if (rc) return rc;
    }
    return 0;
}

/* A slot per level entry (a row of a flat column). */
static int alloc_values(fl_pq_values_t *o, size_t rows, fl_error_t *err) {
    size_t w = o->width;
    o->valid = fl_try_malloc(rows ? rows : 1);
    if (w) {
        o->values = fl_try_malloc(rows ? rows * w : 1);
        if (o->values) memset(o->values, 0, rows * w);
    } else {
        o->offsets = fl_try_malloc((rows + 1) * sizeof(uint64_t));
        if (o->offsets) o->offsets[0] = 0;
    }
    if (!o->valid || (w && !o->values) || (!w && !o->offsets))
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: column of %zu values", rows);
    return 0;
}

/* The chunk's rows (entries at rep 0) against the row group's. */
static int check_rows(const pq_read_t *rd, size_t rows, fl_error_t *err) {
    if (rd->max_rep == 0) return 0; /* an entry per row: the counts were checked at open */
    size_t got = 0;
    for (size_t i = 0; i < rd->entries; i++) got += rd->rep[i] == 0;
    if (got != rows)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "parquet: chunk of %zu rows in a group of %zu",
                          got, rows);
    return 0;
}

int fl_pq_reader_read_column(const fl_pq_reader_t *r, size_t row_group, size_t column,
                             fl_pq_values_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    const fl_pq_file_meta_t *m = &r->meta;
    if (row_group >= m->n_row_groups || column >= r->tree.n_columns)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "parquet: no column %zu in row group %zu",
                          column, row_group);
    const fl_pq_row_group_t *g = &m->row_groups[row_group];
    const fl_pq_column_meta_t *cm = &g->columns[column].meta;
    int64_t start = cm->data_page_offset;
    if (cm->has_dictionary_page_offset && cm->dictionary_page_offset > 0 &&
        cm->dictionary_page_offset < start)
        start = cm->dictionary_page_offset;
    if (start < 4 || cm->total_compressed_size <= 0 || (uint64_t)start > r->data_end ||
        (uint64_t)cm->total_compressed_size > r->data_end - (uint64_t)start)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "parquet: chunk [%lld, +%lld) outside the data of a %zu-byte file",
                          (long long)start, (long long)cm->total_compressed_size, r->len);
    pq_read_t rd;
    memset(&rd, 0, sizeof(rd));
    size_t leaf = r->tree.leaves[column];
    rd.col = &m->schema[leaf];
    rd.codec = cm->codec;
    rd.out = out;
    rd.max_def = r->tree.def[leaf];
    rd.max_rep = r->tree.rep[leaf];
    for (int32_t a = (int32_t)leaf; a > 0; a = r->tree.parent[a])
        if (m->schema[a].repetition == FL_PQ_REPEATED) rd.rep_def[r->tree.rep[a]] = r->tree.def[a];
    out->type = rd.col->type;
    out->width = out->type == FL_PQ_FLBA ? (size_t)rd.col->type_length
                                         : fl_pq_fixed_width(out->type);
    out->max_def = rd.max_def;
    out->max_rep = rd.max_rep;
    size_t rows = (size_t)g->num_rows;
    rd.entries = (size_t)cm->num_values; /* checked at open: rows, or up to the levels bound */
    out->rows = rows;
    out->levels = rd.entries;
    size_t n = rd.entries;
    int rc = alloc_values(out, n, err);
    if (!rc) {
        rd.scratch = fl_try_malloc(n ? n * sizeof(uint32_t) : 1);
        rd.def = fl_try_malloc(n ? n : 1);
        rd.rep = rd.max_rep > 0 ? fl_try_malloc(n ? n : 1) : NULL;
        if (!rd.scratch || !rd.def || (rd.max_rep > 0 && !rd.rep))
            rc = fl_err_set(err, FLUSS_ERR__NO_MEMORY, "parquet: %zu values", n);
    }
    if (!rc)
        rc = read_pages(r, &rd, (size_t)start, (size_t)start + (size_t)cm->total_compressed_size,
                        err);
    if (!rc) rc = check_rows(&rd, rows, err);
    if (!rc && out->type == FL_PQ_BYTE_ARRAY) {
        close_rows(&rd, n);
        out->bytes = rd.bytes.data ? rd.bytes.data : fl_malloc(1);
        rd.bytes.data = NULL;
    }
    if (!rc && (rd.max_rep > 0 || rd.max_def > 1)) { /* levels go out with the values */
        out->def = rd.def;
        out->rep = rd.rep;
        rd.def = rd.rep = NULL;
    }
    fl_free(rd.def);
    fl_free(rd.rep);
    fl_buf_free(&rd.bytes);
    fl_buf_free(&rd.page);
    fl_buf_free(&rd.dict_page);
    fl_free(rd.dict_off);
    fl_free(rd.dict_len);
    fl_free(rd.scratch);
    if (rc) fl_pq_values_free(out);
    return rc;
}
