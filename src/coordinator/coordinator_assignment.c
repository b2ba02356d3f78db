/*
 * coordinator_assignment.c — bucket → replica assignment (see
 * coordinator_assignment.h): round robin without racks, Fluss's
 * rack-alternated order with them.
 */
#include "coordinator_assignment.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

void fl_assignment_rack_set(fl_assignment_rack_t *r, const char *rack) {
    memset(r, 0, sizeof(*r));
    r->set = rack != NULL;
    if (rack) snprintf(r->name, sizeof(r->name), "%s", rack);
}

int fl_assignment_check(const fl_assignment_rack_t *racks, size_t count, long replication_factor,
                        fl_error_t *err) {
    if (replication_factor > (long)count)
        return fl_err_set(err, FLUSS_ERR_INVALID_REPLICATION_FACTOR,
                          "Replication factor: %ld larger than available tablet servers: %zu.",
                          replication_factor, count);
    size_t with_rack = 0;
    for (size_t i = 0; i < count; i++) with_rack += racks[i].set;
    if (with_rack != 0 && with_rack != count)
        return fl_err_set(err, FLUSS_ERR_INVALID_SERVER_RACK_INFO_EXCEPTION,
                          "Not all tabletServers have rack information for replica rack aware "
                          "assignment.");
    return 0;
}

/* (rack, id) order: the racks by name as Fluss sorts them, the servers of
 * one rack by id */
static bool fl_assignment_before(const int32_t *ids, const fl_assignment_rack_t *racks, size_t a,
                                 size_t b) {
    int c = strcmp(racks[a].name, racks[b].name);
    return c < 0 || (c == 0 && ids[a] < ids[b]);
}

/* The rack-alternated list: alt[] holds indexes into ids/racks, rack_of[]
 * the rank of each entry's rack; returns the number of racks. */
static size_t fl_assignment_alternate(const int32_t *ids, const fl_assignment_rack_t *racks,
                                      size_t count, size_t *alt, size_t *rack_of) {
    size_t sorted[FL_ASSIGNMENT_SERVERS_MAX];
    for (size_t i = 0; i < count; i++) { /* insertion sort: a few dozen servers */
        size_t j = i;
        for (; j > 0 && fl_assignment_before(ids, racks, i, sorted[j - 1]); j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = i;
    }
    size_t first[FL_ASSIGNMENT_SERVERS_MAX], len[FL_ASSIGNMENT_SERVERS_MAX], rack_count = 0;
    for (size_t i = 0; i < count; i++) {
        if (i == 0 || strcmp(racks[sorted[i]].name, racks[sorted[i - 1]].name) != 0) {
            first[rack_count] = i;
            len[rack_count++] = 0;
        }
        len[rack_count - 1]++;
    }
    /* one server of each rack in turn, a rack that ran out skipped */
    size_t n = 0;
    for (size_t round = 0; n < count; round++)
        for (size_t g = 0; g < rack_count; g++)
            if (round < len[g]) {
                rack_of[n] = g;
                alt[n++] = sorted[first[g] + round];
            }
    return rack_count;
}

/* Fluss's follower position: never the leader's own, walking the others
 * as k grows, from an offset set by the shift */
static size_t fl_assignment_follower_at(size_t leader_pos, size_t shift, size_t k, size_t count) {
    return (leader_pos + 1 + (shift + k) % (count - 1)) % count;
}

void fl_assignment_rack_aware(const int32_t *ids, const fl_assignment_rack_t *racks, size_t count,
                              int32_t replication_factor, int32_t bucket_count, size_t start,
                              size_t shift, int32_t *replicas) {
    assert(count >= 1 && count <= FL_ASSIGNMENT_SERVERS_MAX);
    assert(replication_factor >= 1 && (size_t)replication_factor <= count);
    size_t alt[FL_ASSIGNMENT_SERVERS_MAX], rack_of[FL_ASSIGNMENT_SERVERS_MAX];
    size_t rack_count = fl_assignment_alternate(ids, racks, count, alt, rack_of);
    for (int32_t b = 0; b < bucket_count; b++) {
        /* every lap over the list moves the followers on, so the same
         * leader does not get the same followers again */
        if (b > 0 && (size_t)b % count == 0) shift++;
        size_t lead = ((size_t)b + start) % count;
        int32_t *out = &replicas[(size_t)b * (size_t)replication_factor];
        bool rack_used[FL_ASSIGNMENT_SERVERS_MAX] = {false};
        bool pos_used[FL_ASSIGNMENT_SERVERS_MAX] = {false};
        size_t racks_used = 1, servers_used = 1, k = 0;
        rack_used[rack_of[lead]] = pos_used[lead] = true;
        out[0] = ids[alt[lead]];
        for (int32_t r = 1; r < replication_factor; r++) {
            /* a candidate on a rack that has a replica waits while a rack
             * has none; one that holds a replica waits while a server has
             * none. Within count - 1 candidates one fits: see the header. */
            for (size_t tried = 0;; tried++, k++) {
                assert(tried < count);
                size_t p = fl_assignment_follower_at(lead, shift * rack_count, k, count);
                bool rack_ok = !rack_used[rack_of[p]] || racks_used == rack_count;
                bool server_ok = !pos_used[p] || servers_used == count;
                if (!rack_ok || !server_ok) continue;
                racks_used += !rack_used[rack_of[p]];
                servers_used += !pos_used[p];
                rack_used[rack_of[p]] = pos_used[p] = true;
                out[r] = ids[alt[p]];
                k++;
                break;
            }
        }
    }
}

int fl_assignment_generate(const int32_t *ids, const fl_assignment_rack_t *racks, size_t count,
                           int32_t replication_factor, int32_t bucket_count, uint64_t seed,
                           int32_t *replicas, fl_error_t *err) {
    int rc = fl_assignment_check(racks, count, replication_factor, err);
    if (rc) return rc;
    assert(count >= 1 && count <= FL_ASSIGNMENT_SERVERS_MAX && replication_factor >= 1);
    if (racks[0].set) {
        /* Fluss draws both at random; ours come from the seed (the table
         * or partition id) so that a layout can be predicted */
        fl_assignment_rack_aware(ids, racks, count, replication_factor, bucket_count,
                                 (size_t)(seed % count), (size_t)(seed / count % count), replicas);
        return 0;
    }
    for (int32_t b = 0; b < bucket_count; b++)
        for (int32_t r = 0; r < replication_factor; r++)
            replicas[(size_t)b * (size_t)replication_factor + (size_t)r] =
                ids[(size_t)((seed + (uint64_t)b + (uint64_t)r) % count)];
    return 0;
}
