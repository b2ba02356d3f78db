/*
 * lake_thrift.c — the Thrift compact protocol writer and reader
 * (lake_thrift.h has the byte layout). The reader checks every length
 * against the bytes left before it looks at them; nesting is bounded by
 * FL_TC_DEPTH_MAX on both sides (an assert for our writer, an error for
 * outside bytes).
 */
#include "lake_thrift.h"

#include <assert.h>
#include <string.h>


void fl_tc_writer_init(fl_tc_writer_t *w, fl_buf_t *out) {
    memset(w, 0, sizeof(*w));
    w->out = out;
}

void fl_tc_struct_begin(fl_tc_writer_t *w) {
    assert(w->depth < FL_TC_DEPTH_MAX);
    w->stack[w->depth++] = w->last;
    w->last = 0;
}

void fl_tc_struct_end(fl_tc_writer_t *w) {
    assert(w->depth > 0);
    fl_buf_put_u8(w->out, FL_TC_STOP);
    w->last = w->stack[--w->depth];
}

void fl_tc_field_header(fl_tc_writer_t *w, int16_t id, uint8_t type) {
    assert(w->depth > 0 && type > 0 && type <= FL_TC_STRUCT);
    int32_t delta = (int32_t)id - w->last;
    if (delta > 0 && delta <= 15) {
        fl_buf_put_u8(w->out, (uint8_t)(delta << 4 | type));
    } else {
        fl_buf_put_u8(w->out, type);
        fl_buf_put_uvarint(w->out, fl_tc_zigzag64(id));
    }
    w->last = id;
}

void fl_tc_field_bool(fl_tc_writer_t *w, int16_t id, bool v) {
    fl_tc_field_header(w, id, v ? FL_TC_TRUE : FL_TC_FALSE);
}

void fl_tc_i32(fl_tc_writer_t *w, int32_t v) { fl_buf_put_uvarint(w->out, fl_tc_zigzag64(v)); }
void fl_tc_i64(fl_tc_writer_t *w, int64_t v) { fl_buf_put_uvarint(w->out, fl_tc_zigzag64(v)); }

void fl_tc_binary(fl_tc_writer_t *w, const void *p, size_t n) {
    fl_buf_put_uvarint(w->out, n);
    if (n) fl_buf_append(w->out, p, n);
}

void fl_tc_field_i32(fl_tc_writer_t *w, int16_t id, int32_t v) {
    fl_tc_field_header(w, id, FL_TC_I32);
    fl_tc_i32(w, v);
}

void fl_tc_field_i64(fl_tc_writer_t *w, int16_t id, int64_t v) {
    fl_tc_field_header(w, id, FL_TC_I64);
    fl_tc_i64(w, v);
}

void fl_tc_field_binary(fl_tc_writer_t *w, int16_t id, const void *p, size_t n) {
    fl_tc_field_header(w, id, FL_TC_BINARY);
    fl_tc_binary(w, p, n);
}

void fl_tc_field_string(fl_tc_writer_t *w, int16_t id, const char *s) {
    fl_tc_field_binary(w, id, s, strlen(s));
}

void fl_tc_field_struct_begin(fl_tc_writer_t *w, int16_t id) {
    fl_tc_field_header(w, id, FL_TC_STRUCT);
    fl_tc_struct_begin(w);
}

void fl_tc_list_header(fl_tc_writer_t *w, uint8_t elem, uint32_t n) {
    if (n < 15) {
        fl_buf_put_u8(w->out, (uint8_t)(n << 4 | elem));
    } else {
        fl_buf_put_u8(w->out, (uint8_t)(0xF0 | elem));
        fl_buf_put_uvarint(w->out, n);
    }
}

void fl_tc_field_list_begin(fl_tc_writer_t *w, int16_t id, uint8_t elem, uint32_t n) {
    fl_tc_field_header(w, id, FL_TC_LIST);
    fl_tc_list_header(w, elem, n);
}

/* ---- reader ---- */

void fl_tc_reader_init(fl_tc_reader_t *r, const uint8_t *p, size_t len) {
    memset(r, 0, sizeof(*r));
    r->p = p;
    r->len = len;
}

static int truncated(fl_tc_reader_t *r, fl_error_t *err) {
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: truncated at byte %zu of %zu", r->pos,
                      r->len);
}

int fl_tc_read_uvarint(fl_tc_reader_t *r, uint64_t *v, fl_error_t *err) {
    size_t used;
    switch (fl_uvarint_get(r->p + r->pos, r->len - r->pos, v, &used)) {
    case FL_UVARINT_OK:
        r->pos += used;
        return 0;
    case FL_UVARINT_TRUNCATED:
        r->pos = r->len;
        return truncated(r, err);
    case FL_UVARINT_OVERLONG:
        break;
    }
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: varint over 64 bits");
}

int fl_tc_read_i64(fl_tc_reader_t *r, int64_t *v, fl_error_t *err) {
    uint64_t u;
    if (fl_tc_read_uvarint(r, &u, err)) return FLUSS_ERR__CORRUPT;
    *v = fl_tc_unzigzag64(u);
    return 0;
}

int fl_tc_read_i32(fl_tc_reader_t *r, int32_t *v, fl_error_t *err) {
    int64_t x;
    if (fl_tc_read_i64(r, &x, err)) return FLUSS_ERR__CORRUPT;
    if (x < INT32_MIN || x > INT32_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: i32 out of range: %lld",
                          (long long)x);
    *v = (int32_t)x;
    return 0;
}

int fl_tc_read_binary(fl_tc_reader_t *r, const uint8_t **p, uint32_t *n, fl_error_t *err) {
    uint64_t len;
    if (fl_tc_read_uvarint(r, &len, err)) return FLUSS_ERR__CORRUPT;
    if (len > r->len - r->pos || len > UINT32_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: binary of %llu bytes, %zu left",
                          (unsigned long long)len, r->len - r->pos);
    *p = r->p + r->pos;
    *n = (uint32_t)len;
    r->pos += len;
    return 0;
}

int fl_tc_read_struct_begin(fl_tc_reader_t *r, fl_error_t *err) {
    if (r->depth >= FL_TC_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: nested deeper than %d",
                          FL_TC_DEPTH_MAX);
    r->stack[r->depth++] = r->last;
    r->last = 0;
    return 0;
}

void fl_tc_read_struct_end(fl_tc_reader_t *r) {
    assert(r->depth > 0);
    r->last = r->stack[--r->depth];
}

int fl_tc_read_field(fl_tc_reader_t *r, int16_t *id, uint8_t *type, fl_error_t *err) {
    if (r->pos >= r->len) return truncated(r, err);
    uint8_t b = r->p[r->pos++];
    if (b == FL_TC_STOP) {
        *id = 0;
        *type = FL_TC_STOP;
        return 0;
    }
    uint8_t t = b & 0x0f;
    if (t > FL_TC_STRUCT) return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: field type %u", t);
    int32_t fid;
    if (b >> 4) {
        fid = (int32_t)r->last + (b >> 4);
    } else {
        int64_t x;
        if (fl_tc_read_i64(r, &x, err)) return FLUSS_ERR__CORRUPT;
        fid = (int32_t)x;
        if (x != fid) fid = INT32_MAX;
    }
    if (fid < INT16_MIN || fid > INT16_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: field id out of range");
    r->last = (int16_t)fid;
    *id = (int16_t)fid;
    *type = t;
    return 0;
}

int fl_tc_read_list_header(fl_tc_reader_t *r, uint8_t *elem, uint32_t *n, fl_error_t *err) {
    if (r->pos >= r->len) return truncated(r, err);
    uint8_t b = r->p[r->pos++];
    uint64_t count = b >> 4;
    if (count == 15 && fl_tc_read_uvarint(r, &count, err)) return FLUSS_ERR__CORRUPT;
    *elem = b & 0x0f;
    if (*elem == FL_TC_STOP || *elem > FL_TC_STRUCT)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: list element type %u", *elem);
    if (count > r->len - r->pos)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: list of %llu, %zu bytes left",
                          (unsigned long long)count, r->len - r->pos);
    *n = (uint32_t)count;
    return 0;
}

int fl_tc_field_bool_value(uint8_t type, bool *v, fl_error_t *err) {
    if (type != FL_TC_TRUE && type != FL_TC_FALSE)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: bool field of type %u", type);
    *v = type == FL_TC_TRUE;
    return 0;
}

static int skip_bytes(fl_tc_reader_t *r, size_t n, fl_error_t *err) {
    if (n > r->len - r->pos) return truncated(r, err);
    r->pos += n;
    return 0;
}

static int skip_elements(fl_tc_reader_t *r, uint8_t elem, uint64_t n, fl_error_t *err) {
    for (uint64_t i = 0; i < n; i++)
        if (fl_tc_skip(r, elem, false, err)) return FLUSS_ERR__CORRUPT;
    return 0;
}

/* Lists count as a nesting level like structs, so a list of lists of ...
 * cannot recurse without bound. */
static int skip_list(fl_tc_reader_t *r, fl_error_t *err) {
    if (r->depth >= FL_TC_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: nested deeper than %d",
                          FL_TC_DEPTH_MAX);
    uint8_t elem;
    uint32_t n;
    if (fl_tc_read_list_header(r, &elem, &n, err)) return FLUSS_ERR__CORRUPT;
    r->depth++; /* no field ids inside: the stack slot stays unused */
    int rc = skip_elements(r, elem, n, err);
    r->depth--;
    return rc;
}

static int skip_map(fl_tc_reader_t *r, fl_error_t *err) {
    if (r->depth >= FL_TC_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: nested deeper than %d",
                          FL_TC_DEPTH_MAX);
    uint64_t n;
    if (fl_tc_read_uvarint(r, &n, err)) return FLUSS_ERR__CORRUPT;
    if (n == 0) return 0;
    if (n > r->len - r->pos)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: map of %llu", (unsigned long long)n);
    uint8_t kv = r->p[r->pos++];
    uint8_t kt = kv >> 4, vt = kv & 0x0f;
    if (kt == FL_TC_STOP || kt > FL_TC_STRUCT || vt == FL_TC_STOP || vt > FL_TC_STRUCT)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: map types %u/%u", kt, vt);
    r->depth++;
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        rc = fl_tc_skip(r, kt, false, err);
        if (!rc) rc = fl_tc_skip(r, vt, false, err);
    }
    r->depth--;
    return rc;
}

int fl_tc_skip(fl_tc_reader_t *r, uint8_t type, bool in_field, fl_error_t *err) {
    uint64_t u;
    switch (type) {
    case FL_TC_TRUE:
    case FL_TC_FALSE: return in_field ? 0 : skip_bytes(r, 1, err);
    case FL_TC_BYTE: return skip_bytes(r, 1, err);
    case FL_TC_I16:
    case FL_TC_I32:
    case FL_TC_I64: return fl_tc_read_uvarint(r, &u, err);
    case FL_TC_DOUBLE: return skip_bytes(r, 8, err);
    case FL_TC_BINARY: {
        const uint8_t *p;
        uint32_t n;
        return fl_tc_read_binary(r, &p, &n, err);
    }
    case FL_TC_LIST:
    case FL_TC_SET: return skip_list(r, err);
    case FL_TC_MAP: return skip_map(r, err);
    case FL_TC_STRUCT: {
        if (fl_tc_read_struct_begin(r, err)) return FLUSS_ERR__CORRUPT;
        for (;;) {
            int16_t id;
            uint8_t t;
            if (fl_tc_read_field(r, &id, &t, err)) return FLUSS_ERR__CORRUPT;
            if (t == FL_TC_STOP) break;
            if (fl_tc_skip(r, t, true, err)) return FLUSS_ERR__CORRUPT;
        }
        fl_tc_read_struct_end(r);
        return 0;
    }
    default: return fl_err_set(err, FLUSS_ERR__CORRUPT, "thrift: cannot skip type %u", type);
    }
}
