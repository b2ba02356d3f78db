/*
 * lake_iceberg_expire.c — which snapshots of an Iceberg table expire
 * (lake_iceberg_table.h, "snapshot expiry"): the retention Iceberg's Java
 * ExpireSnapshots (RemoveSnapshots) applies by default, from the table's
 * own properties. Pure decisions over a metadata value: the edit that
 * removes them is fl_ice_meta_without_snapshots, the files that go with
 * them are the server's (server_lake_expire.c). Thread rule: none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"
#include "lake_iceberg_meta_int.h"

/* A property as a whole decimal number, or false. */
static bool prop_long(const fl_ice_table_meta_t *m, const char *key, long long *out) {
    const char *v = fl_ice_prop_get(m->properties, m->n_properties, key);
    if (!v || !*v) return false;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || *end) return false;
    *out = n;
    return true;
}

void fl_ice_expire_policy_of(const fl_ice_table_meta_t *m, fl_ice_expire_policy_t *p) {
    long long n;
    p->max_age_ms = FL_ICE_MAX_SNAPSHOT_AGE_DEFAULT_MS;
    if (prop_long(m, FL_ICE_MAX_SNAPSHOT_AGE_KEY, &n) && n >= 0) p->max_age_ms = n;
    p->min_keep = FL_ICE_MIN_SNAPSHOTS_DEFAULT;
    /* 0 or less would let the current snapshot go: GET_LAKE_SNAPSHOT and
     * every reader of the table need it */
    if (prop_long(m, FL_ICE_MIN_SNAPSHOTS_KEY, &n))
        p->min_keep = n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int32_t)n;
    /* Java's Boolean.parseBoolean: anything but "true" is false */
    const char *gc = fl_ice_prop_get(m->properties, m->n_properties, FL_ICE_GC_ENABLED_KEY);
    p->gc_enabled = !gc || strcasecmp(gc, "true") == 0;
}

/* A snapshot's index by id, for the ancestor walk: n log n however long
 * the table's history (a table may expire for the first time with a
 * year of rounds behind it). */
typedef struct by_id {
    int64_t id;
    size_t index;
} by_id_t;

static int by_id_cmp(const void *a, const void *b) {
    int64_t x = ((const by_id_t *)a)->id, y = ((const by_id_t *)b)->id;
    return (x > y) - (x < y);
}

static const by_id_t *find(const by_id_t *ix, size_t n, int64_t id) {
    by_id_t key = {id, 0};
    return n ? bsearch(&key, ix, n, sizeof(*ix), by_id_cmp) : NULL;
}

/* keep[i] for the current snapshot's ancestors under p; ancestor[i] for
 * every ancestor, kept or not. The walk is bounded by the snapshot count
 * (a parent cycle in a damaged file cannot loop). */
static void walk_main(const fl_ice_table_meta_t *m, const by_id_t *ix,
                      const fl_ice_expire_policy_t *p, int64_t cutoff_ms, bool *keep,
                      bool *ancestor) {
    size_t kept = 0;
    bool retaining = true;
    const by_id_t *at = find(ix, m->n_snapshots, m->current_snapshot_id);
    for (size_t steps = 0; at && steps < m->n_snapshots && !ancestor[at->index]; steps++) {
        const fl_ice_snapshot_t *s = &m->snapshots[at->index];
        ancestor[at->index] = true;
        if (retaining && (kept < (size_t)p->min_keep || s->timestamp_ms >= cutoff_ms)) {
            keep[at->index] = true;
            kept++;
        } else {
            retaining = false; /* Java stops retaining at the first old one */
        }
        at = s->parent_snapshot_id == FL_ICE_NONE ? NULL
                                                  : find(ix, m->n_snapshots, s->parent_snapshot_id);
    }
}

size_t fl_ice_meta_expired(const fl_ice_table_meta_t *m, const fl_ice_expire_policy_t *p,
                           int64_t now_ms, int64_t *ids) {
    if (!p->gc_enabled || m->current_snapshot_id == FL_ICE_NONE || m->n_snapshots == 0) return 0;
    /* now_ms - max_age_ms without overflow (max_age_ms >= 0) */
    int64_t cutoff_ms = now_ms < INT64_MIN + p->max_age_ms ? INT64_MIN : now_ms - p->max_age_ms;
    by_id_t *ix = fl_malloc(m->n_snapshots * sizeof(*ix));
    bool *keep = fl_calloc(m->n_snapshots, sizeof(*keep));
    bool *ancestor = fl_calloc(m->n_snapshots, sizeof(*ancestor));
    for (size_t i = 0; i < m->n_snapshots; i++) ix[i] = (by_id_t){m->snapshots[i].snapshot_id, i};
    qsort(ix, m->n_snapshots, sizeof(*ix), by_id_cmp);
    walk_main(m, ix, p, cutoff_ms, keep, ancestor);
    size_t n = 0;
    for (size_t i = 0; i < m->n_snapshots; i++) {
        const fl_ice_snapshot_t *s = &m->snapshots[i];
        /* no ancestor of main (an abandoned branch of history): kept
         * while young, as Java's unreferencedSnapshotsToRetain */
        bool young_orphan = !ancestor[i] && s->timestamp_ms >= cutoff_ms;
        if (!keep[i] && !young_orphan && s->snapshot_id != m->current_snapshot_id)
            ids[n++] = s->snapshot_id;
    }
    fl_free(ancestor);
    fl_free(keep);
    fl_free(ix);
    return n;
}
