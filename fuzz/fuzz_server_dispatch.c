/*
 * fuzz_server_dispatch.c — fuzzes the whole request path of a flussd
 * process: the input is a byte stream of request frames, as a client would
 * send it; every whole frame goes through fl_server_handle (API key, version
 * and role checks, protobuf decode, the admin and metadata handlers, the
 * catalog and the embedded metastore, and on the tablet server the log and
 * kv handlers over real replicas and kv tablets) once as the coordinator
 * and once as the tablet server.
 *
 * The server is built once per process the way server_main.c builds it: an
 * embedded metastore in a fresh mkdtemp dir under /dev/shm (else /tmp),
 * the catalog, one coordinator and one tablet endpoint (not started: no
 * loop or listener runs). At setup the fixture creates, through the
 * catalog and the coordinator's push (as CREATE_TABLE does), the tables of
 * fuzz_tables in database FUZZ_FIXTURE_DB: an ARROW, an INDEXED and a
 * COMPACTED log table and a primary-key table. A fresh store numbers
 * tables from 0, so their ids are fixed and the seeds written by
 * fuzz/seedgen_server_dispatch.py address them; the catalog gives every
 * bucket to the one tablet server, which opens (recovers) each bucket's
 * log and kv tablet on the push, so PRODUCE_LOG, FETCH_LOG, LIST_OFFSETS,
 * PUT_KV, LOOKUP, PREFIX_LOOKUP and LIMIT_SCAN reach the log and kv code.
 *
 * No connection: fl_server_handle gets conn == NULL, and then runs every
 * API inline (the worker and kv-writer queues are for requests with a
 * connection) and nothing parks — a FETCH_LOG with max_wait_ms answers
 * with what it found (may_park needs a connection), a produce or put with
 * acks=-1 waits for a high watermark that one in-sync replica without
 * log.flush.* has already moved, and otherwise answers REQUEST_TIME_OUT
 * for the bucket (server_ackwait.c). The purgatory stays empty: checked
 * after every request. LOOKUP's answer on the network loop
 * (fl_lookup_inline, taken only with a connection) is run directly as
 * well, since it is a separate read path.
 *
 * State carries over between inputs (creates and drops are durable).
 * Every FUZZ_RESET_EVERY inputs the tables and databases the input made
 * are dropped through the catalog and the coordinator's push, and the
 * fixture tables' data is truncated (the tablet server drops their
 * replicas and the table is pushed again), then the resources are checked
 * against bounds: tables and replicas on the tablet server, open file
 * descriptors, bytes under the dir. An input that drops or replaces a
 * fixture table (DROP_TABLE, DROP_DATABASE cascade) makes the next input
 * start from a freshly built server, so the ids stay meaningful. The dir
 * is removed at exit.
 *
 * Invariants checked: the handler returns 0 and appends exactly one
 * response frame, which parses, is SUCCESS or ERROR (never SERVER_FAILURE),
 * echoes the request id, and whose body decodes as the API's response
 * message or as an ErrorResponse with a wire error code (>= -1, not NONE);
 * no request stays parked. FUZZ_VERBOSE=1 prints one line per response,
 * with the error codes nested in a SUCCESS body (per-bucket errors), to
 * check what the seeds reach.
 */
#define _GNU_SOURCE /* mkdtemp, nftw */
#include <dirent.h>
#include <ftw.h>
#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common_buf.h"
#include "common_log.h"
#include "coordinator_catalog.h"
#include "kv_store.h"
#include "server_local.h"
#include "fluss_api.pb-c.h"
#include "metastore.h"
#include "proto_api.h"
#include "proto_frame.h"
#include "server_node.h"
#include "fuzz_common.h"

#define FUZZ_FRAME_MAX (1u << 20)
#define FUZZ_FRAMES_PER_INPUT_MAX 64
#define FUZZ_RESET_EVERY 32
#define FUZZ_DIR_MAX 256
#define FUZZ_MAX_BUCKETS 16 /* max.bucket.num: a table the input creates opens its buckets */
#define FUZZ_FD_SLACK 64
#define FUZZ_DIR_BYTES_MAX ((uint64_t)256 << 20) /* after a reset */
#define FUZZ_NESTED_ERRORS_MAX 8

/* The fixture: keep in step with fuzz/seedgen_server_dispatch.py. */
#define FUZZ_FIXTURE_DB "fuzz_fixture"

typedef struct fuzz_table {
    const char *name;
    int64_t id; /* what a fresh store gives it, created in this order */
    int32_t buckets;
    const char *json;
} fuzz_table_t;

#define FUZZ_COL(n, id, t) "{\"name\":\"" n "\",\"data_type\":" t ",\"id\":" #id "}"
#define FUZZ_LOG_ROWS_TABLE(format)                                                    \
    "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["                           \
    FUZZ_COL("id", 0, "{\"type\":\"INTEGER\"}") ","                                    \
    FUZZ_COL("name", 1, "{\"type\":\"STRING\"}") "],\"highest_field_id\":1},"         \
    "\"partition_key\":[],\"bucket_key\":[],\"bucket_count\":1,"                       \
    "\"properties\":{\"table.log.format\":\"" format "\"},\"custom_properties\":{}}"

static const fuzz_table_t fuzz_tables[] = {
    {"log_arrow", 0, 2,
     "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["
     FUZZ_COL("id", 0, "{\"type\":\"INTEGER\"}") ","
     FUZZ_COL("name", 1, "{\"type\":\"STRING\"}") ","
     FUZZ_COL("score", 2, "{\"type\":\"DOUBLE\"}") ","
     FUZZ_COL("tags", 3, "{\"type\":\"ARRAY\",\"element_type\":{\"type\":\"BIGINT\"}}")
     "],\"highest_field_id\":3},\"partition_key\":[],\"bucket_key\":[],\"bucket_count\":2,"
     "\"properties\":{\"table.log.format\":\"ARROW\"},\"custom_properties\":{}}"},
    {"log_indexed", 1, 1, FUZZ_LOG_ROWS_TABLE("INDEXED")},
    {"log_compacted", 2, 1, FUZZ_LOG_ROWS_TABLE("COMPACTED")},
    {"pk", 3, 1,
     "{\"version\":1,\"schema\":{\"version\":1,\"columns\":["
     FUZZ_COL("id", 0, "{\"type\":\"INTEGER\",\"nullable\":false}") ","
     FUZZ_COL("name", 1, "{\"type\":\"STRING\",\"nullable\":false}") ","
     FUZZ_COL("score", 2, "{\"type\":\"BIGINT\"}")
     "],\"primary_key\":[\"id\",\"name\"],\"highest_field_id\":2},\"partition_key\":[],"
     "\"bucket_key\":[\"id\"],\"bucket_count\":1,\"properties\":{},\"custom_properties\":{}}"},
};

#define FUZZ_TABLE_COUNT (sizeof(fuzz_tables) / sizeof(fuzz_tables[0]))

/* The process-wide fixture; libFuzzer gives us no other place for it. */
static struct {
    int ready;
    int exit_hook;
    char dir[FUZZ_DIR_MAX];
    fl_metastore_t *ms;
    fl_local_cluster_t lc;
    unsigned long inputs;
    size_t fd_baseline;
    int verbose; /* FUZZ_VERBOSE=1: one line per response, to check seeds */
} fuzz;

static const ProtobufCMessageDescriptor *fuzz_response_descriptor(int key) {
    for (size_t i = 0; i < FUZZ_API_COUNT; i++)
        if (fuzz_api_messages[i].key == key) return fuzz_api_messages[i].response;
    return NULL;
}

/* ---- resources ---- */

static uint64_t fuzz_dir_bytes_sum;

static int fuzz_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static int fuzz_du_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)path;
    (void)ftw;
    if (flag == FTW_F) fuzz_dir_bytes_sum += (uint64_t)sb->st_blocks * 512;
    return 0;
}

/* Bytes the files under the dir take (allocated, not apparent). */
static uint64_t fuzz_dir_bytes(void) {
    fuzz_dir_bytes_sum = 0;
    nftw(fuzz.dir, fuzz_du_entry, 16, FTW_PHYS);
    return fuzz_dir_bytes_sum;
}

static size_t fuzz_fd_count(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    size_t n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* ---- the fixture ---- */

static fl_tablet_server_t *fuzz_ts(void) { return fuzz.lc.tablets[0]; }

static void fuzz_fixture_create(void) {
    fl_coordinator_server_t *cs = fuzz.lc.cs;
    fl_error_t err;
    fl_err_clear(&err);
    pthread_mutex_lock(&cs->lock);
    int rc = fl_catalog_create_database(&cs->catalog, FUZZ_FIXTURE_DB, NULL, 0, false, &err);
    for (size_t i = 0; !rc && i < FUZZ_TABLE_COUNT; i++) {
        const fuzz_table_t *t = &fuzz_tables[i];
        rc = fl_catalog_create_table(&cs->catalog, FUZZ_FIXTURE_DB, t->name,
                                     (const uint8_t *)t->json, strlen(t->json), false, &err);
        const fl_ms_table_t *m = rc ? NULL : fuzz.ms->ops->table_get(fuzz.ms, FUZZ_FIXTURE_DB, t->name);
        if (m && (m->table_id != t->id || m->bucket_count != t->buckets)) {
            fprintf(stderr, "fixture table %s: id %lld, %d buckets\n", t->name,
                    (long long)m->table_id, m->bucket_count);
            rc = -1;
        }
        if (m && !rc) fl_coordinator_server_table_changed(cs, m->table_id);
    }
    pthread_mutex_unlock(&cs->lock);
    fl_coordinator_server_push_flush(cs);
    if (rc) fprintf(stderr, "fixture: %s\n", err.msg);
    FUZZ_CHECK(rc == 0);
}

/* Whether the store and the tablet server still have every fixture table
 * under its id and name. */
static bool fuzz_fixture_intact(void) {
    for (size_t i = 0; i < FUZZ_TABLE_COUNT; i++) {
        const fuzz_table_t *t = &fuzz_tables[i];
        const fl_ms_table_t *m = fuzz.ms->ops->table_by_id(fuzz.ms, t->id);
        if (!m || strcmp(m->database, FUZZ_FIXTURE_DB) != 0 || strcmp(m->name, t->name) != 0)
            return false;
        fl_hosted_table_t *h = fl_tablet_catalog_table(fuzz_ts()->catalog, t->id);
        fl_hosted_table_unref(h);
        if (!h) return false;
    }
    return true;
}

static bool fuzz_is_fixture(const fl_ms_table_t *m) {
    for (size_t i = 0; i < FUZZ_TABLE_COUNT; i++)
        if (m->table_id == fuzz_tables[i].id && strcmp(m->database, FUZZ_FIXTURE_DB) == 0 &&
            strcmp(m->name, fuzz_tables[i].name) == 0)
            return true;
    return false;
}

/* Empties the fixture tables: the tablet server deletes their replicas
 * (logs, kv tablets, writer state) and opens them again, empty, on the
 * push that follows. */
static void fuzz_fixture_truncate(void) {
    fl_coordinator_server_t *cs = fuzz.lc.cs;
    pthread_mutex_lock(&cs->lock);
    for (size_t i = 0; i < FUZZ_TABLE_COUNT; i++) {
        fl_tablet_server_drop_table(fuzz_ts(), FUZZ_FIXTURE_DB, fuzz_tables[i].name,
                                    fuzz_tables[i].id);
        fl_coordinator_server_table_changed(cs, fuzz_tables[i].id);
    }
    pthread_mutex_unlock(&cs->lock);
    fl_coordinator_server_push_flush(cs);
}

/* ---- the server ---- */

static void fuzz_teardown(void) {
    if (!fuzz.ready) return;
    fl_local_cluster_destroy(&fuzz.lc);
    nftw(fuzz.dir, fuzz_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    fuzz.ready = 0;
}

static void fuzz_setup(void) {
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
                               access("/dev/shm", W_OK) == 0
                           ? "/dev/shm"
                           : "/tmp";
    snprintf(fuzz.dir, sizeof(fuzz.dir), "%s/fluss-fuzz-dispatch-XXXXXX", base);
    FUZZ_CHECK(mkdtemp(fuzz.dir) != NULL);
    fl_log_set_level(FL_LOG_ERROR);
    fuzz.verbose = getenv("FUZZ_VERBOSE") != NULL;
    fl_error_t err;
    fl_err_clear(&err);
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[1];
    fl_local_test_config(fuzz.dir, 1, &cc, tc);
    cc.advertised.port = 9123;
    cc.defaults.max_bucket_num = FUZZ_MAX_BUCKETS;
    tc[0].advertised.port = 9124;
    tc[0].kv_block_cache_bytes = (size_t)1 << 20;
    tc[0].kv_write_buffer_bytes = (size_t)256 << 10;
    FUZZ_CHECK(fl_local_cluster_new(&cc, tc, 1, &fuzz.lc, &err) == 0);
    /* running: the coordinator's messages reach the tablet server over its
     * in-process connection (the inputs themselves come with no connection) */
    FUZZ_CHECK(fl_local_cluster_start(&fuzz.lc, &err) == 0);
    fuzz.ms = fuzz.lc.cs->ms;
    /* RocksDB builds its default Env (thread pools) at first use and
     * registers its destructor then; a store opened and closed here does
     * that before atexit(fuzz_teardown), so the kv tablets the teardown
     * closes (PK tables the inputs made and read) still have their Env */
    char warm[FUZZ_DIR_MAX + 32];
    snprintf(warm, sizeof(warm), "%s/rocksdb-warmup", fuzz.dir);
    fl_kv_store_t *store = NULL;
    FUZZ_CHECK(fl_kv_store_open(warm, NULL, &store, &err) == 0);
    fl_kv_store_close(store, true);
    fuzz.ready = 1;
    fuzz_fixture_create();
    if (!fuzz.fd_baseline) fuzz.fd_baseline = fuzz_fd_count();
    if (!fuzz.exit_hook) atexit(fuzz_teardown);
    fuzz.exit_hook = 1;
}

/* A fresh server in a fresh dir: the fixture ids again. */
static void fuzz_rebuild(void) {
    if (fuzz.verbose) fprintf(stderr, "fixture damaged: rebuilding the server\n");
    fuzz_teardown();
    fuzz_setup();
}

/* Drops one table the input made, as DROP_TABLE does (the tablet server
 * deletes its replicas). Names are copied: views die with the mutation. */
static int fuzz_drop_table(const fl_ms_table_t *m) {
    fl_coordinator_server_t *cs = fuzz.lc.cs;
    char name[FL_NAME_LEN_MAX + 1], db[FL_NAME_LEN_MAX + 1];
    int64_t id = m->table_id;
    snprintf(db, sizeof(db), "%s", m->database);
    snprintf(name, sizeof(name), "%s", m->name);
    fl_error_t err;
    fl_err_clear(&err);
    int rc = fl_catalog_drop_table(&cs->catalog, db, name, false, &err);
    if (!rc) fl_coordinator_server_table_dropped(cs, db, name, id);
    return rc;
}

/* Back to the initial state: the default and the fixture database, the
 * fixture tables, empty. Any failure (a latched store) rebuilds. */
static void fuzz_reset_store(void) {
    fl_coordinator_server_t *cs = fuzz.lc.cs;
    fl_catalog_t *cat = &cs->catalog;
    fl_metastore_t *ms = fuzz.ms;
    fl_error_t err;
    char name[FL_NAME_LEN_MAX + 1];
    int rc = 0;
    pthread_mutex_lock(&cs->lock);
    for (size_t i = 0; !rc && i < ms->ops->table_count(ms);) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, i);
        if (fuzz_is_fixture(t)) i++;
        else rc = fuzz_drop_table(t);
    }
    for (size_t i = 0; !rc && i < ms->ops->db_count(ms);) {
        const fl_ms_database_t *d = ms->ops->db_at(ms, i);
        if (strcmp(d->name, FL_CATALOG_DEFAULT_DATABASE) == 0 ||
            strcmp(d->name, FUZZ_FIXTURE_DB) == 0) {
            i++;
            continue;
        }
        snprintf(name, sizeof(name), "%s", d->name);
        fl_err_clear(&err);
        rc = fl_catalog_drop_database(cat, name, false, true, &err);
    }
    fl_err_clear(&err);
    if (!rc) rc = fl_catalog_create_database(cat, FL_CATALOG_DEFAULT_DATABASE, NULL, 0, true, &err);
    pthread_mutex_unlock(&cs->lock);
    fl_coordinator_server_push_flush(cs);
    if (rc || !fuzz_fixture_intact()) {
        fuzz_rebuild();
        return;
    }
    fuzz_fixture_truncate();
    /* bounded: nothing the inputs made is left behind */
    fl_tablet_server_t *ts = fuzz_ts();
    size_t buckets = 0;
    for (size_t i = 0; i < FUZZ_TABLE_COUNT; i++) buckets += (size_t)fuzz_tables[i].buckets;
    FUZZ_CHECK(ms->ops->table_count(ms) == FUZZ_TABLE_COUNT);
    FUZZ_CHECK(fl_tablet_catalog_count(ts->catalog) == FUZZ_TABLE_COUNT);
    pthread_mutex_lock(&ts->replicas.lock);
    size_t replicas = ts->replicas.count;
    pthread_mutex_unlock(&ts->replicas.lock);
    FUZZ_CHECK(replicas == buckets);
    size_t fds = fuzz_fd_count();
    uint64_t bytes = fuzz_dir_bytes();
    if (fuzz.verbose)
        fprintf(stderr, "reset: %zu fds (baseline %zu), %llu bytes under %s\n", fds,
                fuzz.fd_baseline, (unsigned long long)bytes, fuzz.dir);
    FUZZ_CHECK(fds <= fuzz.fd_baseline + FUZZ_FD_SLACK);
    FUZZ_CHECK(bytes <= FUZZ_DIR_BYTES_MAX);
}

/* ---- responses ---- */

/* What a SUCCESS body carries, for FUZZ_VERBOSE: the error codes set
 * anywhere inside it (per-bucket errors) and the bytes of its bytes fields
 * (records, values), to tell an answer with data from an empty one. */
typedef struct fuzz_summary {
    int codes[FUZZ_NESTED_ERRORS_MAX];
    size_t code_count;
    size_t bytes;
} fuzz_summary_t;

static void fuzz_summarize(const ProtobufCMessage *m, fuzz_summary_t *s) {
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        size_t count = repeated ? *(const size_t *)(base + f->quantifier_offset) : 1;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *const *items =
                repeated ? *(ProtobufCMessage *const *const *)(base + f->offset)
                         : (ProtobufCMessage *const *)(base + f->offset);
            for (size_t k = 0; k < count; k++)
                if (items[k]) fuzz_summarize(items[k], s);
        } else if (f->type == PROTOBUF_C_TYPE_BYTES) {
            const ProtobufCBinaryData *items =
                repeated ? *(const ProtobufCBinaryData *const *)(base + f->offset)
                         : (const ProtobufCBinaryData *)(base + f->offset);
            for (size_t k = 0; k < count; k++) s->bytes += items[k].len;
        } else if (f->type == PROTOBUF_C_TYPE_INT32 && !repeated &&
                   strcmp(f->name, "error_code") == 0) {
            bool has = f->label == PROTOBUF_C_LABEL_REQUIRED ||
                       *(const protobuf_c_boolean *)(base + f->quantifier_offset);
            if (has && s->code_count < FUZZ_NESTED_ERRORS_MAX)
                s->codes[s->code_count++] = *(const int32_t *)(base + f->offset);
        }
    }
}

static void fuzz_check_body(const ProtobufCMessageDescriptor *d, const fl_frame_response_t *r,
                            int is_error, const char *who, int api_key) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, r->body_len, r->body);
    FUZZ_CHECK(m != NULL);
    const Fluss__ErrorResponse *e = is_error ? (const Fluss__ErrorResponse *)m : NULL;
    if (e) FUZZ_CHECK(e->error_code >= -1 && e->error_code != 0);
    if (fuzz.verbose) {
        char detail[160] = "";
        if (!e) {
            fuzz_summary_t sum = {0};
            fuzz_summarize(m, &sum);
            size_t len = (size_t)snprintf(detail, sizeof(detail), "bytes=%zu", sum.bytes);
            for (size_t i = 0; i < sum.code_count && len < sizeof(detail); i++)
                len += (size_t)snprintf(detail + len, sizeof(detail) - len, "%s%d",
                                        i ? "," : " nested_errors=", sum.codes[i]);
        } else if (e->error_message) {
            snprintf(detail, sizeof(detail), "%s", e->error_message);
        }
        fprintf(stderr, "%s api %d id %d: %s %d %s\n", who, api_key, r->request_id,
                e ? "error" : "ok", e ? e->error_code : 0, detail);
    }
    protobuf_c_message_free_unpacked(m, NULL);
}

/* One response frame for request_id, and nothing else, in out. */
static void fuzz_check_response(const fl_buf_t *out, int32_t request_id, int api_key,
                                const char *who) {
    size_t frame_bytes = 0;
    FUZZ_CHECK(fl_frame_peek(out->data, out->len, SIZE_MAX, &frame_bytes) == FL_FRAME_OK);
    FUZZ_CHECK(frame_bytes == out->len); /* exactly one response per request */
    fl_frame_response_t r;
    FUZZ_CHECK(fl_frame_parse_response(out->data, out->len, &r) == FL_FRAME_OK);
    FUZZ_CHECK(r.type == FL_RESPONSE_SUCCESS || r.type == FL_RESPONSE_ERROR);
    FUZZ_CHECK(r.request_id == request_id);
    if (r.type == FL_RESPONSE_ERROR) {
        fuzz_check_body(&fluss__error_response__descriptor, &r, 1, who, api_key);
    } else {
        const ProtobufCMessageDescriptor *d = fuzz_response_descriptor(api_key);
        FUZZ_CHECK(d != NULL); /* success only for an API Fluss defines */
        fuzz_check_body(d, &r, 0, who, api_key);
    }
}

static void fuzz_handle(fl_server_role_t *role, const fl_frame_request_t *req) {
    fl_rpc_out_t rout;
    fl_rpc_out_init(&rout);
    FUZZ_CHECK(fl_server_handle(role, NULL, req, &rout) == 0);
    fl_rpc_out_flatten(&rout);
    fuzz_check_response(&rout.buf, req->request_id, req->api_key,
                        role->role == FL_ROLE_CS ? "CS" : "TS");
    fl_rpc_out_free(&rout);
    /* nothing parked: it would answer later, or never */
    FUZZ_CHECK(fl_purgatory_size(fuzz_ts()->purgatory) == 0);
}

/* LOOKUP as the tablet server's network loop answers it when it can
 * (server_dispatch.c tries it only for a request with a connection). */
static void fuzz_lookup_inline(const fl_frame_request_t *req) {
    if (req->api_key != FL_API_LOOKUP) return;
    const fl_api_info_t *info = fl_api_info(req->api_key);
    if (req->api_version < info->min_version || req->api_version > info->max_version) return;
    ProtobufCMessage *body =
        protobuf_c_message_unpack(&fluss__lookup_request__descriptor, NULL, req->body_len, req->body);
    if (!body) return;
    fl_tablet_server_t *ts = fuzz_ts();
    fl_req_ctx_t ctx = {
        .request_id = req->request_id,
        .api_key = req->api_key,
        .api_version = req->api_version,
        .role = &ts->role,
        .cs = ts->role.cs,
        .ts = ts,
        .body = body,
    };
    fl_buf_t out;
    fl_buf_init(&out);
    if (fl_lookup_inline(&ctx, body, &out))
        fuzz_check_response(&out, req->request_id, req->api_key, "TS-inline");
    else
        FUZZ_CHECK(out.len == 0);
    fl_buf_free(&out);
    protobuf_c_message_free_unpacked(body, NULL);
}

/* LeakSanitizer (libFuzzer checks after any input that allocated more
 * than it freed): the 32-byte node glibc's __cxa_thread_atexit_impl
 * allocates when a thread first touches a C++ thread_local with a
 * destructor stays linked from that thread's TLS until the thread exits,
 * where LSan does not look. RocksDB's threads do this during inputs: its
 * periodic-task timer, its background pools, the threads each DB::Open
 * starts to load table files (the kv tablets of the PK tables). Nothing
 * of ours allocates there. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:__cxa_thread_atexit_impl\n"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz.ready) fuzz_setup();
    if (++fuzz.inputs % FUZZ_RESET_EVERY == 0) fuzz_reset_store();
    static uint8_t frame[FUZZ_FRAME_MAX + 4]; /* + the length field */
    size_t pos = 0;
    for (int n = 0; n < FUZZ_FRAMES_PER_INPUT_MAX && pos < size; n++) {
        size_t frame_bytes = 0;
        if (fl_frame_peek(data + pos, size - pos, FUZZ_FRAME_MAX, &frame_bytes) != FL_FRAME_OK)
            break;
        /* in a writable copy, as the rpc layer's read buffer is: a
         * PRODUCE_LOG's records are given their offsets in place
         * (proto_produce.h) */
        memcpy(frame, data + pos, frame_bytes);
        fl_frame_request_t req;
        /* The rpc layer closes the connection here, as it does on a bad peek. */
        if (fl_frame_parse_request(frame, frame_bytes, &req) != FL_FRAME_OK) break;
        fuzz_handle(&fuzz.lc.cs->role, &req);
        fuzz_handle(&fuzz.lc.tablets[0]->role, &req);
        fuzz_lookup_inline(&req);
        pos += frame_bytes;
    }
    if (!fuzz_fixture_intact()) fuzz_rebuild();
    return 0;
}
