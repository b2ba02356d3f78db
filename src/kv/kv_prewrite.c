/*
 * kv_prewrite.c — the pre-write buffer (kv_prewrite.h): a chained hash of
 * the newest entry per key over a singly linked list in offset order.
 */
#include "kv_prewrite.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

#define FL_KV_PW_SLOTS_MIN 64

static uint32_t fl_kv_pw_hash(const uint8_t *k, size_t n) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 16777619u;
    return h;
}

void fl_kv_prewrite_init(fl_kv_prewrite_t *pw) {
    memset(pw, 0, sizeof(*pw));
}

void fl_kv_prewrite_clear(fl_kv_prewrite_t *pw) {
    for (fl_kv_pw_entry_t *e = pw->head, *n; e; e = n) {
        n = e->lnext;
        fl_free(e);
    }
    if (pw->slots) memset(pw->slots, 0, pw->slot_count * sizeof(*pw->slots));
    pw->head = pw->tail = NULL;
    pw->entries = pw->keys = pw->bytes = 0;
}

void fl_kv_prewrite_free(fl_kv_prewrite_t *pw) {
    fl_kv_prewrite_clear(pw);
    fl_free(pw->slots);
    memset(pw, 0, sizeof(*pw));
}

/* The slot of key: where it is, or the empty slot its probe ends at. */
static size_t fl_kv_pw_find(const fl_kv_prewrite_t *pw, const uint8_t *key, size_t klen,
                            uint32_t h) {
    size_t mask = pw->slot_count - 1, i = h & mask;
    for (; pw->slots[i].e; i = (i + 1) & mask) {
        const fl_kv_pw_entry_t *e = pw->slots[i].e;
        if (pw->slots[i].hash == h && e->klen == klen && memcmp(e->data, key, klen) == 0) break;
    }
    return i;
}

fl_kv_pw_lookup_t fl_kv_prewrite_get(const fl_kv_prewrite_t *pw, const uint8_t *key, size_t klen,
                                     const uint8_t **val, size_t *vlen) {
    if (!pw->keys) return FL_KV_PW_MISS;
    const fl_kv_pw_entry_t *e = pw->slots[fl_kv_pw_find(pw, key, klen, fl_kv_pw_hash(key, klen))].e;
    if (!e) return FL_KV_PW_MISS;
    if (e->deleted) return FL_KV_PW_DELETED;
    *val = e->data + e->klen;
    *vlen = e->vlen;
    return FL_KV_PW_VALUE;
}

static void fl_kv_pw_grow(fl_kv_prewrite_t *pw) {
    size_t n = pw->slot_count ? pw->slot_count * 2 : FL_KV_PW_SLOTS_MIN;
    fl_kv_pw_slot_t *old = pw->slots;
    size_t old_n = pw->slot_count;
    pw->slots = fl_calloc(n, sizeof(*pw->slots));
    pw->slot_count = n;
    for (size_t i = 0; i < old_n; i++) {
        if (!old[i].e) continue;
        size_t j = old[i].hash & (n - 1);
        while (pw->slots[j].e) j = (j + 1) & (n - 1);
        pw->slots[j] = old[i];
    }
    fl_free(old);
}

/* Empties slot i, moving later entries of its probe run back so that
 * every probe still reaches its key (no tombstones). */
static void fl_kv_pw_unslot(fl_kv_prewrite_t *pw, size_t i) {
    size_t mask = pw->slot_count - 1;
    for (size_t j = (i + 1) & mask; pw->slots[j].e; j = (j + 1) & mask) {
        size_t home = pw->slots[j].hash & mask;
        /* the entry at j may fill the hole at i unless its home lies in
         * the cyclic range (i, j] */
        bool stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            pw->slots[i] = pw->slots[j];
            i = j;
        }
    }
    pw->slots[i].e = NULL;
}

static void fl_kv_pw_link(fl_kv_prewrite_t *pw, fl_kv_pw_entry_t *e) {
    if ((pw->keys + 1) * 2 > pw->slot_count) fl_kv_pw_grow(pw);
    size_t i = fl_kv_pw_find(pw, e->data, e->klen, e->hash);
    if (pw->slots[i].e) { /* the key's older entry leaves the hash */
        pw->slots[i].e->in_hash = false;
    } else {
        pw->slots[i].hash = e->hash;
        pw->keys++;
    }
    pw->slots[i].e = e;
    e->in_hash = true;
    e->lnext = NULL;
    if (pw->tail) pw->tail->lnext = e;
    else pw->head = e;
    pw->tail = e;
    pw->entries++;
    pw->bytes += e->klen + e->vlen;
}

void fl_kv_prewrite_put(fl_kv_prewrite_t *pw, const uint8_t *key, size_t klen, const uint8_t *val,
                        size_t vlen, int64_t offset, int row_delta) {
    /* a value never takes a row away; a delete is only staged for a key
     * that has one */
    assert(val ? row_delta == 0 || row_delta == 1 : row_delta == -1);
    if (!val) vlen = 0;
    fl_kv_pw_entry_t *e = fl_malloc(sizeof(*e) + klen + vlen);
    e->hash = fl_kv_pw_hash(key, klen);
    e->deleted = val == NULL;
    e->row_delta = (int8_t)row_delta;
    e->offset = offset;
    e->klen = klen;
    e->vlen = vlen;
    memcpy(e->data, key, klen);
    if (vlen) memcpy(e->data + klen, val, vlen);
    fl_kv_pw_link(pw, e);
}

void fl_kv_prewrite_move(fl_kv_prewrite_t *dst, fl_kv_prewrite_t *src) {
    fl_kv_pw_entry_t *e = src->head;
    src->head = src->tail = NULL;
    if (src->slots) memset(src->slots, 0, src->slot_count * sizeof(*src->slots));
    /* room for every key of src at once instead of growing on the way */
    while ((dst->keys + src->keys) * 2 > dst->slot_count) fl_kv_pw_grow(dst);
    src->entries = src->keys = src->bytes = 0;
    while (e) {
        fl_kv_pw_entry_t *next = e->lnext;
        fl_kv_pw_link(dst, e);
        e = next;
    }
}

const fl_kv_pw_entry_t **fl_kv_prewrite_collect(const fl_kv_prewrite_t *pw, int64_t upto,
                                                size_t *n, int64_t *row_delta) {
    const fl_kv_pw_entry_t **v = NULL;
    size_t c = 0, cap = 0;
    int64_t d = 0;
    for (const fl_kv_pw_entry_t *e = pw->head; e && e->offset < upto; e = e->lnext) {
        if (c == cap) {
            cap = cap ? cap * 2 : 256;
            v = fl_realloc(v, cap * sizeof(*v));
        }
        v[c++] = e;
        d += e->row_delta;
    }
    *n = c;
    if (row_delta) *row_delta = d;
    return v;
}

static int fl_kv_pw_key_cmp(const fl_kv_pw_entry_t *x, const fl_kv_pw_entry_t *y) {
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = memcmp(x->data, y->data, n);
    if (c) return c;
    return x->klen < y->klen ? -1 : x->klen > y->klen;
}

/* by key, then by offset: equal keys keep their order */
static int fl_kv_pw_stage_cmp(const void *a, const void *b) {
    const fl_kv_pw_entry_t *x = *(const fl_kv_pw_entry_t *const *)a;
    const fl_kv_pw_entry_t *y = *(const fl_kv_pw_entry_t *const *)b;
    int c = fl_kv_pw_key_cmp(x, y);
    if (c) return c;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

void fl_kv_prewrite_stage_entries(const fl_kv_pw_entry_t **v, size_t n, fl_kv_write_t *w) {
    qsort(v, n, sizeof(*v), fl_kv_pw_stage_cmp);
    for (size_t i = 0; i < n; i++) {
        const fl_kv_pw_entry_t *e = v[i];
        /* only the newest entry of a key reaches RocksDB: the others are
         * overwritten in the same batch anyway */
        if (i + 1 < n && fl_kv_pw_key_cmp(v[i + 1], e) == 0) continue;
        if (e->deleted) fl_kv_write_delete(w, e->data, e->klen);
        else fl_kv_write_put(w, e->data, e->klen, e->data + e->klen, e->vlen);
    }
}

int64_t fl_kv_prewrite_row_delta(const fl_kv_prewrite_t *pw, int64_t upto) {
    int64_t d = 0;
    for (const fl_kv_pw_entry_t *e = pw->head; e && e->offset < upto; e = e->lnext)
        d += e->row_delta;
    return d;
}

void fl_kv_prewrite_release(fl_kv_prewrite_t *pw, int64_t upto) {
    while (pw->head && pw->head->offset < upto) {
        fl_kv_pw_entry_t *e = pw->head;
        pw->head = e->lnext;
        if (!pw->head) pw->tail = NULL;
        if (e->in_hash) {
            size_t i = fl_kv_pw_find(pw, e->data, e->klen, e->hash);
            if (pw->slots[i].e == e) {
                fl_kv_pw_unslot(pw, i);
                pw->keys--;
            }
        }
        pw->entries--;
        pw->bytes -= e->klen + e->vlen;
        fl_free(e);
    }
}

void fl_kv_prewrite_visit(const fl_kv_prewrite_t *pw, const uint8_t *prefix, size_t plen,
                          fl_kv_pw_visit_fn fn, void *arg) {
    for (const fl_kv_pw_entry_t *e = pw->head; e; e = e->lnext)
        if (e->in_hash && e->klen >= plen && (plen == 0 || memcmp(e->data, prefix, plen) == 0))
            fn(arg, e);
}
