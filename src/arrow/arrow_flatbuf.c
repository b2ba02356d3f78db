/*
 * arrow_flatbuf.c — a minimal bounds-checked FlatBuffers reader and forward
 * builder for Arrow IPC metadata (layout table in arrow_flatbuf.h). The
 * reader never touches a byte before checking it lies within the buffer;
 * all arithmetic is done in size_t after range checks so nothing wraps.
 * Thread rule: none.
 */
#include "arrow_flatbuf.h"

#include <assert.h>
#include <string.h>

#define FB_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static int fl_arrow_fb_table_at(const uint8_t *buf, size_t len, size_t pos, const char *name,
                                fl_arrow_fb_table_t *out, fl_error_t *err) {
    if (pos > len || len - pos < 4)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s table at %zu overruns the %zu-byte flatbuffer",
                          name, pos, len);
    int32_t soff = (int32_t)fl_arrow_le32(buf + pos);
    /* vtable = pos - soff, computed in 64 bits so neither sign wraps */
    int64_t vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || (uint64_t)vt > len || len - (size_t)vt < 4)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s vtable at %lld (table %zu) is outside the "
                          "%zu-byte flatbuffer",
                          name, (long long)vt, pos, len);
    uint16_t vt_size = fl_arrow_le16(buf + vt);
    uint16_t tbl_size = fl_arrow_le16(buf + vt + 2);
    if (vt_size < 4 || (vt_size & 1) || vt_size > len - (size_t)vt)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s vtable at %lld has bad size %u", name,
                          (long long)vt, vt_size);
    if (tbl_size < 4 || tbl_size > len - pos)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s table at %zu has bad inline size %u", name, pos,
                          tbl_size);
    out->buf = buf;
    out->len = len;
    out->pos = pos;
    out->vt = (size_t)vt;
    out->vt_size = vt_size;
    out->tbl_size = tbl_size;
    out->name = name;
    return 0;
}

int fl_arrow_fb_root(const uint8_t *buf, size_t len, const char *name,
                     fl_arrow_fb_table_t *out, fl_error_t *err) {
    if (len < 4)
        return fl_err_set(err, FB_CORRUPT, "arrow metadata: %zu-byte flatbuffer is too short",
                          len);
    return fl_arrow_fb_table_at(buf, len, fl_arrow_le32(buf), name, out, err);
}

int fl_arrow_fb_field(const fl_arrow_fb_table_t *t, unsigned slot, size_t size, size_t *pos,
                      fl_error_t *err) {
    *pos = 0;
    size_t entry = 4 + 2 * (size_t)slot;
    if (entry + 2 > t->vt_size) return 0; /* older writer: field absent */
    uint16_t off = fl_arrow_le16(t->buf + t->vt + entry);
    if (off == 0) return 0;
    if (off < 4 || size > t->tbl_size || off > t->tbl_size - size)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s field %u at table offset %u (%zu bytes) is "
                          "outside its %u-byte table",
                          t->name, slot, off, size, t->tbl_size);
    *pos = t->pos + off;
    return 0;
}

int fl_arrow_fb_u8(const fl_arrow_fb_table_t *t, unsigned slot, uint8_t def, uint8_t *out,
                   fl_error_t *err) {
    size_t pos;
    int rc = fl_arrow_fb_field(t, slot, 1, &pos, err);
    if (rc) return rc;
    *out = pos ? t->buf[pos] : def;
    return 0;
}

int fl_arrow_fb_i16(const fl_arrow_fb_table_t *t, unsigned slot, int16_t def, int16_t *out,
                    fl_error_t *err) {
    size_t pos;
    int rc = fl_arrow_fb_field(t, slot, 2, &pos, err);
    if (rc) return rc;
    *out = pos ? (int16_t)fl_arrow_le16(t->buf + pos) : def;
    return 0;
}

int fl_arrow_fb_i64(const fl_arrow_fb_table_t *t, unsigned slot, int64_t def, int64_t *out,
                    fl_error_t *err) {
    size_t pos;
    int rc = fl_arrow_fb_field(t, slot, 8, &pos, err);
    if (rc) return rc;
    *out = pos ? (int64_t)fl_arrow_le64(t->buf + pos) : def;
    return 0;
}

/* Target of the uoffset field `slot`, or 0 when absent. */
static int fl_arrow_fb_target(const fl_arrow_fb_table_t *t, unsigned slot, const char *name,
                              size_t *target, fl_error_t *err) {
    size_t pos;
    *target = 0;
    int rc = fl_arrow_fb_field(t, slot, 4, &pos, err);
    if (rc || !pos) return rc;
    uint32_t rel = fl_arrow_le32(t->buf + pos);
    if (rel == 0 || rel > t->len - pos)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s.%s offset %u at %zu points outside the "
                          "%zu-byte flatbuffer",
                          t->name, name, rel, pos, t->len);
    *target = pos + rel;
    return 0;
}

int fl_arrow_fb_child(const fl_arrow_fb_table_t *t, unsigned slot, const char *name,
                      fl_arrow_fb_table_t *out, bool *present, fl_error_t *err) {
    size_t target;
    *present = false;
    int rc = fl_arrow_fb_target(t, slot, name, &target, err);
    if (rc || !target) return rc;
    rc = fl_arrow_fb_table_at(t->buf, t->len, target, name, out, err);
    if (rc) return rc;
    *present = true;
    return 0;
}

int fl_arrow_fb_vector(const fl_arrow_fb_table_t *t, unsigned slot, size_t elem_size,
                       const char *name, const uint8_t **elems, size_t *count,
                       fl_error_t *err) {
    size_t target;
    *elems = NULL;
    *count = 0;
    int rc = fl_arrow_fb_target(t, slot, name, &target, err);
    if (rc || !target) return rc;
    if (t->len - target < 4)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s.%s vector at %zu overruns the %zu-byte "
                          "flatbuffer",
                          t->name, name, target, t->len);
    size_t n = fl_arrow_le32(t->buf + target);
    size_t room = t->len - target - 4;
    if (elem_size && n > room / elem_size)
        return fl_err_set(err, FB_CORRUPT,
                          "arrow metadata: %s.%s vector of %zu x %zu bytes at %zu overruns the "
                          "%zu-byte flatbuffer",
                          t->name, name, n, elem_size, target, t->len);
    *elems = t->buf + target + 4;
    *count = n;
    return 0;
}

/* ---- builder ---- */

static size_t fl_arrow_fb_pos(const fl_arrow_fb_builder_t *b) { return b->out->len - b->base; }

static void fl_arrow_fb_zeros(fl_arrow_fb_builder_t *b, size_t n) {
    if (!n) return;
    memset(fl_buf_reserve(b->out, n), 0, n);
    b->out->len += n;
}

void fl_arrow_fb_builder_init(fl_arrow_fb_builder_t *b, fl_buf_t *out) {
    b->out = out;
    b->base = out->len;
    fl_arrow_fb_zeros(b, 4);
}

size_t fl_arrow_fb_add_table(fl_arrow_fb_builder_t *b, const fl_arrow_fb_field_t *fields,
                             size_t n, size_t *field_pos) {
    size_t slots = 0;
    for (size_t i = 0; i < n; i++)
        if ((size_t)fields[i].slot + 1 > slots) slots = (size_t)fields[i].slot + 1;
    size_t vt_size = 4 + 2 * slots;
    /* the table starts at 4 mod 8 so its int64 fields, laid first after the
     * soffset, are 8-aligned */
    size_t pad = (4 + 64 - (fl_arrow_fb_pos(b) + vt_size) % 8) % 8;
    fl_arrow_fb_zeros(b, pad);
    size_t vt = fl_arrow_fb_pos(b);
    size_t table = vt + vt_size;
    /* field offsets: by size, largest first */
    uint16_t off_of[64] = {0};
    assert(n <= 64 && slots <= 64);
    size_t off = 4;
    for (unsigned size = 8; size >= 1; size /= 2)
        for (size_t i = 0; i < n; i++)
            if (fields[i].size == size) {
                off_of[i] = (uint16_t)off;
                off += size;
            }
    size_t tbl_size = off;
    uint8_t *p = fl_buf_reserve(b->out, vt_size + tbl_size);
    memset(p, 0, vt_size + tbl_size);
    p[0] = (uint8_t)vt_size;
    p[1] = (uint8_t)(vt_size >> 8);
    p[2] = (uint8_t)tbl_size;
    p[3] = (uint8_t)(tbl_size >> 8);
    uint8_t *tp = p + vt_size;
    fl_arrow_put_le32(tp, (uint32_t)vt_size); /* vtable = table - vt_size */
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = p + 4 + 2 * fields[i].slot;
        e[0] = (uint8_t)off_of[i];
        e[1] = (uint8_t)(off_of[i] >> 8);
        uint8_t *f = tp + off_of[i];
        uint64_t v = fields[i].value;
        for (unsigned k = 0; k < fields[i].size; k++) f[k] = (uint8_t)(v >> (8 * k));
        if (field_pos) field_pos[i] = table + off_of[i];
    }
    b->out->len += vt_size + tbl_size;
    return table;
}

size_t fl_arrow_fb_add_vector(fl_arrow_fb_builder_t *b, const void *elems, size_t count,
                              size_t elem_size) {
    size_t pad = (8 - (fl_arrow_fb_pos(b) + 4) % 8) % 8;
    fl_arrow_fb_zeros(b, pad);
    size_t pos = fl_arrow_fb_pos(b);
    assert(count <= UINT32_MAX);
    uint8_t *p = fl_buf_reserve(b->out, 4);
    fl_arrow_put_le32(p, (uint32_t)count);
    b->out->len += 4;
    size_t n = count * elem_size;
    if (n) {
        uint8_t *d = fl_buf_reserve(b->out, n);
        if (elems)
            memcpy(d, elems, n);
        else
            memset(d, 0, n);
        b->out->len += n;
    }
    return pos;
}

void fl_arrow_fb_patch(fl_arrow_fb_builder_t *b, size_t field_pos, size_t target) {
    assert(target > field_pos && target - field_pos <= UINT32_MAX);
    fl_arrow_put_le32(b->out->data + b->base + field_pos, (uint32_t)(target - field_pos));
}

size_t fl_arrow_fb_finish(fl_arrow_fb_builder_t *b, size_t root, size_t prefix) {
    fl_arrow_put_le32(b->out->data + b->base, (uint32_t)root);
    fl_arrow_fb_zeros(b, (8 - (prefix + fl_arrow_fb_pos(b)) % 8) % 8);
    return fl_arrow_fb_pos(b);
}
