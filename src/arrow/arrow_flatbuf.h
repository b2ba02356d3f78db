/*
 * arrow_flatbuf.h — the little of the FlatBuffers binary format that Arrow
 * IPC metadata needs (implementer header of the arrow module): a reader in
 * which every offset, vtable and vector is bounds-checked against the
 * buffer before use, and a forward builder for the tables and struct
 * vectors of a Message. Format reminders (all little-endian):
 *
 * | where         | size | meaning                                          |
 * |---------------|------|--------------------------------------------------|
 * | buffer 0      | 4    | uoffset: root table at 0 + value                 |
 * | table T       | 4    | soffset: vtable at T − value (signed)            |
 * | table T + off | n    | field, off from the vtable (0 = absent)          |
 * | vtable V      | 2    | vtable size in bytes (4 + 2 × slots)             |
 * | vtable V + 2  | 2    | table inline size in bytes                       |
 * | vtable V + 4  | 2×k  | per slot: field offset within the table or 0     |
 * | offset field F| 4    | uoffset: child table / vector at F + value       |
 * | vector        | 4    | element count, then the elements                 |
 *
 * Positions are relative to the flatbuffer's start; alignment (8 for int64
 * fields and struct vectors) is too. Thread rule: none.
 */
#ifndef FL_ARROW_FLATBUF_H
#define FL_ARROW_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

static inline uint16_t fl_arrow_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t fl_arrow_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline uint64_t fl_arrow_le64(const uint8_t *p) {
    return (uint64_t)fl_arrow_le32(p) | (uint64_t)fl_arrow_le32(p + 4) << 32;
}
static inline void fl_arrow_put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void fl_arrow_put_le64(uint8_t *p, uint64_t v) {
    fl_arrow_put_le32(p, (uint32_t)v);
    fl_arrow_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- reader ---- */

/* A table whose soffset, vtable header and inline size are checked. */
typedef struct fl_arrow_fb_table {
    const uint8_t *buf;
    size_t len;        /* flatbuffer length */
    size_t pos;        /* table start */
    size_t vt;         /* vtable start */
    uint16_t vt_size;  /* bytes */
    uint16_t tbl_size; /* bytes */
    const char *name;  /* for messages: "Message", "RecordBatch", ... */
} fl_arrow_fb_table_t;

/* The root table of buf[0, len). */
int fl_arrow_fb_root(const uint8_t *buf, size_t len, const char *name,
                     fl_arrow_fb_table_t *out, fl_error_t *err);

/* Position of field `slot` of `size` bytes, or 0 when absent; checks that
 * the field lies inside the table's inline size. */
int fl_arrow_fb_field(const fl_arrow_fb_table_t *t, unsigned slot, size_t size, size_t *pos,
                      fl_error_t *err);

/* Scalars: the default when absent. */
int fl_arrow_fb_u8(const fl_arrow_fb_table_t *t, unsigned slot, uint8_t def, uint8_t *out,
                   fl_error_t *err);
int fl_arrow_fb_i16(const fl_arrow_fb_table_t *t, unsigned slot, int16_t def, int16_t *out,
                    fl_error_t *err);
int fl_arrow_fb_i64(const fl_arrow_fb_table_t *t, unsigned slot, int64_t def, int64_t *out,
                    fl_error_t *err);

/* Child table of offset field `slot`; *present = false when absent. */
int fl_arrow_fb_child(const fl_arrow_fb_table_t *t, unsigned slot, const char *name,
                      fl_arrow_fb_table_t *out, bool *present, fl_error_t *err);

/* Vector of elem_size-byte inline elements at offset field `slot`: its
 * first element and count (NULL and 0 when absent). */
int fl_arrow_fb_vector(const fl_arrow_fb_table_t *t, unsigned slot, size_t elem_size,
                       const char *name, const uint8_t **elems, size_t *count,
                       fl_error_t *err);

/* ---- builder ---- */

/* Writes a flatbuffer forward into out, starting at out->len (the
 * flatbuffer's position 0). Children come after their parents, so offset
 * fields are written as placeholders and patched. Grows out with the
 * aborting allocator: metadata sizes are ours (bounded by what we write). */
typedef struct fl_arrow_fb_builder {
    fl_buf_t *out;
    size_t base;
} fl_arrow_fb_builder_t;

/* A table field: slot, size 1/2/4/8, value (an offset field is size 4 and
 * patched later through its position). */
typedef struct fl_arrow_fb_field {
    uint16_t slot;
    uint8_t size;
    uint64_t value;
} fl_arrow_fb_field_t;

/* Starts a flatbuffer with a root offset placeholder. */
void fl_arrow_fb_builder_init(fl_arrow_fb_builder_t *b, fl_buf_t *out);
/* Writes a vtable and a table holding fields[0, n); field_pos[i] receives
 * field i's position. Returns the table's position. */
size_t fl_arrow_fb_add_table(fl_arrow_fb_builder_t *b, const fl_arrow_fb_field_t *fields,
                             size_t n, size_t *field_pos);
/* Writes a vector of count elem_size-byte elements aligned to 8 (zeros
 * when elems is NULL, for the caller to fill at fl_arrow_fb_at(pos + 4)).
 * Returns its position (the count). */
size_t fl_arrow_fb_add_vector(fl_arrow_fb_builder_t *b, const void *elems, size_t count,
                              size_t elem_size);
static inline uint8_t *fl_arrow_fb_at(fl_arrow_fb_builder_t *b, size_t pos) {
    return b->out->data + b->base + pos;
}
/* Points the offset field at field_pos to target (target > field_pos). */
void fl_arrow_fb_patch(fl_arrow_fb_builder_t *b, size_t field_pos, size_t target);
/* Patches the root offset, zero-pads so that `prefix` + the flatbuffer size
 * is a multiple of 8, and returns the padded size. */
size_t fl_arrow_fb_finish(fl_arrow_fb_builder_t *b, size_t root, size_t prefix);

#endif
