/*
 * kv_agg_rbm.c — bounds-checked codecs and unions for the rbm32 / rbm64
 * aggregate functions (layouts in kv_agg_rbm.h). Decoding goes peek ->
 * verify -> add: every length is checked against the bytes left before it
 * is used, and values reach CRoaring only through its add calls.
 */
#include "kv_agg_rbm.h"

#include <assert.h>
#include <roaring/containers/array.h>
#include <roaring/containers/bitset.h>
#include <roaring/containers/containers.h>
#include <roaring/containers/run.h>
#include <string.h>

#include "common_alloc.h"

#define FL_RBM_ART_KEY_BYTES 6
#define FL_RBM_CHUNK_MAX 4096 /* values handed to roaring_bitmap_add_many at once */

typedef struct fl_rbm_reader {
    const uint8_t *p;
    size_t len, pos;
} fl_rbm_reader_t;

static const uint8_t *fl_rbm_take(fl_rbm_reader_t *r, size_t n) {
    if (n > r->len - r->pos) return NULL;
    const uint8_t *q = r->p + r->pos;
    r->pos += n;
    return q;
}

static uint16_t fl_le16(const uint8_t *q) { return (uint16_t)(q[0] | q[1] << 8); }
static uint32_t fl_le32(const uint8_t *q) {
    return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}
static uint64_t fl_le64(const uint8_t *q) { return fl_le32(q) | (uint64_t)fl_le32(q + 4) << 32; }

static void fl_put_le16(fl_buf_t *b, uint16_t v) {
    uint8_t q[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    fl_buf_append(b, q, 2);
}
static void fl_put_le32(fl_buf_t *b, uint32_t v) {
    uint8_t q[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fl_buf_append(b, q, 4);
}
static void fl_put_le64(fl_buf_t *b, uint64_t v) {
    fl_put_le32(b, (uint32_t)v);
    fl_put_le32(b, (uint32_t)(v >> 32));
}

/* ---- containers shared by both formats ---------------------------------- */

typedef enum fl_rbm_kind { FL_RBM_ARRAY, FL_RBM_BITMAP, FL_RBM_RUN } fl_rbm_kind_t;

typedef struct fl_rbm_container {
    fl_rbm_kind_t kind;
    uint32_t n;          /* array: values; run: runs */
    const uint8_t *body; /* array values, bitmap words or run pairs */
} fl_rbm_container_t;

/* Reads a container body of the given kind; n is the array cardinality
 * (run: read from the body). */
static int fl_rbm_read_container(fl_rbm_reader_t *r, fl_rbm_kind_t kind, uint32_t n,
                                 fl_rbm_container_t *c, fl_error_t *err) {
    c->kind = kind;
    const uint8_t *q;
    switch (kind) {
    case FL_RBM_RUN:
        if (!(q = fl_rbm_take(r, 2))) goto short_input;
        c->n = fl_le16(q);
        if (!(c->body = fl_rbm_take(r, (size_t)c->n * 4))) goto short_input;
        for (uint32_t i = 0; i < c->n; i++)
            if ((uint32_t)fl_le16(c->body + 4 * i) + fl_le16(c->body + 4 * i + 2) > 0xFFFF)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring run past 65535");
        return 0;
    case FL_RBM_BITMAP:
        c->n = 1024;
        if (!(c->body = fl_rbm_take(r, 8192))) goto short_input;
        return 0;
    case FL_RBM_ARRAY:
        if (n > 65536) return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring array of %u values", n);
        c->n = n;
        if (!(c->body = fl_rbm_take(r, (size_t)n * 2))) goto short_input;
        return 0;
    }
short_input:
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring container past the end of the value");
}

static void fl_rbm_add_container(roaring_bitmap_t *bm, uint32_t base, const fl_rbm_container_t *c) {
    uint32_t chunk[FL_RBM_CHUNK_MAX];
    size_t k = 0;
    if (c->kind == FL_RBM_RUN) {
        for (uint32_t i = 0; i < c->n; i++) {
            uint32_t start = fl_le16(c->body + 4 * i), len = fl_le16(c->body + 4 * i + 2);
            roaring_bitmap_add_range_closed(bm, base | start, base | (start + len));
        }
        return;
    }
    if (c->kind == FL_RBM_ARRAY) {
        for (uint32_t i = 0; i < c->n; i++) {
            chunk[k++] = base | fl_le16(c->body + 2 * i);
            if (k == FL_RBM_CHUNK_MAX) roaring_bitmap_add_many(bm, k, chunk), k = 0;
        }
    } else {
        for (uint32_t w = 0; w < 1024; w++) {
            uint64_t word = fl_le64(c->body + 8 * w);
            while (word) {
                chunk[k++] = base | (w * 64 + (uint32_t)__builtin_ctzll(word));
                word &= word - 1;
                if (k == FL_RBM_CHUNK_MAX) roaring_bitmap_add_many(bm, k, chunk), k = 0;
            }
        }
    }
    if (k) roaring_bitmap_add_many(bm, k, chunk);
}

/* ---- rbm32: portable format --------------------------------------------- */

#define FL_RBM_COOKIE_NO_RUN 12346u
#define FL_RBM_COOKIE 12347u
#define FL_RBM_NO_OFFSET_THRESHOLD 4u

roaring_bitmap_t *fl_kv_rbm32_decode(const uint8_t *p, size_t len, fl_error_t *err) {
    fl_rbm_reader_t r = {p, len, 0};
    const uint8_t *q, *runs = NULL;
    if (!(q = fl_rbm_take(&r, 4))) goto short_input;
    uint32_t cookie = fl_le32(q), size;
    if ((cookie & 0xFFFF) == FL_RBM_COOKIE) {
        size = (cookie >> 16) + 1;
        if (!(runs = fl_rbm_take(&r, (size + 7) / 8))) goto short_input;
    } else if (cookie == FL_RBM_COOKIE_NO_RUN) {
        if (!(q = fl_rbm_take(&r, 4))) goto short_input;
        size = fl_le32(q);
        if (size > 65536) {
            fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring bitmap with %u containers", size);
            return NULL;
        }
    } else {
        fl_err_set(err, FLUSS_ERR__CORRUPT, "not a roaring bitmap (cookie %u)", cookie);
        return NULL;
    }
    const uint8_t *header = fl_rbm_take(&r, (size_t)size * 4);
    if (!header) goto short_input;
    if ((!runs || size >= FL_RBM_NO_OFFSET_THRESHOLD) && !fl_rbm_take(&r, (size_t)size * 4))
        goto short_input;
    roaring_bitmap_t *bm = roaring_bitmap_create();
    for (uint32_t i = 0; i < size; i++) {
        uint32_t key = fl_le16(header + 4 * i), card = (uint32_t)fl_le16(header + 4 * i + 2) + 1;
        fl_rbm_kind_t kind = runs && (runs[i / 8] >> (i % 8) & 1) ? FL_RBM_RUN
                             : card <= 4096                        ? FL_RBM_ARRAY
                                                                   : FL_RBM_BITMAP;
        fl_rbm_container_t c;
        if (fl_rbm_read_container(&r, kind, card, &c, err)) {
            roaring_bitmap_free(bm);
            return NULL;
        }
        fl_rbm_add_container(bm, key << 16, &c);
    }
    return bm;
short_input:
    fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring bitmap past the end of the value");
    return NULL;
}

void fl_kv_rbm32_encode(roaring_bitmap_t *bm, fl_buf_t *out) {
    roaring_bitmap_run_optimize(bm);
    size_t n = roaring_bitmap_portable_size_in_bytes(bm);
    uint8_t *dst = fl_buf_reserve(out, n);
    size_t w = roaring_bitmap_portable_serialize(bm, (char *)dst);
    assert(w == n);
    out->len += w;
}

int fl_kv_rbm32_union(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      fl_buf_t *out, fl_error_t *err) {
    roaring_bitmap_t *x = fl_kv_rbm32_decode(a, alen, err);
    if (!x) return err ? err->code : FLUSS_ERR__CORRUPT;
    roaring_bitmap_t *y = fl_kv_rbm32_decode(b, blen, err);
    if (!y) {
        roaring_bitmap_free(x);
        return err ? err->code : FLUSS_ERR__CORRUPT;
    }
    roaring_bitmap_or_inplace(x, y);
    fl_kv_rbm32_encode(x, out);
    roaring_bitmap_free(x);
    roaring_bitmap_free(y);
    return 0;
}

/* ---- rbm64: the 64-bit set ---------------------------------------------- */

void fl_kv_rbm64_init(fl_kv_rbm64_t *b) { memset(b, 0, sizeof(*b)); }

void fl_kv_rbm64_free(fl_kv_rbm64_t *b) {
    for (size_t i = 0; i < b->count; i++) roaring_bitmap_free(b->entries[i].bm);
    fl_free(b->entries);
    memset(b, 0, sizeof(*b));
}

/* The bitmap of high half hi, created in order when absent. */
static roaring_bitmap_t *fl_rbm64_slot(fl_kv_rbm64_t *b, uint32_t hi) {
    size_t lo = 0, n = b->count;
    if (n && b->entries[n - 1].hi < hi) {
        lo = n; /* appending in order: the usual case */
    } else {
        size_t h = n;
        while (lo < h) {
            size_t mid = lo + (h - lo) / 2;
            if (b->entries[mid].hi < hi) lo = mid + 1;
            else h = mid;
        }
        if (lo < n && b->entries[lo].hi == hi) return b->entries[lo].bm;
    }
    if (b->count == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 4;
        b->entries = fl_realloc(b->entries, b->cap * sizeof(*b->entries));
    }
    memmove(b->entries + lo + 1, b->entries + lo, (b->count - lo) * sizeof(*b->entries));
    b->entries[lo].hi = hi;
    b->entries[lo].bm = roaring_bitmap_create();
    b->count++;
    return b->entries[lo].bm;
}

void fl_kv_rbm64_add(fl_kv_rbm64_t *b, uint64_t v) {
    roaring_bitmap_add(fl_rbm64_slot(b, (uint32_t)(v >> 32)), (uint32_t)v);
}

uint64_t fl_kv_rbm64_cardinality(const fl_kv_rbm64_t *b) {
    uint64_t n = 0;
    for (size_t i = 0; i < b->count; i++) n += roaring_bitmap_get_cardinality(b->entries[i].bm);
    return n;
}

void fl_kv_rbm64_or(fl_kv_rbm64_t *b, const fl_kv_rbm64_t *o) {
    for (size_t i = 0; i < o->count; i++)
        roaring_bitmap_or_inplace(fl_rbm64_slot(b, o->entries[i].hi), o->entries[i].bm);
}

/* ---- rbm64 decoder ------------------------------------------------------ */

typedef struct fl_rbm64_leaf {
    uint64_t key48;
    uint64_t container_idx;
} fl_rbm64_leaf_t;

typedef struct fl_rbm64_leaves {
    size_t count, cap;
    fl_rbm64_leaf_t *v;
} fl_rbm64_leaves_t;

enum { FL_ART_NODE4, FL_ART_NODE16, FL_ART_NODE48, FL_ART_NODE256, FL_ART_LEAF };

static const size_t fl_art_body_bytes[] = {4, 16, 256, 32, FL_RBM_ART_KEY_BYTES + 8};
static const int fl_art_capacity[] = {4, 16, 48, 256, 0};

/* One node and its subtree; depth counts key bytes consumed so far, which
 * bounds the recursion to the 6 key bytes. */
static int fl_rbm64_read_node(fl_rbm_reader_t *r, int depth, fl_rbm64_leaves_t *leaves,
                              fl_error_t *err) {
    const uint8_t *h = fl_rbm_take(r, 4);
    if (!h) goto short_input;
    int type = h[0], count = (int16_t)fl_le16(h + 1), prefix = (int8_t)h[3];
    if (type > FL_ART_LEAF)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 node type %d", type);
    /* a leaf keeps the prefix a removal folded into it (up to all 6 bytes);
     * an inner node's prefix is bounded by the depth check below */
    if (prefix < 0 || prefix > FL_RBM_ART_KEY_BYTES || !fl_rbm_take(r, (size_t)prefix))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 node prefix of %d bytes", prefix);
    const uint8_t *body = fl_rbm_take(r, fl_art_body_bytes[type]);
    if (!body) goto short_input;
    if (type == FL_ART_LEAF) {
        uint64_t key = 0;
        for (int i = 0; i < FL_RBM_ART_KEY_BYTES; i++) key = key << 8 | body[i];
        if (leaves->count == leaves->cap) {
            leaves->cap = leaves->cap ? leaves->cap * 2 : 16;
            leaves->v = fl_realloc(leaves->v, leaves->cap * sizeof(*leaves->v));
        }
        leaves->v[leaves->count++] = (fl_rbm64_leaf_t){key, fl_le64(body + FL_RBM_ART_KEY_BYTES)};
        return 0;
    }
    depth += prefix + 1;
    if (count < 1 || count > fl_art_capacity[type] || depth > FL_RBM_ART_KEY_BYTES)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 node of %d children at depth %d",
                          count, depth);
    for (int i = 0; i < count; i++) {
        int rc = fl_rbm64_read_node(r, depth, leaves, err);
        if (rc) return rc;
    }
    return 0;
short_input:
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 tree past the end of the value");
}

typedef struct fl_rbm64_slots {
    size_t levels;
    size_t *level_base, *level_size; /* per first level: first slot, slot count */
    size_t count, cap;
    fl_rbm_container_t *c;
    uint8_t *present;
} fl_rbm64_slots_t;

static void fl_rbm64_slots_free(fl_rbm64_slots_t *s) {
    fl_free(s->level_base);
    fl_free(s->level_size);
    fl_free(s->c);
    fl_free(s->present);
}

static int fl_rbm64_read_containers(fl_rbm_reader_t *r, fl_rbm64_slots_t *s, fl_error_t *err) {
    const uint8_t *q;
    if (!(q = fl_rbm_take(r, 4))) goto short_input;
    int32_t levels = (int32_t)fl_le32(q);
    if (levels < 0 || (size_t)levels > (r->len - r->pos) / 5)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 with %d container levels", levels);
    s->levels = (size_t)levels;
    s->level_base = fl_calloc(s->levels ? s->levels : 1, sizeof(size_t));
    s->level_size = fl_calloc(s->levels ? s->levels : 1, sizeof(size_t));
    for (size_t l = 0; l < s->levels; l++) {
        if (!(q = fl_rbm_take(r, 5))) goto short_input;
        int32_t n = (int32_t)fl_le32(q + 1); /* q[0]: the trim mark, not checked by Java */
        if (n < 0 || (size_t)n > r->len - r->pos)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 level of %d slots", n);
        s->level_base[l] = s->count;
        s->level_size[l] = (size_t)n;
        if (s->count + (size_t)n > s->cap) {
            s->cap = s->count + (size_t)n;
            s->c = fl_realloc(s->c, s->cap * sizeof(*s->c));
            s->present = fl_realloc(s->present, s->cap);
        }
        for (int32_t i = 0; i < n; i++, s->count++) {
            if (!(q = fl_rbm_take(r, 1))) goto short_input;
            s->present[s->count] = q[0];
            if (q[0] == 0) continue;
            if (q[0] != 1)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 slot mark %u", q[0]);
            if (!(q = fl_rbm_take(r, 5))) goto short_input;
            int32_t card = (int32_t)fl_le32(q + 1);
            fl_rbm_kind_t kind = q[0] == 0 ? FL_RBM_RUN : q[0] == 1 ? FL_RBM_BITMAP : FL_RBM_ARRAY;
            if (q[0] > 2 || card < 0)
                return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 container type %u card %d",
                                  q[0], card);
            int rc = fl_rbm_read_container(r, kind, (uint32_t)card, &s->c[s->count], err);
            if (rc) return rc;
        }
    }
    if (!fl_rbm_take(r, 16)) goto short_input; /* count, last indexes: not needed */
    return 0;
short_input:
    return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 containers past the end of the value");
}

int fl_kv_rbm64_decode(const uint8_t *p, size_t len, fl_kv_rbm64_t *b, fl_error_t *err) {
    fl_rbm_reader_t r = {p, len, 0};
    const uint8_t *tag = fl_rbm_take(&r, 1);
    if (!tag) return fl_err_set(err, FLUSS_ERR__CORRUPT, "empty roaring64 value");
    if (tag[0] == 0) return 0;
    if (!fl_rbm_take(&r, 8))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 tree past the end of the value");
    fl_rbm64_leaves_t leaves = {0};
    fl_rbm64_slots_t slots = {0};
    int rc = fl_rbm64_read_node(&r, 0, &leaves, err);
    if (!rc) rc = fl_rbm64_read_containers(&r, &slots, err);
    for (size_t i = 0; !rc && i < leaves.count; i++) {
        uint64_t first = leaves.v[i].container_idx >> 32;
        uint64_t second = leaves.v[i].container_idx & 0xFFFFFFFFu;
        if (first >= slots.levels || second >= slots.level_size[first] ||
            !slots.present[slots.level_base[first] + second]) {
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "roaring64 leaf names no container");
            break;
        }
        uint64_t key = leaves.v[i].key48;
        fl_rbm_add_container(fl_rbm64_slot(b, (uint32_t)(key >> 16)), (uint32_t)(key & 0xFFFF) << 16,
                             &slots.c[slots.level_base[first] + second]);
    }
    fl_free(leaves.v);
    fl_rbm64_slots_free(&slots);
    if (rc) fl_kv_rbm64_free(b);
    return rc;
}

/* ---- rbm64 encoder ------------------------------------------------------ */

typedef struct fl_rbm64_out_container {
    uint64_t key48;
    uint8_t typecode;
    const void *c;
} fl_rbm64_out_container_t;

static uint8_t fl_key_byte(uint64_t key48, int i) {
    return (uint8_t)(key48 >> (8 * (FL_RBM_ART_KEY_BYTES - 1 - i)));
}

/* Writes the subtree of keys [lo, hi) (sorted, distinct) below depth;
 * leaf i names container slot i. */
static void fl_rbm64_write_node(const fl_rbm64_out_container_t *k, size_t lo, size_t hi,
                                int depth, fl_buf_t *out) {
    if (hi - lo == 1) {
        uint8_t h[4] = {FL_ART_LEAF, 0, 0, 0};
        fl_buf_append(out, h, 4);
        for (int i = 0; i < FL_RBM_ART_KEY_BYTES; i++) fl_buf_put_u8(out, fl_key_byte(k[lo].key48, i));
        fl_put_le64(out, lo);
        return;
    }
    int split = depth; /* first byte where the first and last key differ */
    while (fl_key_byte(k[lo].key48, split) == fl_key_byte(k[hi - 1].key48, split)) split++;
    uint8_t bytes[256];
    size_t starts[257], n = 0;
    for (size_t i = lo; i < hi; i++) {
        uint8_t b = fl_key_byte(k[i].key48, split);
        if (n == 0 || bytes[n - 1] != b) bytes[n] = b, starts[n++] = i;
    }
    starts[n] = hi;
    int type = n <= 4 ? FL_ART_NODE4 : n <= 16 ? FL_ART_NODE16 : n <= 48 ? FL_ART_NODE48 : FL_ART_NODE256;
    fl_buf_put_u8(out, (uint8_t)type);
    fl_put_le16(out, (uint16_t)n);
    fl_buf_put_u8(out, (uint8_t)(split - depth));
    for (int i = depth; i < split; i++) fl_buf_put_u8(out, fl_key_byte(k[lo].key48, i));
    if (type == FL_ART_NODE4 || type == FL_ART_NODE16) {
        uint8_t keys[16] = {0};
        memcpy(keys, bytes, n);
        for (int w = 0; w < (type == FL_ART_NODE4 ? 1 : 2); w++) {
            int width = type == FL_ART_NODE4 ? 4 : 8;
            for (int i = width - 1; i >= 0; i--) fl_buf_put_u8(out, keys[w * 8 + i]);
        }
    } else if (type == FL_ART_NODE48) {
        uint8_t idx[256];
        memset(idx, 0xFF, sizeof(idx));
        for (size_t j = 0; j < n; j++) idx[bytes[j]] = (uint8_t)j;
        for (int w = 0; w < 32; w++)
            for (int i = 7; i >= 0; i--) fl_buf_put_u8(out, idx[w * 8 + i]);
    } else {
        uint64_t mask[4] = {0};
        for (size_t j = 0; j < n; j++) mask[bytes[j] >> 6] |= 1ull << (bytes[j] & 63);
        for (int w = 0; w < 4; w++) fl_put_le64(out, mask[w]);
    }
    for (size_t j = 0; j < n; j++) fl_rbm64_write_node(k, starts[j], starts[j + 1], split + 1, out);
}

static void fl_rbm64_write_container(const fl_rbm64_out_container_t *c, fl_buf_t *out) {
    fl_buf_put_u8(out, 1);
    if (c->typecode == RUN_CONTAINER_TYPE_CODE) {
        const run_container_t *run = c->c;
        uint32_t card = 0;
        for (int32_t i = 0; i < run->n_runs; i++) card += (uint32_t)run->runs[i].length + 1;
        fl_buf_put_u8(out, 0);
        fl_put_le32(out, card);
        fl_put_le16(out, (uint16_t)run->n_runs);
        for (int32_t i = 0; i < run->n_runs; i++) {
            fl_put_le16(out, run->runs[i].value);
            fl_put_le16(out, run->runs[i].length);
        }
    } else if (c->typecode == BITSET_CONTAINER_TYPE_CODE) {
        const bitset_container_t *bs = c->c;
        uint32_t card = 0;
        for (int i = 0; i < 1024; i++) card += (uint32_t)__builtin_popcountll(bs->array[i]);
        fl_buf_put_u8(out, 1);
        fl_put_le32(out, card);
        for (int i = 0; i < 1024; i++) fl_put_le64(out, bs->array[i]);
    } else {
        assert(c->typecode == ARRAY_CONTAINER_TYPE_CODE);
        const array_container_t *a = c->c;
        fl_buf_put_u8(out, 2);
        fl_put_le32(out, (uint32_t)a->cardinality);
        for (int32_t i = 0; i < a->cardinality; i++) fl_put_le16(out, a->array[i]);
    }
}

void fl_kv_rbm64_encode(fl_kv_rbm64_t *b, fl_buf_t *out) {
    size_t n = 0;
    for (size_t i = 0; i < b->count; i++) {
        roaring_bitmap_run_optimize(b->entries[i].bm);
        n += (size_t)b->entries[i].bm->high_low_container.size;
    }
    if (n == 0) {
        fl_buf_put_u8(out, 0);
        return;
    }
    fl_rbm64_out_container_t *k = fl_malloc(n * sizeof(*k));
    size_t m = 0;
    for (size_t i = 0; i < b->count; i++) {
        const roaring_array_t *ra = &b->entries[i].bm->high_low_container;
        for (int32_t j = 0; j < ra->size; j++, m++) {
            assert(ra->typecodes[j] != SHARED_CONTAINER_TYPE_CODE); /* we never copy on write */
            k[m] = (fl_rbm64_out_container_t){(uint64_t)b->entries[i].hi << 16 | ra->keys[j],
                                              ra->typecodes[j], ra->containers[j]};
        }
    }
    fl_buf_put_u8(out, 1);
    fl_put_le64(out, n);
    fl_rbm64_write_node(k, 0, n, 0, out);
    fl_put_le32(out, 1);
    fl_buf_put_u8(out, 0xFE);
    fl_put_le32(out, (uint32_t)n);
    for (size_t i = 0; i < n; i++) fl_rbm64_write_container(&k[i], out);
    fl_put_le64(out, n);
    fl_put_le32(out, 0);
    fl_put_le32(out, (uint32_t)(n - 1));
    fl_free(k);
}

int fl_kv_rbm64_union(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                      fl_buf_t *out, fl_error_t *err) {
    fl_kv_rbm64_t x, y;
    fl_kv_rbm64_init(&x);
    fl_kv_rbm64_init(&y);
    int rc = fl_kv_rbm64_decode(a, alen, &x, err);
    if (!rc) rc = fl_kv_rbm64_decode(b, blen, &y, err);
    if (!rc) {
        fl_kv_rbm64_or(&x, &y);
        fl_kv_rbm64_encode(&x, out);
    }
    fl_kv_rbm64_free(&x);
    fl_kv_rbm64_free(&y);
    return rc;
}
