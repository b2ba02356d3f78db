/*
 * log_writer_state.c — idempotent writer bookkeeping (log_writer_state.h):
 * an open-addressing table keyed by writer id, each entry a ring of the last
 * FL_WRITER_BATCHES_KEPT batches.
 */
#include "log_writer_state.h"

#include <string.h>

#include "common_alloc.h"
#include "common_crc32c.h"
#include "record_batch.h"

void fl_writer_state_init(fl_writer_state_t *s) {
    s->cap = 16;
    s->used = 0;
    s->slots = fl_malloc(s->cap * sizeof(*s->slots));
    for (size_t i = 0; i < s->cap; i++) s->slots[i].writer_id = -1;
}

void fl_writer_state_free(fl_writer_state_t *s) {
    fl_free(s->slots);
    memset(s, 0, sizeof(*s));
}

static size_t fl_writer_hash(int64_t id, size_t cap) {
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static fl_writer_entry_t *fl_writer_find(const fl_writer_state_t *s, int64_t id) {
    for (size_t i = fl_writer_hash(id, s->cap), n = 0; n < s->cap; i = (i + 1) & (s->cap - 1), n++) {
        if (s->slots[i].writer_id == id) return &s->slots[i];
        if (s->slots[i].writer_id == -1) return NULL;
    }
    return NULL;
}

static void fl_writer_grow(fl_writer_state_t *s) {
    fl_writer_state_t bigger = {.cap = s->cap * 2, .used = 0};
    bigger.slots = fl_malloc(bigger.cap * sizeof(*bigger.slots));
    for (size_t i = 0; i < bigger.cap; i++) bigger.slots[i].writer_id = -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i].writer_id == -1) continue;
        size_t k = fl_writer_hash(s->slots[i].writer_id, bigger.cap);
        while (bigger.slots[k].writer_id != -1) k = (k + 1) & (bigger.cap - 1);
        bigger.slots[k] = s->slots[i];
        bigger.used++;
    }
    fl_free(s->slots);
    *s = bigger;
}

int fl_writer_state_check(const fl_writer_state_t *s, int64_t writer_id, int32_t sequence,
                          fl_writer_batch_t *dup, fl_error_t *err) {
    const fl_writer_entry_t *e = fl_writer_find(s, writer_id);
    if (!e) {
        if (sequence == 0) return FL_WRITER_NEW_BATCH;
        return fl_err_set(err, FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION,
                          "Out of order batch sequence for writer %lld: %d (incoming batch "
                          "sequence), -1 (current batch sequence)",
                          (long long)writer_id, sequence);
    }
    for (int32_t i = 0; i < e->count; i++) {
        const fl_writer_batch_t *b = &e->batches[(e->head - i + FL_WRITER_BATCHES_KEPT) %
                                                 FL_WRITER_BATCHES_KEPT];
        if (b->sequence == sequence) {
            *dup = *b;
            return FL_WRITER_DUPLICATE;
        }
    }
    int32_t last = e->batches[e->head].sequence;
    int32_t next = last == INT32_MAX ? 0 : last + 1;
    if (sequence == next) return FL_WRITER_NEW_BATCH;
    return fl_err_set(err, FLUSS_ERR_OUT_OF_ORDER_SEQUENCE_EXCEPTION,
                      "Out of order batch sequence for writer %lld: %d (incoming batch "
                      "sequence), %d (current batch sequence)",
                      (long long)writer_id, sequence, last);
}

void fl_writer_state_record(fl_writer_state_t *s, int64_t writer_id, int32_t sequence,
                            int64_t first_offset, int64_t last_offset, int64_t timestamp) {
    fl_writer_entry_t *e = fl_writer_find(s, writer_id);
    if (!e) {
        if ((s->used + 1) * 4 > s->cap * 3) fl_writer_grow(s);
        size_t k = fl_writer_hash(writer_id, s->cap);
        while (s->slots[k].writer_id != -1) k = (k + 1) & (s->cap - 1);
        e = &s->slots[k];
        memset(e, 0, sizeof(*e));
        e->writer_id = writer_id;
        e->last_timestamp = -1;
        e->head = FL_WRITER_BATCHES_KEPT - 1;
        s->used++;
    }
    e->head = (e->head + 1) % FL_WRITER_BATCHES_KEPT;
    e->batches[e->head] = (fl_writer_batch_t){sequence, first_offset, last_offset};
    if (e->count < FL_WRITER_BATCHES_KEPT) e->count++;
    if (timestamp > e->last_timestamp) e->last_timestamp = timestamp;
}

size_t fl_writer_state_expire(fl_writer_state_t *s, int64_t now_ms, int64_t expiration_ms) {
    size_t expired = 0;
    for (size_t i = 0; i < s->cap; i++) {
        fl_writer_entry_t *e = &s->slots[i];
        if (e->writer_id == -1) continue;
        if (e->last_timestamp < 0) e->last_timestamp = now_ms;
        else if (now_ms - e->last_timestamp > expiration_ms) expired++;
    }
    if (!expired) return 0;
    /* open addressing: rebuild without them rather than leave holes */
    fl_writer_state_t kept = {.cap = s->cap, .used = 0};
    kept.slots = fl_malloc(kept.cap * sizeof(*kept.slots));
    for (size_t i = 0; i < kept.cap; i++) kept.slots[i].writer_id = -1;
    for (size_t i = 0; i < s->cap; i++) {
        const fl_writer_entry_t *e = &s->slots[i];
        if (e->writer_id == -1 || now_ms - e->last_timestamp > expiration_ms) continue;
        size_t k = fl_writer_hash(e->writer_id, kept.cap);
        while (kept.slots[k].writer_id != -1) k = (k + 1) & (kept.cap - 1);
        kept.slots[k] = *e;
        kept.used++;
    }
    fl_free(s->slots);
    *s = kept;
    return expired;
}

#define FL_WS_MAGIC "FLWS"
#define FL_WS_VERSION 2
#define FL_WS_BATCH_BYTES 20

void fl_writer_state_encode(const fl_writer_state_t *s, fl_buf_t *out) {
    size_t start = out->len;
    uint8_t w[8];
    fl_buf_append(out, FL_WS_MAGIC, 4);
    fl_put_le32(w, FL_WS_VERSION);
    fl_buf_append(out, w, 4);
    fl_put_le32(w, (uint32_t)s->used);
    fl_buf_append(out, w, 4);
    for (size_t i = 0; i < s->cap; i++) {
        const fl_writer_entry_t *e = &s->slots[i];
        if (e->writer_id == -1) continue;
        fl_put_le64(w, (uint64_t)e->writer_id);
        fl_buf_append(out, w, 8);
        fl_put_le64(w, (uint64_t)e->last_timestamp);
        fl_buf_append(out, w, 8);
        fl_put_le32(w, (uint32_t)e->count);
        fl_buf_append(out, w, 4);
        for (int32_t k = e->count - 1; k >= 0; k--) {
            const fl_writer_batch_t *b =
                &e->batches[(e->head - k + FL_WRITER_BATCHES_KEPT) % FL_WRITER_BATCHES_KEPT];
            fl_put_le32(w, (uint32_t)b->sequence);
            fl_buf_append(out, w, 4);
            fl_put_le64(w, (uint64_t)b->first_offset);
            fl_buf_append(out, w, 8);
            fl_put_le64(w, (uint64_t)b->last_offset);
            fl_buf_append(out, w, 8);
        }
    }
    fl_put_le32(w, fl_crc32c(0, out->data + start, out->len - start));
    fl_buf_append(out, w, 4);
}

int fl_writer_state_decode(fl_writer_state_t *s, const uint8_t *p, size_t len, fl_error_t *err) {
    const int code = FLUSS_ERR__CORRUPT;
    if (len < 16 || memcmp(p, FL_WS_MAGIC, 4) != 0)
        return fl_err_set(err, code, "not a writer snapshot");
    if ((uint32_t)fl_get_le32(p + len - 4) != fl_crc32c(0, p, len - 4))
        return fl_err_set(err, code, "writer snapshot checksum mismatch");
    int32_t version = fl_get_le32(p + 4);
    if (version != 1 && version != FL_WS_VERSION)
        return fl_err_set(err, code, "writer snapshot version %d", version);
    size_t head_bytes = version == 1 ? 12 : 20;
    int32_t writers = fl_get_le32(p + 8);
    size_t pos = 12, end = len - 4;
    fl_writer_state_t fresh;
    fl_writer_state_init(&fresh);
    for (int32_t i = 0; i < writers; i++) {
        if (end - pos < head_bytes) goto bad;
        int64_t id = fl_get_le64(p + pos);
        int64_t ts = version == 1 ? -1 : fl_get_le64(p + pos + 8);
        int32_t count = fl_get_le32(p + pos + head_bytes - 4);
        pos += head_bytes;
        if (id == -1 || count < 1 || count > FL_WRITER_BATCHES_KEPT ||
            (end - pos) / FL_WS_BATCH_BYTES < (size_t)count || fl_writer_find(&fresh, id))
            goto bad;
        if (ts < -1) goto bad;
        for (int32_t k = 0; k < count; k++, pos += FL_WS_BATCH_BYTES)
            fl_writer_state_record(&fresh, id, fl_get_le32(p + pos), fl_get_le64(p + pos + 4),
                                   fl_get_le64(p + pos + 12), ts);
    }
    if (writers < 0 || pos != end) goto bad;
    fl_writer_state_free(s);
    *s = fresh;
    return 0;
bad:
    fl_writer_state_free(&fresh);
    return fl_err_set(err, code, "writer snapshot is inconsistent");
}
