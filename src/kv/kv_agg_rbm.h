/*
 * kv_agg_rbm.h — the two roaring-bitmap byte formats the rbm32 / rbm64
 * aggregate functions fold (internal to kv_agg; exposed for tests and
 * fuzzing). Every decoder bounds-checks the untrusted bytes itself and
 * builds CRoaring bitmaps through CRoaring's own add calls, so a hostile
 * value never becomes a malformed CRoaring structure.
 *
 * rbm32: org.roaringbitmap.RoaringBitmap.serialize, the portable format
 * (github.com/RoaringBitmap/RoaringFormatSpec), all little-endian:
 *   cookie u32: 12346 (no run containers) then size u32,
 *               or 12347 | (size-1) << 16 then ceil(size/8) run-flag bytes
 *   size x {key u16, cardinality-1 u16}
 *   size x offset u32   (absent when cookie 12347 and size < 4)
 *   containers: run  = n_runs u16, n_runs x {start u16, length-1 u16}
 *               array (card <= 4096) = card x u16
 *               bitmap = 1024 x u64
 *
 * rbm64: org.roaringbitmap.longlong.Roaring64Bitmap.serialize(DataOutput)
 * of RoaringBitmap 1.3.0 (what Fluss 0.9.1 ships): an adaptive radix tree
 * over the high 48 bits, then the 16-bit containers. Little-endian except
 * the leaf key:
 *   tag u8: 0 = empty (nothing follows), else 1
 *   key_count i64
 *   node, depth first, children in key order:
 *     type u8 (0 NODE4, 1 NODE16, 2 NODE48, 3 NODE256, 4 LEAF)
 *     count i16 (children; 0 for a leaf), prefix_len i8, prefix bytes
 *     NODE4  : 4 key bytes as a LE u32 whose most significant byte is child 0
 *     NODE16 : 16 key bytes as two LE u64, most significant byte first child
 *     NODE48 : 32 LE u64: byte (7 - k%8) of word k/8 = child slot of key k, 0xFF none
 *     NODE256: 4 LE u64 presence bits (bit k%64 of word k/64)
 *     LEAF   : key 6 bytes big-endian (value >> 16), container_idx i64
 *                (first-level index << 32 | second-level index)
 *   first_level_count i32, per level: 0xFE, slot_count i32, per slot:
 *     0 (empty) | 1, type u8 (0 run, 1 bitmap, 2 array), cardinality i32,
 *     run = n_runs u16 + pairs, bitmap = 1024 x u64, array = card x u16
 *   container_count i64, last first-level index i32, last second-level index i32
 * Our encoder writes one first level with the containers in key order and
 * the node type Fluss's inserts would pick for each child count; Java
 * reads any such layout the same as its own.
 */
#ifndef FL_KV_AGG_RBM_H
#define FL_KV_AGG_RBM_H

#include <stddef.h>
#include <stdint.h>

#include <roaring/roaring.h>

#include "common_buf.h"
#include "common_error.h"

/* Decoded rbm32 bitmap (caller frees with roaring_bitmap_free) or NULL with
 * FLUSS_ERR__CORRUPT. */
roaring_bitmap_t *fl_kv_rbm32_decode(const uint8_t *p, size_t len, fl_error_t *err);
/* Appends the portable serialization (after run optimization). */
void fl_kv_rbm32_encode(roaring_bitmap_t *bm, fl_buf_t *out);

/* A 64-bit set: one CRoaring bitmap per high 32 bits, ascending. */
typedef struct fl_kv_rbm64_entry {
    uint32_t hi;
    roaring_bitmap_t *bm;
} fl_kv_rbm64_entry_t;

typedef struct fl_kv_rbm64 {
    size_t count, cap;
    fl_kv_rbm64_entry_t *entries;
} fl_kv_rbm64_t;

void fl_kv_rbm64_init(fl_kv_rbm64_t *b);
void fl_kv_rbm64_free(fl_kv_rbm64_t *b);
void fl_kv_rbm64_add(fl_kv_rbm64_t *b, uint64_t v);
uint64_t fl_kv_rbm64_cardinality(const fl_kv_rbm64_t *b);
/* b |= o */
void fl_kv_rbm64_or(fl_kv_rbm64_t *b, const fl_kv_rbm64_t *o);
/* Fills an initialized, empty b; FLUSS_ERR__CORRUPT on bad bytes. */
int fl_kv_rbm64_decode(const uint8_t *p, size_t len, fl_kv_rbm64_t *b, fl_error_t *err);
/* Appends the Roaring64Bitmap serialization (after run optimization). */
void fl_kv_rbm64_encode(fl_kv_rbm64_t *b, fl_buf_t *out);

/* The union of two serialized values, appended to out. */
int fl_kv_rbm32_union(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      fl_buf_t *out, fl_error_t *err);
int fl_kv_rbm64_union(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      fl_buf_t *out, fl_error_t *err);

#endif
