/*
 * server_auto_partition.c — the auto-partition scheduler of the
 * coordinator (server_auto_partition.h): a thread that sleeps on a
 * monotonic condition variable between passes, the clock (system or test
 * file) and the process's default zone. Thread rule: see the header.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "server_auto_partition.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_log.h"
#include "common_time.h"
#include "coordinator_auto_partition.h"
#include "coordinator_lake.h"
#include "server_coordinator.h"
#include "server_lake_tier.h"

#define FL_AUTO_PARTITION_CLOCK_FILE_MAX 64 /* bytes read from the test clock file */

/* A lake table's expired partitions wait for a tiering round (ours): its
 * state from the ask to the pass that drops them. */
typedef enum { FL_AP_GATE_ASKED, FL_AP_GATE_TIERED, FL_AP_GATE_FAILED } fl_ap_gate_state_t;

typedef struct fl_ap_gate {
    struct fl_auto_partitioner *ap;
    int64_t table_id;
    fl_ap_gate_state_t state; /* (gate_mu) */
    struct fl_ap_gate *next;  /* (gate_mu) */
} fl_ap_gate_t;

struct fl_auto_partitioner {
    fl_coordinator_server_t *cs;
    /* a leaf lock (taken under the catalog lock by a pass, alone by the
     * tiering thread's callbacks): the gates */
    pthread_mutex_t gate_mu;
    fl_ap_gate_t *gates;
    bool wake; /* (mu) a round a gate waited for ended: pass now */
    int64_t interval_ms;
    char *clock_file; /* NULL: the system clock */
    char *zoneinfo_dir;
    fl_tz_t *default_tz;
    fl_auto_partition_env_t env;
    pthread_mutex_t mu; /* guards stopping; never held with the catalog lock */
    pthread_cond_t cv;
    bool stopping, running;
    pthread_t thread;
};

/* ---- clock ---- */

int fl_auto_partition_clock_parse(const char *text, size_t len, int64_t *now_ms, fl_error_t *err) {
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    bool neg = i < len && text[i] == '-';
    if (neg) i++;
    size_t start = i;
    uint64_t v = 0;
    while (i < len && text[i] >= '0' && text[i] <= '9' && i - start < 19)
        v = v * 10 + (uint64_t)(text[i++] - '0');
    size_t digits = i - start;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    /* 19 digits reach 10^19 - 1, past INT64_MAX: refused, not wrapped */
    if (digits == 0 || i != len || v > (uint64_t)INT64_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "the auto-partition test clock holds no epoch milliseconds: '%.*s'",
                          (int)(len < 64 ? len : 64), text);
    *now_ms = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

static int fl_ap_now(const fl_auto_partitioner_t *ap, int64_t *now_ms, fl_error_t *err) {
    if (!ap->clock_file) {
        *now_ms = fl_time_wall_ms();
        return 0;
    }
    fl_buf_t b;
    fl_buf_init(&b);
    int rc = fl_fs_read_all(ap->clock_file, FL_AUTO_PARTITION_CLOCK_FILE_MAX, &b, NULL, err);
    if (!rc) rc = fl_auto_partition_clock_parse((const char *)b.data, b.len, now_ms, err);
    fl_buf_free(&b);
    return rc;
}

/* ---- the process's zone (what ZoneId.systemDefault gives a JVM) ---- */

static fl_tz_t *fl_ap_system_zone(const char *dir, const char *configured) {
    bool known = true;
    const char *id = configured && *configured ? configured : getenv("TZ");
    if (id && *id) {
        if (*id == ':') id++;
        fl_tz_t *tz = fl_partition_time_zone(dir, id, &known);
        if (!known) FL_WARN("auto partitioning: default time zone '%s' is unknown, using GMT", id);
        return tz;
    }
    char link[4096];
    ssize_t n = readlink("/etc/localtime", link, sizeof(link) - 1);
    if (n > 0) {
        link[n] = '\0';
        const char *p = strstr(link, "zoneinfo/");
        fl_tz_t *tz = NULL;
        fl_error_t err;
        if (p && fl_tz_load(dir, p + 9, &tz, &err) == 0) return tz;
    }
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    fl_tz_t *tz = NULL;
    if (fl_fs_read_all("/etc/localtime", FL_TZ_FILE_BYTES_MAX, &b, NULL, &err) == 0)
        (void)fl_tz_parse_tzif(b.data, b.len, "localtime", &tz, &err);
    fl_buf_free(&b);
    return tz ? tz : fl_tz_fixed(0, "UTC");
}

/* ---- what a pass tells the tablet servers ---- */

static void fl_ap_created(void *arg, int64_t table_id) {
    fl_auto_partitioner_t *ap = arg;
    fl_coordinator_server_table_changed(ap->cs, table_id);
}

static void fl_ap_dropped(void *arg, const char *db, const char *table, int64_t table_id,
                          const char *partition_name, int64_t partition_id) {
    fl_auto_partitioner_t *ap = arg;
    fl_coordinator_server_partition_dropped(ap->cs, db, table, table_id, partition_name,
                                            partition_id);
}

/* ---- a lake table's partitions are tiered before they expire ---- */

/* The tiering round a gate asked for ended: on the tiering thread with no
 * lock held, or at once on the pass's own thread (catalog lock held) when
 * the service does not run (FLUSS_ERR__STATE). The tiering service is
 * stopped before the partitioner, so no callback outlives it. */
static void fl_ap_gate_tiered(void *arg, int rc, const fl_error_t *err, int64_t snapshot_id,
                              int64_t added) {
    (void)snapshot_id;
    (void)added;
    fl_ap_gate_t *g = arg;
    fl_auto_partitioner_t *ap = g->ap;
    /* INVALID_TABLE: the lake went off meanwhile; nothing left to tier */
    bool ok = rc == 0 || rc == FLUSS_ERR_INVALID_TABLE_EXCEPTION;
    if (!ok)
        FL_WARN("auto partitioning: table %lld keeps its expired partitions: tiering them "
                "first failed: %s",
                (long long)g->table_id, err->msg);
    pthread_mutex_lock(&ap->gate_mu);
    g->state = ok ? FL_AP_GATE_TIERED : FL_AP_GATE_FAILED;
    pthread_mutex_unlock(&ap->gate_mu);
    if (rc == FLUSS_ERR__STATE) return; /* maybe under the catalog lock: no wake */
    pthread_mutex_lock(&ap->mu);
    ap->wake = true;
    pthread_cond_signal(&ap->cv);
    pthread_mutex_unlock(&ap->mu);
}

/* hooks.may_drop (catalog lock held): a table without a lake drops at
 * once; a lake table's expired partitions go in the first pass after a
 * tiering round asked for them has ended, so the lake has their rows up
 * to the high watermark. A failed round asks again next pass. */
static bool fl_ap_may_drop(void *arg, int64_t table_id) {
    fl_auto_partitioner_t *ap = arg;
    fl_coordinator_server_t *cs = ap->cs;
    const fl_ms_table_t *t = cs->catalog.ms->ops->table_by_id(cs->catalog.ms, table_id);
    if (!t || !cs->lake_tierer || !fl_lake_config_on(&cs->cfg.defaults.lake) ||
        cs->cfg.defaults.lake.external_tiering || !fl_lake_table_json_enabled(t->table_json))
        return true;
    pthread_mutex_lock(&ap->gate_mu);
    fl_ap_gate_t **pp = &ap->gates;
    while (*pp && (*pp)->table_id != table_id) pp = &(*pp)->next;
    fl_ap_gate_t *g = *pp;
    if (g && g->state != FL_AP_GATE_ASKED) *pp = g->next; /* this pass settles it */
    pthread_mutex_unlock(&ap->gate_mu);
    if (g && g->state == FL_AP_GATE_ASKED) return false;
    if (g) {
        bool tiered = g->state == FL_AP_GATE_TIERED;
        fl_free(g);
        if (tiered) return true;
    }
    g = fl_calloc(1, sizeof(*g));
    *g = (fl_ap_gate_t){ap, table_id, FL_AP_GATE_ASKED, NULL};
    pthread_mutex_lock(&ap->gate_mu);
    g->next = ap->gates;
    ap->gates = g;
    pthread_mutex_unlock(&ap->gate_mu);
    FL_INFO("auto partitioning: table [%s.%s] has expired partitions; tiering them into the "
            "lake before they are dropped",
            t->database, t->name);
    fl_lake_tierer_ask(cs->lake_tierer, table_id, fl_ap_gate_tiered, g);
    return false;
}

/* ---- lifecycle and the thread ---- */

fl_auto_partitioner_t *fl_auto_partitioner_new(fl_coordinator_server_t *cs,
                                               const fl_auto_partitioner_config_t *cfg) {
    fl_auto_partitioner_t *ap = fl_calloc(1, sizeof(*ap));
    ap->cs = cs;
    ap->interval_ms = cfg->interval_ms > 0 ? cfg->interval_ms : FL_AUTO_PARTITION_INTERVAL_MS_DEFAULT;
    if (cfg->clock_file && *cfg->clock_file) {
        ap->clock_file = fl_strdup(cfg->clock_file);
        FL_WARN("auto partitioning follows the test clock in %s, not the system clock "
                "(auto-partition.test.clock-file)", ap->clock_file);
    }
    const char *dir = cfg->zoneinfo_dir && *cfg->zoneinfo_dir ? cfg->zoneinfo_dir : getenv("TZDIR");
    ap->zoneinfo_dir = fl_strdup(dir && *dir ? dir : FL_AUTO_PARTITION_ZONEINFO_DEFAULT);
    ap->default_tz = fl_ap_system_zone(ap->zoneinfo_dir, cfg->default_zone);
    uint64_t seed = (uint64_t)fl_time_mono_us() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)ap;
    ap->env = (fl_auto_partition_env_t){
        &cs->catalog, ap->zoneinfo_dir, ap->default_tz, seed,
        {.created = fl_ap_created, .dropped = fl_ap_dropped, .may_drop = fl_ap_may_drop, .arg = ap}};
    pthread_mutex_init(&ap->mu, NULL);
    pthread_mutex_init(&ap->gate_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ap->cv, &ca);
    pthread_condattr_destroy(&ca);
    return ap;
}

static void fl_ap_pass(fl_auto_partitioner_t *ap) {
    int64_t now;
    fl_error_t err;
    if (fl_ap_now(ap, &now, &err)) {
        FL_WARN("auto partitioning: pass skipped: %s", err.msg);
        return;
    }
    fl_auto_partition_stats_t st = {0};
    pthread_mutex_lock(&ap->cs->lock);
    fl_auto_partition_all(&ap->env, now, &st);
    pthread_mutex_unlock(&ap->cs->lock);
    fl_coordinator_server_push_flush(ap->cs); /* the tablet servers are told */
    FL_DEBUG("auto partitioning: pass at %lld: %zu created, %zu dropped, %zu refused",
             (long long)now, st.created, st.dropped, st.refused);
}

static void *fl_ap_main(void *arg) {
    fl_auto_partitioner_t *ap = arg;
    pthread_setname_np(pthread_self(), "cs-autopart");
    int64_t next_ms = fl_time_mono_ms(); /* the first pass at once */
    pthread_mutex_lock(&ap->mu);
    while (!ap->stopping) {
        if (ap->wake) next_ms = fl_time_mono_ms(), ap->wake = false;
        if (fl_time_mono_ms() < next_ms) {
            struct timespec ts = {(time_t)(next_ms / 1000), (long)(next_ms % 1000) * 1000000};
            pthread_cond_timedwait(&ap->cv, &ap->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&ap->mu);
        fl_ap_pass(ap);
        next_ms = fl_time_mono_ms() + ap->interval_ms; /* a fixed delay between passes */
        pthread_mutex_lock(&ap->mu);
    }
    pthread_mutex_unlock(&ap->mu);
    return NULL;
}

void fl_auto_partitioner_start(fl_auto_partitioner_t *ap) {
    if (ap->running) return;
    ap->stopping = false;
    if (pthread_create(&ap->thread, NULL, fl_ap_main, ap) != 0) {
        FL_ERROR("auto partitioning: cannot start its thread; no periodic passes");
        return;
    }
    ap->running = true;
}

void fl_auto_partitioner_stop(fl_auto_partitioner_t *ap) {
    if (!ap || !ap->running) return;
    pthread_mutex_lock(&ap->mu);
    ap->stopping = true;
    pthread_cond_signal(&ap->cv);
    pthread_mutex_unlock(&ap->mu);
    pthread_join(ap->thread, NULL);
    ap->running = false;
}

void fl_auto_partitioner_destroy(fl_auto_partitioner_t *ap) {
    if (!ap) return;
    fl_auto_partitioner_stop(ap);
    pthread_cond_destroy(&ap->cv);
    pthread_mutex_destroy(&ap->mu);
    /* the tiering service stopped first: every gate's round was answered */
    while (ap->gates) {
        fl_ap_gate_t *g = ap->gates;
        ap->gates = g->next;
        fl_free(g);
    }
    pthread_mutex_destroy(&ap->gate_mu);
    fl_tz_free(ap->default_tz);
    fl_free(ap->clock_file);
    fl_free(ap->zoneinfo_dir);
    fl_free(ap);
}

void fl_auto_partitioner_table_created(fl_auto_partitioner_t *ap, int64_t table_id) {
    int64_t now;
    fl_error_t err;
    if (fl_ap_now(ap, &now, &err)) {
        FL_WARN("auto partitioning: no partitions for the new table yet: %s", err.msg);
        return;
    }
    fl_auto_partition_stats_t st = {0};
    fl_auto_partition_table(&ap->env, table_id, now, true, &st);
}
