/*
 * coordinator_assignment.h — which tablet servers hold each bucket's
 * replicas when a table or a partition is created (Fluss's
 * TableAssignmentUtils#generateAssignment); the first replica leads.
 *
 *  - no server has a rack: round robin over the live servers in their
 *    list order, bucket b's replicas at positions start+b, start+b+1, ...
 *    (our long-standing order; Fluss's rack-unaware order also shifts the
 *    followers once per lap of the list);
 *  - every server has a rack: Fluss's rack-aware order. The servers are
 *    laid out rack after rack (racks by name, servers by id within a
 *    rack: r0's first, r1's first, ..., r0's second, ...); bucket b's
 *    leader is position start+b of that list, and each follower is the
 *    next candidate, at a shift that grows with every lap over the list,
 *    that is on a rack without a replica yet (while one is left) and on
 *    a server without one (while one is left). With at least as many
 *    replicas as racks every rack gets one; with fewer, no rack gets two;
 *  - some servers have a rack and some not: INVALID_SERVER_RACK_INFO (52),
 *    as in Fluss 0.9.1 (later Fluss falls back to round robin).
 *
 * Deliberate difference: Fluss draws the start position and the follower
 * shift at random per table; ours are derived from a caller's seed (the
 * table or partition id), so a test can predict them and a replay of the
 * same DDL gives the same layout.
 *
 * Pure: no I/O, no clock. Thread rule: none (the caller's data).
 */
#ifndef FL_COORDINATOR_ASSIGNMENT_H
#define FL_COORDINATOR_ASSIGNMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

/* tablet-server.rack as the coordinator keeps it; a longer name from a
 * registration is cut here (the rack names of one cluster are short) */
#define FL_ASSIGNMENT_RACK_BYTES 128
/* servers one assignment spreads over (the catalog's live servers) */
#define FL_ASSIGNMENT_SERVERS_MAX 64

typedef struct fl_assignment_rack {
    bool set; /* false: the server registered no rack */
    char name[FL_ASSIGNMENT_RACK_BYTES];
} fl_assignment_rack_t;

/* Sets r from a registration's rack (NULL: none). */
void fl_assignment_rack_set(fl_assignment_rack_t *r, const char *rack);

/* The checks of an assignment, Fluss's order: the replication factor
 * within 1..count (INVALID_REPLICATION_FACTOR, Fluss's message), then
 * every server with a rack or none (INVALID_SERVER_RACK_INFO). */
int fl_assignment_check(const fl_assignment_rack_t *racks, size_t count, long replication_factor,
                        fl_error_t *err);

/* Fills replicas[b * replication_factor + r] for bucket_count buckets
 * over the servers ids[i] with racks[i] (count of them, at most
 * FL_ASSIGNMENT_SERVERS_MAX); replica 0 of each bucket leads. seed picks
 * the start position and the first follower shift. Runs
 * fl_assignment_check first and returns its error. */
int fl_assignment_generate(const int32_t *ids, const fl_assignment_rack_t *racks, size_t count,
                           int32_t replication_factor, int32_t bucket_count, uint64_t seed,
                           int32_t *replicas, fl_error_t *err);

/* The rack-aware core with the start and the shift given (Fluss's test
 * entry point), for tests against Fluss's documented example; every
 * server must have a rack and 1 <= replication_factor <= count. */
void fl_assignment_rack_aware(const int32_t *ids, const fl_assignment_rack_t *racks, size_t count,
                              int32_t replication_factor, int32_t bucket_count, size_t start,
                              size_t shift, int32_t *replicas);

#endif
