/*
 * fuzz_server_dispatch.c — fuzzes the whole request path of a flussd
 * process: the input is a byte stream of request frames, as a client would
 * send it; every whole frame goes through fl_server_handle (API key, version
 * and role checks, protobuf decode, the admin and metadata handlers, the
 * catalog and the embedded metastore) once as the coordinator and once as
 * the tablet server.
 *
 * The server is built once per process the way server_main.c builds it: an
 * embedded metastore in a fresh mkdtemp dir under /dev/shm (else /tmp),
 * the catalog, one coordinator and one tablet endpoint. Creates and drops
 * are durable (fsync), so state carries over between inputs; every
 * FUZZ_RESET_EVERY inputs all tables and non-default databases are dropped
 * through the catalog so the store does not grow without bound. The dir is
 * removed at exit.
 *
 * Invariants checked: the handler returns 0 and appends exactly one
 * response frame, which parses, is SUCCESS or ERROR (never SERVER_FAILURE),
 * echoes the request id, and whose body decodes as the API's response
 * message or as an ErrorResponse with a wire error code (>= -1, not NONE).
 */
#define _GNU_SOURCE /* mkdtemp, nftw */
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


/* The process-wide fixture; libFuzzer gives us no other place for it. */
static struct {
    int ready;
    char dir[FUZZ_DIR_MAX];
    fl_metastore_t *ms;
    fl_local_cluster_t lc;
    unsigned long inputs;
    int verbose; /* FUZZ_VERBOSE=1: one line per response, to check seeds */
} fuzz;

static const ProtobufCMessageDescriptor *fuzz_response_descriptor(int key) {
    for (size_t i = 0; i < FUZZ_API_COUNT; i++)
        if (fuzz_api_messages[i].key == key) return fuzz_api_messages[i].response;
    return NULL;
}

static int fuzz_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

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
    tc[0].advertised.port = 9124;
    FUZZ_CHECK(fl_local_cluster_new(&cc, tc, 1, &fuzz.lc, &err) == 0);
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
    atexit(fuzz_teardown);
}

/* Back to the initial state: only the default database, no tables. Names
 * are copied first, since store views die with the next mutation. */
static void fuzz_reset_store(void) {
    fl_catalog_t *cat = &fuzz.lc.cs->catalog;
    fl_metastore_t *ms = fuzz.ms;
    fl_error_t err;
    char name[FL_NAME_LEN_MAX + 1], db[FL_NAME_LEN_MAX + 1];
    while (ms->ops->table_count(ms) > 0) {
        const fl_ms_table_t *t = ms->ops->table_at(ms, 0);
        snprintf(db, sizeof(db), "%s", t->database);
        snprintf(name, sizeof(name), "%s", t->name);
        fl_err_clear(&err);
        if (fl_catalog_drop_table(cat, db, name, false, &err)) return; /* latched store */
    }
    for (size_t i = 0; i < ms->ops->db_count(ms);) {
        const fl_ms_database_t *d = ms->ops->db_at(ms, i);
        if (strcmp(d->name, FL_CATALOG_DEFAULT_DATABASE) == 0) {
            i++;
            continue;
        }
        snprintf(name, sizeof(name), "%s", d->name);
        fl_err_clear(&err);
        if (fl_catalog_drop_database(cat, name, false, true, &err)) return;
    }
    fl_err_clear(&err);
    (void)fl_catalog_create_database(cat, FL_CATALOG_DEFAULT_DATABASE, NULL, 0, true, &err);
}

static void fuzz_check_body(const ProtobufCMessageDescriptor *d, const fl_frame_response_t *r,
                            int is_error, const fl_server_role_t *role, int api_key) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, r->body_len, r->body);
    FUZZ_CHECK(m != NULL);
    const Fluss__ErrorResponse *e = is_error ? (const Fluss__ErrorResponse *)m : NULL;
    if (e) FUZZ_CHECK(e->error_code >= -1 && e->error_code != 0);
    if (fuzz.verbose)
        fprintf(stderr, "%s api %d id %d: %s %d %s\n", role->role == FL_ROLE_CS ? "CS" : "TS",
                api_key, r->request_id, e ? "error" : "ok", e ? e->error_code : 0,
                e && e->error_message ? e->error_message : "");
    protobuf_c_message_free_unpacked(m, NULL);
}

static void fuzz_handle(fl_server_role_t *role, const fl_frame_request_t *req) {
    fl_rpc_out_t rout;
    fl_rpc_out_init(&rout);
    FUZZ_CHECK(fl_server_handle(role, NULL, req, &rout) == 0);
    fl_rpc_out_flatten(&rout);
    fl_buf_t out = rout.buf; /* a view: freed through rout */
    size_t frame_bytes = 0;
    FUZZ_CHECK(fl_frame_peek(out.data, out.len, SIZE_MAX, &frame_bytes) == FL_FRAME_OK);
    FUZZ_CHECK(frame_bytes == out.len); /* exactly one response per request */
    fl_frame_response_t r;
    FUZZ_CHECK(fl_frame_parse_response(out.data, out.len, &r) == FL_FRAME_OK);
    FUZZ_CHECK(r.type == FL_RESPONSE_SUCCESS || r.type == FL_RESPONSE_ERROR);
    FUZZ_CHECK(r.request_id == req->request_id);
    if (r.type == FL_RESPONSE_ERROR) {
        fuzz_check_body(&fluss__error_response__descriptor, &r, 1, role, req->api_key);
    } else {
        const ProtobufCMessageDescriptor *d = fuzz_response_descriptor(req->api_key);
        FUZZ_CHECK(d != NULL); /* success only for an API Fluss defines */
        fuzz_check_body(d, &r, 0, role, req->api_key);
    }
    fl_rpc_out_free(&rout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz.ready) fuzz_setup();
    if (++fuzz.inputs % FUZZ_RESET_EVERY == 0) fuzz_reset_store();
    size_t pos = 0;
    for (int n = 0; n < FUZZ_FRAMES_PER_INPUT_MAX && pos < size; n++) {
        size_t frame_bytes = 0;
        if (fl_frame_peek(data + pos, size - pos, FUZZ_FRAME_MAX, &frame_bytes) != FL_FRAME_OK)
            break;
        fl_frame_request_t req;
        /* The rpc layer closes the connection here, as it does on a bad peek. */
        if (fl_frame_parse_request(data + pos, frame_bytes, &req) != FL_FRAME_OK) break;
        fuzz_handle(&fuzz.lc.cs->role, &req);
        fuzz_handle(&fuzz.lc.tablets[0]->role, &req);
        pos += frame_bytes;
    }
    return 0;
}
