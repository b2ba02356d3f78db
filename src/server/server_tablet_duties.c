/*
 * server_tablet_duties.c — a tablet server's periodic duties
 * (server_tablet_duties.h): one timer per duty on the first loop, its job
 * on the worker pool (or the loop), at most one queued at a time where a
 * round must not pile up behind itself.
 */
#include "server_tablet_duties.h"

#include <stdatomic.h>
#include <stdint.h>

#include "common_alloc.h"
#include "common_time.h"
#include "server_tablet.h"
#include "server_tiering.h"

typedef enum fl_duty_id {
    FL_DUTY_RETENTION,
    FL_DUTY_WRITER_EXPIRY,
    FL_DUTY_ISR,
    FL_DUTY_FLUSH,
    FL_DUTY_SNAPSHOT,
    FL_DUTY_DISK,
    FL_DUTY_TIERING,
    FL_DUTY_COUNT
} fl_duty_id_t;

/* Where a duty's job runs when its timer fires. */
typedef enum fl_duty_how {
    FL_DUTY_ON_LOOP,       /* on the loop, in the timer callback (it must not block) */
    FL_DUTY_EACH_TICK,     /* a worker job every tick */
    FL_DUTY_ONE_AT_A_TIME, /* a worker job, unless the last one is still queued or running */
} fl_duty_how_t;

typedef struct fl_duty_kind {
    void (*run)(fl_tablet_server_t *ts);
    fl_duty_how_t how;
} fl_duty_kind_t;

typedef struct fl_duty {
    uv_timer_t timer;           /* on loop 0; data: this */
    atomic_bool queued;         /* FL_DUTY_ONE_AT_A_TIME: a job is queued or running */
    fl_tablet_server_t *ts;
    const fl_duty_kind_t *kind;
} fl_duty_t;

struct fl_tablet_duties {
    fl_tablet_server_t *ts;
    fl_duty_t duty[FL_DUTY_COUNT];
};

static void fl_duty_retention(fl_tablet_server_t *ts) {
    fl_replica_manager_retention(&ts->replicas, fl_time_wall_ms());
}

static void fl_duty_writer_expiry(fl_tablet_server_t *ts) {
    fl_replica_manager_expire_writers(&ts->replicas, fl_time_wall_ms(),
                                      ts->cfg.writer_expiration_ms);
}

/* A leader's followers that fell behind leave its ISR (every bucket this
 * server leads with followers). */
static void fl_duty_isr(fl_tablet_server_t *ts) {
    fl_tablet_isr_round(ts);
}

static void fl_duty_flush(fl_tablet_server_t *ts) {
    fl_replica_manager_flush_dirty(&ts->replicas);
}

static void fl_duty_snapshot(fl_tablet_server_t *ts) {
    fl_tablet_server_snapshot_now(ts);
}

/* statvfs runs on a worker (it may block on a sick file system); the data
 * path only reads the flag it leaves */
static void fl_duty_disk(fl_tablet_server_t *ts) {
    fl_disk_guard_sample(&ts->disk);
}

static void fl_duty_tiering(fl_tablet_server_t *ts) {
    fl_tablet_server_tier_now(ts);
}

static const fl_duty_kind_t fl_duty_kinds[FL_DUTY_COUNT] = {
    [FL_DUTY_RETENTION] = {fl_duty_retention, FL_DUTY_EACH_TICK},
    [FL_DUTY_WRITER_EXPIRY] = {fl_duty_writer_expiry, FL_DUTY_EACH_TICK},
    [FL_DUTY_ISR] = {fl_duty_isr, FL_DUTY_ONE_AT_A_TIME},
    [FL_DUTY_FLUSH] = {fl_duty_flush, FL_DUTY_ON_LOOP},
    [FL_DUTY_SNAPSHOT] = {fl_duty_snapshot, FL_DUTY_ONE_AT_A_TIME},
    [FL_DUTY_DISK] = {fl_duty_disk, FL_DUTY_ONE_AT_A_TIME},
    [FL_DUTY_TIERING] = {fl_duty_tiering, FL_DUTY_ONE_AT_A_TIME},
};

/* How often a duty runs, in ms; 0: not at all (its timer is never
 * started). The configuration's defaults were applied at _new. */
static uint64_t fl_duty_every_ms(const fl_tablet_server_t *ts, fl_duty_id_t id) {
    switch (id) {
    case FL_DUTY_RETENTION:
        return (uint64_t)ts->cfg.retention_check_ms;
    case FL_DUTY_WRITER_EXPIRY:
        return (uint64_t)ts->cfg.writer_expiration_check_ms;
    case FL_DUTY_ISR: {
        /* a follower leaves within max-lag plus this (and the
         * coordinator's answer): a quarter of max-lag, at most 250 ms (a
         * round is cheap) */
        uint64_t ic = (uint64_t)(ts->cfg.replica_max_lag_ms / 4 > 0 ? ts->cfg.replica_max_lag_ms / 4
                                                                     : 1);
        return ic > 250 ? 250 : ic;
    }
    case FL_DUTY_FLUSH:
        return !ts->cfg.durability.sync && ts->cfg.durability.flush_interval_ms > 0
                   ? (uint64_t)ts->cfg.durability.flush_interval_ms
                   : 0;
    case FL_DUTY_SNAPSHOT:
        return (uint64_t)ts->cfg.kv_snapshot_interval_ms;
    case FL_DUTY_DISK:
        return ts->disk.limit_ratio < 1.0 ? (uint64_t)ts->cfg.disk_check_interval_ms : 0;
    case FL_DUTY_TIERING:
        return ts->remote_storage ? (uint64_t)ts->cfg.remote_log_interval_ms : 0;
    case FL_DUTY_COUNT:
        break;
    }
    return 0;
}

static void fl_duty_job(void *arg) {
    fl_duty_t *d = arg;
    d->kind->run(d->ts);
    if (d->kind->how == FL_DUTY_ONE_AT_A_TIME) atomic_store(&d->queued, false);
}

static void fl_on_duty_timer(uv_timer_t *t) {
    fl_duty_t *d = t->data;
    switch (d->kind->how) {
    case FL_DUTY_ON_LOOP:
        d->kind->run(d->ts);
        break;
    case FL_DUTY_EACH_TICK:
        fl_workq_submit(d->ts->workers, fl_duty_job, d);
        break;
    case FL_DUTY_ONE_AT_A_TIME:
        if (!atomic_exchange(&d->queued, true)) fl_workq_submit(d->ts->workers, fl_duty_job, d);
        break;
    }
}

fl_tablet_duties_t *fl_tablet_duties_new(fl_tablet_server_t *ts) {
    fl_tablet_duties_t *ds = fl_calloc(1, sizeof(*ds));
    ds->ts = ts;
    for (size_t i = 0; i < FL_DUTY_COUNT; i++) {
        ds->duty[i].ts = ts;
        ds->duty[i].kind = &fl_duty_kinds[i];
        atomic_init(&ds->duty[i].queued, false);
    }
    return ds;
}

void fl_tablet_duties_start(void *duties) {
    fl_tablet_duties_t *ds = duties;
    uv_loop_t *uv = fl_rpc_loop_uv(ds->ts->loops[0]);
    for (size_t i = 0; i < FL_DUTY_COUNT; i++) {
        fl_duty_t *d = &ds->duty[i];
        uv_timer_init(uv, &d->timer);
        d->timer.data = d;
        uint64_t every = fl_duty_every_ms(ds->ts, (fl_duty_id_t)i);
        if (every) uv_timer_start(&d->timer, fl_on_duty_timer, every, every);
    }
}

void fl_tablet_duties_destroy(fl_tablet_duties_t *ds) {
    fl_free(ds);
}
