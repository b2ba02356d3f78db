/*
 * client_union.c — libfluss's union scanner: a lake scanner and a log
 * scanner behind one poll, so that a reader that follows a lake table
 * gets each bucket's lake rows and then its log from the lake offset on
 * (fluss.h, "union read").
 *
 * A bucket subscribed at FLUSS_OFFSET_LAKE is on the scanner's list until
 * the log scanner has it, in one of two states. WAIT: its lake rows not
 * yet looked for. LAKE: a lake phase is reading the snapshot for it; its
 * log offset (the snapshot's lake offset, or the earliest) is known.
 * A poll with buckets in WAIT and no lake phase running starts one:
 * GET_LAKE_SNAPSHOT, then a lake scanner over the snapshot, whose batches
 * of LAKE buckets are handed out (others are dropped: a snapshot holds
 * every bucket's files). The poll that finds the lake scanner done moves
 * every LAKE bucket to LOG at its offset and returns without a batch, so
 * a caller knows where the lake ended. The log is not polled during a
 * lake phase: lake reads are local file reads that do not wait.
 *
 * Thread rule: one user at a time (fluss.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_table.h"
#include "common_alloc.h"

typedef enum fl_ustate { FL_U_WAIT, FL_U_LAKE } fl_ustate_t;

typedef struct fl_ubucket {
    int64_t partition_id;
    int32_t bucket;
    fl_ustate_t state;
    int64_t log_from; /* FL_U_LAKE: where its log starts */
} fl_ubucket_t;

struct fluss_union_scanner {
    fluss_client_t *c;
    fluss_table_t *t;
    fluss_log_scanner_t *log;
    int32_t *projection; /* NULL: all columns */
    size_t projection_count;
    char *filter;
    bool lake_on;
    bool pk;
    fl_ubucket_t *b;
    size_t count;
    fluss_lake_scanner_t *lake; /* a lake phase's, NULL between them */
    int64_t snapshot_id;
    size_t lake_files;
    int64_t lake_rows;
};

int fluss_union_scanner_new(fluss_client_t *c, fluss_table_t *t, const int32_t *projection,
                            size_t n, fluss_union_scanner_t **out, fluss_error_t *err) {
    *out = NULL;
    fluss_union_scanner_t *s = fl_calloc(1, sizeof(*s));
    if (fluss_log_scanner_new(t, projection, n, &s->log, err)) {
        fl_free(s);
        return err->code;
    }
    s->c = c;
    s->t = t;
    if (projection) {
        s->projection = fl_calloc(n, sizeof(int32_t));
        memcpy(s->projection, projection, n * sizeof(int32_t));
        s->projection_count = n;
    }
    const char *en = fluss_table_property(t, "table.datalake.enabled");
    s->lake_on = en && strcasecmp(en, "true") == 0;
    s->pk = t->pk_count > 0;
    s->snapshot_id = -1;
    *out = s;
    return 0;
}

int fluss_union_scanner_set_filter(fluss_union_scanner_t *s, const char *expr, fluss_error_t *err) {
    if (fluss_log_scanner_set_filter(s->log, expr, err)) return err->code;
    fl_free(s->filter);
    s->filter = expr ? fl_strdup(expr) : NULL;
    return 0;
}

void fluss_union_scanner_set_projection_pushdown(fluss_union_scanner_t *s, bool enabled) {
    fluss_log_scanner_set_projection_pushdown(s->log, enabled);
}

static fl_ubucket_t *fl_union_find(const fluss_union_scanner_t *s, int64_t pid, int32_t bucket) {
    for (size_t i = 0; i < s->count; i++)
        if (s->b[i].partition_id == pid && s->b[i].bucket == bucket) return &s->b[i];
    return NULL;
}

static void fl_union_forget(fluss_union_scanner_t *s, fl_ubucket_t *u) {
    *u = s->b[--s->count];
}

int fluss_union_scanner_subscribe(fluss_union_scanner_t *s, int64_t partition_id, int32_t bucket,
                                  int64_t offset, fluss_error_t *err) {
    fl_ubucket_t *u = fl_union_find(s, partition_id, bucket);
    if (offset != FLUSS_OFFSET_LAKE || !s->lake_on) {
        if (offset == FLUSS_OFFSET_LAKE) offset = FLUSS_OFFSET_EARLIEST;
        if (fluss_log_scanner_subscribe_partition(s->log, partition_id, bucket, offset, err))
            return err->code;
        if (u) fl_union_forget(s, u);
        return 0;
    }
    fluss_log_scanner_unsubscribe_partition(s->log, partition_id, bucket);
    if (!u) {
        s->b = fl_realloc(s->b, (s->count + 1) * sizeof(*s->b));
        u = &s->b[s->count++];
        u->partition_id = partition_id;
        u->bucket = bucket;
    }
    u->state = FL_U_WAIT;
    return 0;
}

void fluss_union_scanner_unsubscribe(fluss_union_scanner_t *s, int64_t partition_id,
                                     int32_t bucket) {
    fl_ubucket_t *u = fl_union_find(s, partition_id, bucket);
    if (u) fl_union_forget(s, u);
    fluss_log_scanner_unsubscribe_partition(s->log, partition_id, bucket);
}

int64_t fluss_union_scanner_position(const fluss_union_scanner_t *s, int64_t partition_id,
                                     int32_t bucket) {
    if (fl_union_find(s, partition_id, bucket)) return FLUSS_OFFSET_LAKE;
    return fluss_log_scanner_partition_position(s->log, partition_id, bucket);
}

bool fluss_union_scanner_in_lake(const fluss_union_scanner_t *s) { return s->count > 0; }

/* Starts a lake phase for the buckets in WAIT: their log offsets from the
 * newest snapshot, and a lake scanner over it when it holds one of them.
 * A table with no snapshot yet has nothing in the lake. */
static int fl_union_lake_start(fluss_union_scanner_t *s, fluss_error_t *err) {
    fluss_lake_snapshot_t *snap = NULL;
    if (fluss_lake_snapshot_get(s->c, s->t->database, s->t->name, &snap, err)) {
        if (err->code != FLUSS_ERR_LAKE_SNAPSHOT_NOT_EXIST) return err->code;
        snap = NULL;
    }
    bool any = false;
    for (size_t i = 0; i < s->count; i++) {
        fl_ubucket_t *u = &s->b[i];
        if (u->state != FL_U_WAIT) continue;
        u->state = FL_U_LAKE;
        u->log_from = FLUSS_OFFSET_EARLIEST; /* also after a failed phase */
        for (size_t k = 0; snap && k < snap->bucket_count; k++) {
            const fluss_lake_bucket_t *lb = &snap->buckets[k];
            if (lb->partition_id == u->partition_id && lb->bucket == u->bucket) {
                if (lb->offset > 0) u->log_from = lb->offset;
                any = any || lb->offset > 0;
                break;
            }
        }
    }
    int rc = 0;
    if (any) {
        rc = fluss_lake_scanner_new(s->t, snap, s->projection, s->projection_count, &s->lake, err);
        if (!rc && s->filter) rc = fluss_lake_scanner_set_filter(s->lake, s->filter, err);
        if (!rc) {
            s->snapshot_id = snap->snapshot_id;
            s->lake_files = fluss_lake_scanner_file_count(s->lake);
        } else {
            fluss_lake_scanner_destroy(s->lake);
            s->lake = NULL;
            for (size_t i = 0; i < s->count; i++)
                if (s->b[i].state == FL_U_LAKE) s->b[i].state = FL_U_WAIT;
        }
    }
    fluss_lake_snapshot_free(snap);
    return rc;
}

/* Ends a lake phase: its buckets go to the log scanner at their offsets. */
static int fl_union_lake_end(fluss_union_scanner_t *s, fluss_error_t *err) {
    fluss_lake_scanner_destroy(s->lake);
    s->lake = NULL;
    for (size_t i = 0; i < s->count;) {
        fl_ubucket_t *u = &s->b[i];
        if (u->state != FL_U_LAKE) {
            i++;
            continue;
        }
        if (fluss_log_scanner_subscribe_partition(s->log, u->partition_id, u->bucket, u->log_from,
                                                  err))
            return err->code;
        fl_union_forget(s, u);
    }
    return 0;
}

/* A lake batch of a primary-key table: each row an insert. */
static void fl_union_mark_inserts(fluss_record_batch_t *b) {
    size_t n = b->skip + b->rows;
    fl_free(b->change_types);
    b->change_types = fl_malloc(n ? n : 1);
    memset(b->change_types, FLUSS_CHANGE_INSERT, n);
}

int fluss_union_scanner_poll(fluss_union_scanner_t *s, int timeout_ms, fluss_record_batch_t **out,
                             fluss_error_t *err) {
    *out = NULL;
    if (!s->lake && s->count) {
        if (fl_union_lake_start(s, err)) return err->code;
        if (!s->lake) return fl_union_lake_end(s, err);
    }
    while (s->lake) {
        fluss_record_batch_t *b = NULL;
        if (fluss_lake_scanner_next(s->lake, &b, err)) return err->code;
        if (!b) return fl_union_lake_end(s, err);
        const fl_ubucket_t *u = fl_union_find(s, b->partition_id, b->bucket);
        if (!u || u->state != FL_U_LAKE || b->rows == 0) {
            fluss_record_batch_free(b);
            continue;
        }
        if (s->pk) fl_union_mark_inserts(b);
        s->lake_rows += (int64_t)b->rows;
        *out = b;
        return 0;
    }
    return fluss_log_scanner_poll(s->log, timeout_ms, out, err);
}

int64_t fluss_union_scanner_lake_snapshot(const fluss_union_scanner_t *s) { return s->snapshot_id; }

size_t fluss_union_scanner_lake_files(const fluss_union_scanner_t *s) { return s->lake_files; }

int64_t fluss_union_scanner_lake_rows(const fluss_union_scanner_t *s) { return s->lake_rows; }

const fluss_log_scanner_t *fluss_union_scanner_log(const fluss_union_scanner_t *s) {
    return s->log;
}

void fluss_union_scanner_destroy(fluss_union_scanner_t *s) {
    if (!s) return;
    fluss_lake_scanner_destroy(s->lake);
    fluss_log_scanner_destroy(s->log);
    fl_free(s->projection);
    fl_free(s->filter);
    fl_free(s->b);
    fl_free(s);
}
