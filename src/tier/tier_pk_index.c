/*
 * tier_pk_index.c — a primary-key bucket's lake index (tier_pk_index.h).
 *
 * Both the committed state and a round's overlay are open-addressing
 * hash maps of key bytes to a location, with linear probing and
 * backward-shift deletion (no tombstones). In the overlay a location
 * with file -1 says the key is gone.
 */
#include "tier_pk_index.h"

#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

typedef struct pk_slot {
    uint8_t *key; /* NULL: empty */
    uint32_t len;
    uint32_t hash;
    int32_t file;
    int64_t pos;
} pk_slot_t;

typedef struct pk_map {
    pk_slot_t *slots;
    size_t cap; /* a power of two, or 0 */
    size_t count;
} pk_map_t;

typedef struct pk_del {
    int32_t file;
    int64_t pos;
} pk_del_t;

struct fl_pk_index {
    pk_map_t live;
    char **files;
    size_t n_files, cap_files;
    int64_t stamp;
    /* the round */
    bool in_round, sealed;
    pk_map_t overlay;
    size_t base_files; /* committed files when the round began */
    size_t round_files; /* files the round's puts named (max + 1) */
    pk_del_t *dels;
    size_t n_dels, cap_dels;
    fl_pk_delete_t *out; /* the sealed deletes */
    char **new_paths;    /* the sealed round's files */
    size_t n_new;
    int64_t start, end;
    char *witness;
};

static uint32_t pk_hash(const void *key, size_t len) {
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static void map_free(pk_map_t *m) {
    for (size_t i = 0; i < m->cap; i++) fl_free(m->slots[i].key);
    fl_free(m->slots);
    memset(m, 0, sizeof(*m));
}

static pk_slot_t *map_find(const pk_map_t *m, const void *key, size_t len, uint32_t h) {
    if (!m->cap) return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        pk_slot_t *s = &m->slots[i];
        if (!s->key) return NULL;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) return s;
    }
}

static void map_place(pk_map_t *m, pk_slot_t s) {
    size_t mask = m->cap - 1;
    size_t i = s.hash & mask;
    while (m->slots[i].key) i = (i + 1) & mask;
    m->slots[i] = s;
}

static void map_grow(pk_map_t *m) {
    if ((m->count + 1) * 4 < m->cap * 3) return;
    pk_map_t n = {fl_calloc(m->cap ? m->cap * 2 : 64, sizeof(pk_slot_t)),
                  m->cap ? m->cap * 2 : 64, m->count};
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key) map_place(&n, m->slots[i]);
    fl_free(m->slots);
    *m = n;
}

/* Sets key's location (the key copied when new). */
static void map_set(pk_map_t *m, const void *key, size_t len, int32_t file, int64_t pos) {
    uint32_t h = pk_hash(key, len);
    pk_slot_t *s = map_find(m, key, len, h);
    if (s) {
        s->file = file;
        s->pos = pos;
        return;
    }
    map_grow(m);
    uint8_t *k = fl_malloc(len ? len : 1);
    if (len) memcpy(k, key, len);
    map_place(m, (pk_slot_t){k, (uint32_t)len, h, file, pos});
    m->count++;
}

/* Removes the slot s points at, shifting later slots of its run back. */
static void map_erase(pk_map_t *m, pk_slot_t *s) {
    size_t mask = m->cap - 1;
    size_t i = (size_t)(s - m->slots);
    fl_free(s->key);
    m->slots[i].key = NULL;
    m->count--;
    for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
        size_t home = m->slots[j].hash & mask;
        /* j's entry may move to i when i lies cyclically in [home, j) */
        bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (!movable) continue;
        m->slots[i] = m->slots[j];
        m->slots[j].key = NULL;
        i = j;
    }
}

fl_pk_index_t *fl_pk_index_new(void) {
    fl_pk_index_t *x = fl_calloc(1, sizeof(*x));
    x->stamp = -1;
    return x;
}

static void round_drop(fl_pk_index_t *x) {
    map_free(&x->overlay);
    fl_free(x->dels);
    fl_free(x->out);
    for (size_t i = 0; i < x->n_new; i++) fl_free(x->new_paths[i]);
    fl_free(x->new_paths);
    fl_free(x->witness);
    x->witness = NULL;
    x->dels = NULL;
    x->out = NULL;
    x->new_paths = NULL;
    x->n_dels = x->cap_dels = x->n_new = x->round_files = 0;
    x->in_round = x->sealed = false;
}

void fl_pk_index_clear(fl_pk_index_t *x) {
    round_drop(x);
    map_free(&x->live);
    for (size_t i = 0; i < x->n_files; i++) fl_free(x->files[i]);
    fl_free(x->files);
    x->files = NULL;
    x->n_files = x->cap_files = 0;
    x->stamp = -1;
}

void fl_pk_index_destroy(fl_pk_index_t *x) {
    if (!x) return;
    fl_pk_index_clear(x);
    fl_free(x);
}

int64_t fl_pk_index_stamp(const fl_pk_index_t *x) { return x->stamp; }
size_t fl_pk_index_live(const fl_pk_index_t *x) { return x->live.count; }
void fl_pk_index_set_stamp(fl_pk_index_t *x, int64_t stamp) { x->stamp = stamp; }

static int32_t add_file(fl_pk_index_t *x, const char *path) {
    if (x->n_files == x->cap_files) {
        x->cap_files = x->cap_files ? x->cap_files * 2 : 16;
        x->files = fl_realloc(x->files, x->cap_files * sizeof(*x->files));
    }
    x->files[x->n_files] = fl_strdup(path);
    return (int32_t)x->n_files++;
}

int32_t fl_pk_index_file_id(fl_pk_index_t *x, const char *path) {
    /* the rebuild adds a bucket's files once each, in a row: look back */
    for (size_t i = x->n_files; i-- > 0;)
        if (strcmp(x->files[i], path) == 0) return (int32_t)i;
    return add_file(x, path);
}

int fl_pk_index_load(fl_pk_index_t *x, const void *key, size_t len, int32_t file, int64_t pos,
                     fl_error_t *err) {
    if (map_find(&x->live, key, len, pk_hash(key, len)))
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "the lake holds a primary key live twice (row %lld of %s, and an "
                          "earlier row)",
                          (long long)pos, file >= 0 && (size_t)file < x->n_files ? x->files[file] : "?");
    map_set(&x->live, key, len, file, pos);
    return 0;
}

bool fl_pk_index_get(const fl_pk_index_t *x, const void *key, size_t len, const char **path,
                     int64_t *pos) {
    const pk_slot_t *s = map_find(&x->live, key, len, pk_hash(key, len));
    if (!s) return false;
    *path = x->files[s->file];
    *pos = s->pos;
    return true;
}

void fl_pk_index_round_begin(fl_pk_index_t *x) {
    round_drop(x);
    x->in_round = true;
    x->base_files = x->n_files;
    x->start = x->stamp;
}

/* The key's location as the round sees it: false when not live. */
static bool round_live(const fl_pk_index_t *x, const void *key, size_t len, uint32_t h,
                       int32_t *file, int64_t *pos) {
    const pk_slot_t *s = map_find(&x->overlay, key, len, h);
    if (!s) s = map_find(&x->live, key, len, h);
    if (!s || s->file < 0) return false;
    *file = s->file;
    *pos = s->pos;
    return true;
}

static void round_delete(fl_pk_index_t *x, const void *key, size_t len) {
    int32_t file;
    int64_t pos;
    if (!round_live(x, key, len, pk_hash(key, len), &file, &pos)) return;
    if (x->n_dels == x->cap_dels) {
        x->cap_dels = x->cap_dels ? x->cap_dels * 2 : 64;
        x->dels = fl_realloc(x->dels, x->cap_dels * sizeof(*x->dels));
    }
    x->dels[x->n_dels++] = (pk_del_t){file, pos};
}

void fl_pk_index_round_put(fl_pk_index_t *x, const void *key, size_t len, size_t round_file,
                           int64_t pos) {
    round_delete(x, key, len);
    map_set(&x->overlay, key, len, (int32_t)(x->base_files + round_file), pos);
    if (round_file + 1 > x->round_files) x->round_files = round_file + 1;
}

void fl_pk_index_round_remove(fl_pk_index_t *x, const void *key, size_t len) {
    round_delete(x, key, len);
    map_set(&x->overlay, key, len, -1, 0);
}

size_t fl_pk_index_round_remove_rest(fl_pk_index_t *x) {
    size_t n = 0;
    for (size_t i = 0; i < x->live.cap; i++) {
        const pk_slot_t *s = &x->live.slots[i];
        if (!s->key || map_find(&x->overlay, s->key, s->len, s->hash)) continue;
        /* inserts into the overlay only: the live map is not changed */
        fl_pk_index_round_remove(x, s->key, s->len);
        n++;
    }
    return n;
}

static int delete_cmp(const void *a, const void *b) {
    const fl_pk_delete_t *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c) return c;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

int fl_pk_index_round_seal(fl_pk_index_t *x, const char *const *paths, size_t n, int64_t end,
                           const char *witness, const fl_pk_delete_t **dels, size_t *n_dels,
                           fl_error_t *err) {
    if (!x->in_round || x->sealed)
        return fl_err_set(err, FLUSS_ERR__STATE, "lake index: no round to seal");
    if (x->round_files > n)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "lake index: the round put rows in %zu files, %zu named",
                          x->round_files, n);
    x->new_paths = fl_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) x->new_paths[i] = fl_strdup(paths[i]);
    x->n_new = n;
    x->out = fl_calloc(x->n_dels + 1, sizeof(*x->out));
    for (size_t i = 0; i < x->n_dels; i++) {
        int32_t f = x->dels[i].file;
        x->out[i].path = (size_t)f < x->base_files ? x->files[f] : x->new_paths[f - (int32_t)x->base_files];
        x->out[i].pos = x->dels[i].pos;
    }
    if (x->n_dels) qsort(x->out, x->n_dels, sizeof(*x->out), delete_cmp);
    x->end = end;
    x->witness = witness ? fl_strdup(witness) : NULL;
    x->sealed = true;
    *dels = x->out;
    *n_dels = x->n_dels;
    return 0;
}

bool fl_pk_index_round_sealed(const fl_pk_index_t *x) { return x->sealed; }
const char *fl_pk_index_round_witness(const fl_pk_index_t *x) { return x->witness; }

void fl_pk_index_round_set_witness(fl_pk_index_t *x, const char *witness) {
    if (!x->sealed) return;
    fl_free(x->witness);
    x->witness = witness ? fl_strdup(witness) : NULL;
}
int64_t fl_pk_index_round_start(const fl_pk_index_t *x) { return x->start; }
int64_t fl_pk_index_round_end(const fl_pk_index_t *x) { return x->end; }

void fl_pk_index_round_commit(fl_pk_index_t *x) {
    if (!x->sealed) return;
    /* the round's files take the ids its puts used: the committed table
     * has not changed since round_begin */
    for (size_t i = 0; i < x->n_new; i++) add_file(x, x->new_paths[i]);
    for (size_t i = 0; i < x->overlay.cap; i++) {
        const pk_slot_t *s = &x->overlay.slots[i];
        if (!s->key) continue;
        if (s->file >= 0) {
            map_set(&x->live, s->key, s->len, s->file, s->pos);
        } else {
            pk_slot_t *l = map_find(&x->live, s->key, s->len, s->hash);
            if (l) map_erase(&x->live, l);
        }
    }
    x->stamp = x->end;
    round_drop(x);
}
