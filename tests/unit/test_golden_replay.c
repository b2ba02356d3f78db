/*
 * test_golden_replay.c — differential test against frames recorded from the
 * reference Fluss server (tests/golden/admin/{pyfluss,java}): every recorded
 * request is replayed, in order, through our dispatcher (fl_server_handle)
 * on a fresh store, and our response is compared with the reference's field
 * by field, by decoding both with our protobuf-c descriptors.
 *
 * Compared field by field, not byte by byte: protobuf allows any field order
 * and JSON payloads (table_json, database_json, schema_json) are compared as
 * JSON values, because the reference writes custom properties in Java
 * HashMap order; lists of names (LIST_DATABASES, LIST_TABLES) are compared
 * as sets, their order being unspecified. Not compared: created/modified times (wall clock); table
 * ids must map one-to-one between the two servers; API_VERSIONS must list
 * a subset of the reference's APIs with the same version ranges (we
 * advertise only what we implement). Error responses must carry the same
 * code, except the differences in tests/interop/KNOWN_DIFFERENCES.md.
 */
#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "common_fs.h"
#include "coordinator_catalog.h"
#include "metastore.h"
#include "proto_api.h"
#include "proto_frame.h"
#include "server_local.h"
#include "server_node.h"

#define GOLDEN_DIR FLUSS_SOURCE_DIR "/tests/golden/admin"
#define ID_MAP_MAX 64

typedef struct replay {
    fl_metastore_t *ms;
    fl_local_cluster_t lc;
    char tmpdir[64];
    int64_t golden_ids[ID_MAP_MAX], our_ids[ID_MAP_MAX];
    size_t ids;
    char mismatch[2048];
} replay_t;

static const ProtobufCMessageDescriptor *response_descriptor(int api_key) {
    switch (api_key) {
    case FL_API_API_VERSIONS: return &fluss__api_versions_response__descriptor;
    case FL_API_CREATE_DATABASE: return &fluss__create_database_response__descriptor;
    case FL_API_DROP_DATABASE: return &fluss__drop_database_response__descriptor;
    case FL_API_LIST_DATABASES: return &fluss__list_databases_response__descriptor;
    case FL_API_DATABASE_EXISTS: return &fluss__database_exists_response__descriptor;
    case FL_API_GET_DATABASE_INFO: return &fluss__get_database_info_response__descriptor;
    case FL_API_CREATE_TABLE: return &fluss__create_table_response__descriptor;
    case FL_API_DROP_TABLE: return &fluss__drop_table_response__descriptor;
    case FL_API_GET_TABLE_INFO: return &fluss__get_table_info_response__descriptor;
    case FL_API_LIST_TABLES: return &fluss__list_tables_response__descriptor;
    case FL_API_TABLE_EXISTS: return &fluss__table_exists_response__descriptor;
    case FL_API_GET_TABLE_SCHEMA: return &fluss__get_table_schema_response__descriptor;
    case FL_API_LIST_PARTITION_INFOS: return &fluss__list_partition_infos_response__descriptor;
    case FL_API_CREATE_PARTITION: return &fluss__create_partition_response__descriptor;
    case FL_API_DROP_PARTITION: return &fluss__drop_partition_response__descriptor;
    case FL_API_GET_METADATA: return &fluss__metadata_response__descriptor;
    default: return NULL;
    }
}

static void note(replay_t *r, const char *fmt, ...) {
    size_t n = strlen(r->mismatch);
    if (n >= sizeof(r->mismatch) - 2) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->mismatch + n, sizeof(r->mismatch) - n, fmt, ap);
    va_end(ap);
}

static int map_table_id(replay_t *r, int64_t golden, int64_t ours) {
    for (size_t i = 0; i < r->ids; i++) {
        if (r->golden_ids[i] == golden) return r->our_ids[i] == ours;
        if (r->our_ids[i] == ours) return 0;
    }
    if (r->ids == ID_MAP_MAX) return 0;
    r->golden_ids[r->ids] = golden;
    r->our_ids[r->ids++] = ours;
    return 1;
}

static int bytes_equal(const ProtobufCBinaryData *a, const ProtobufCBinaryData *b) {
    json_t *ja = json_loadb((const char *)a->data, a->len, 0, NULL);
    json_t *jb = json_loadb((const char *)b->data, b->len, 0, NULL);
    int eq;
    if (ja && jb) eq = json_equal(ja, jb);
    else eq = a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    if (ja) json_decref(ja);
    if (jb) json_decref(jb);
    return eq;
}

static int compare_messages(replay_t *r, const ProtobufCMessage *g, const ProtobufCMessage *o,
                            const char *path);

/* Compares element i of field f (a repeated field's element, or the value). */
static int compare_value(replay_t *r, const ProtobufCFieldDescriptor *f, const void *gv,
                         const void *ov, const char *path) {
    if (strcmp(f->name, "created_time") == 0 || strcmp(f->name, "modified_time") == 0) return 1;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
        if (memcmp(gv, ov, 4) == 0) return 1;
        note(r, "%s: reference %d, ours %d; ", path, *(const int32_t *)gv, *(const int32_t *)ov);
        return 0;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        if (strcmp(f->name, "table_id") == 0) {
            if (map_table_id(r, *(const int64_t *)gv, *(const int64_t *)ov)) return 1;
        } else if (memcmp(gv, ov, 8) == 0) {
            return 1;
        }
        note(r, "%s: reference %lld, ours %lld; ", path, (long long)*(const int64_t *)gv,
             (long long)*(const int64_t *)ov);
        return 0;
    case PROTOBUF_C_TYPE_BOOL:
        if (*(const protobuf_c_boolean *)gv == *(const protobuf_c_boolean *)ov) return 1;
        note(r, "%s: bool differs; ", path);
        return 0;
    case PROTOBUF_C_TYPE_ENUM:
        return *(const int *)gv == *(const int *)ov;
    case PROTOBUF_C_TYPE_STRING: {
        const char *a = *(char *const *)gv, *b = *(char *const *)ov;
        if ((!a && !b) || (a && b && strcmp(a, b) == 0)) return 1;
        note(r, "%s: reference \"%s\", ours \"%s\"; ", path, a ? a : "(unset)", b ? b : "(unset)");
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES:
        if (bytes_equal(gv, ov)) return 1;
        note(r, "%s: bytes differ: reference %.*s ours %.*s; ", path,
             (int)((const ProtobufCBinaryData *)gv)->len,
             (const char *)((const ProtobufCBinaryData *)gv)->data,
             (int)((const ProtobufCBinaryData *)ov)->len,
             (const char *)((const ProtobufCBinaryData *)ov)->data);
        return 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return compare_messages(r, *(ProtobufCMessage *const *)gv, *(ProtobufCMessage *const *)ov,
                                path);
    }
    return 0;
}

static size_t value_size(const ProtobufCFieldDescriptor *f) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    default: return 4;
    }
}

static int field_present(const ProtobufCFieldDescriptor *f, const ProtobufCMessage *m) {
    const char *base = (const char *)m;
    if (f->label == PROTOBUF_C_LABEL_REQUIRED) return 1;
    if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING)
        return *(void *const *)(base + f->offset) != NULL;
    return *(const protobuf_c_boolean *)(base + f->quantifier_offset) != 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int compare_messages(replay_t *r, const ProtobufCMessage *g, const ProtobufCMessage *o,
                            const char *path) {
    if (!g || !o) return g == o;
    const ProtobufCMessageDescriptor *d = g->descriptor;
    int ok = 1;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        char sub[256];
        snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
        const char *gb = (const char *)g, *ob = (const char *)o;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t gn = *(const size_t *)(gb + f->quantifier_offset);
            size_t on = *(const size_t *)(ob + f->quantifier_offset);
            if (gn != on) {
                note(r, "%s: reference has %zu entries, ours %zu; ", sub, gn, on);
                ok = 0;
                continue;
            }
            const char *ga = *(char *const *)(gb + f->offset), *oa = *(char *const *)(ob + f->offset);
            size_t sz = value_size(f);
            if (f->type == PROTOBUF_C_TYPE_STRING) {
                /* name lists (databases, tables) have no defined order */
                char **gs = fl_malloc(gn * sizeof(char *) + 1), **os = fl_malloc(gn * sizeof(char *) + 1);
                memcpy(gs, ga, gn * sizeof(char *));
                memcpy(os, oa, gn * sizeof(char *));
                qsort(gs, gn, sizeof(char *), cmp_str);
                qsort(os, gn, sizeof(char *), cmp_str);
                for (size_t k = 0; k < gn; k++) {
                    char el[300];
                    snprintf(el, sizeof(el), "%s{%zu}", sub, k);
                    ok &= compare_value(r, f, &gs[k], &os[k], el);
                }
                fl_free(gs);
                fl_free(os);
                continue;
            }
            for (size_t k = 0; k < gn; k++) {
                char el[300];
                snprintf(el, sizeof(el), "%s[%zu]", sub, k);
                ok &= compare_value(r, f, ga + k * sz, oa + k * sz, el);
            }
            continue;
        }
        int gp = field_present(f, g), op = field_present(f, o);
        if (gp != op) {
            note(r, "%s: %s in the reference's answer only; ", sub, gp ? "set" : "unset");
            ok = 0;
            continue;
        }
        if (gp) ok &= compare_value(r, f, gb + f->offset, ob + f->offset, sub);
    }
    return ok;
}

/* Our API_VERSIONS must be a subset of the reference's with equal ranges,
 * but for fluss-c's own keys (1900 and up: KNOWN_DIFFERENCES.md §4
 * api-extra, which test_api_versions.py checks key by key). */
static int compare_api_versions(replay_t *r, const Fluss__ApiVersionsResponse *g,
                                const Fluss__ApiVersionsResponse *o) {
    int ok = g->server_type == o->server_type;
    if (!ok) note(r, "server_type %d vs %d; ", g->server_type, o->server_type);
    for (size_t i = 0; i < o->n_api_versions; i++) {
        const Fluss__PbApiVersion *ov = o->api_versions[i];
        if (ov->api_key >= FL_API_OWN_KEY_MIN) continue;
        int found = 0;
        for (size_t k = 0; k < g->n_api_versions; k++) {
            const Fluss__PbApiVersion *gv = g->api_versions[k];
            if (gv->api_key != ov->api_key) continue;
            found = 1;
            if (gv->min_version != ov->min_version || gv->max_version != ov->max_version) {
                note(r, "api %d range differs; ", ov->api_key);
                ok = 0;
            }
        }
        if (!found) {
            note(r, "we advertise api %d that the reference role does not; ", ov->api_key);
            ok = 0;
        }
    }
    return ok;
}

static uint8_t *read_file(const char *dir, const char *name, size_t *len) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fl_buf_t b;
    fl_buf_init(&b);
    fl_error_t err;
    if (fl_fs_read_all(path, 1 << 24, &b, NULL, &err) != 0) {
        fl_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

static void replay_setup(replay_t *r, int coordinator_port, int tablet_port) {
    memset(r, 0, sizeof(*r));
    strcpy(r->tmpdir, "/tmp/fluss-golden-XXXXXX");
    assert_non_null(mkdtemp(r->tmpdir));
    fl_error_t err;
    fl_coordinator_config_t cc;
    fl_tablet_config_t tc[1];
    fl_local_test_config(r->tmpdir, 1, &cc, tc);
    cc.advertised.port = coordinator_port;
    tc[0].advertised.port = tablet_port;
    assert_int_equal(fl_local_cluster_new(&cc, tc, 1, &r->lc, &err), 0);
    assert_int_equal(fl_local_cluster_start(&r->lc, &err), 0);
    r->ms = r->lc.cs->ms;
}

static void replay_teardown(replay_t *r) {
    fl_local_cluster_destroy(&r->lc);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", r->tmpdir);
    assert_int_equal(system(cmd), 0);
}

/* Reference answers that fluss-c deliberately gives differently
 * (KNOWN_DIFFERENCES.md): returns the code we answer instead. */
static int expected_error(int api_key, int golden_code) {
    if (api_key == FL_API_GET_METADATA && golden_code == FLUSS_ERR_UNKNOWN_SERVER_ERROR)
        return FLUSS_ERR_TABLE_NOT_EXIST;
    return golden_code;
}

static void replay_dir(const char *scenario, size_t min_compared) {
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", GOLDEN_DIR, scenario);
    char path[600];
    snprintf(path, sizeof(path), "%s/index.json", dir);
    json_t *index = json_load_file(path, 0, NULL);
    assert_non_null(index);

    /* The recording ran with proxies on these ports: our metadata must
     * advertise the same endpoints to compare equal. */
    replay_t r;
    replay_setup(&r, 39123, 39124);
    size_t compared = 0, skipped = 0, failures = 0;
    for (size_t i = 0; i < json_array_size(index); i++) {
        const json_t *e = json_array_get(index, i);
        int api = (int)json_integer_value(json_object_get(e, "api_key"));
        const char *server = json_string_value(json_object_get(e, "server"));
        const char *req_name = json_string_value(json_object_get(e, "req"));
        const char *resp_name = json_string_value(json_object_get(e, "resp"));
        const ProtobufCMessageDescriptor *rd = response_descriptor(api);
        /* APIs this replay does not compare (the data path is checked by
         * the differential interop tests) */
        if (!rd || !resp_name) {
            skipped++;
            continue;
        }
        size_t qlen, glen;
        uint8_t *q = read_file(dir, req_name, &qlen);
        uint8_t *g = read_file(dir, resp_name, &glen);
        assert_non_null(q);
        assert_non_null(g);
        fl_frame_request_t req;
        assert_int_equal(fl_frame_parse_request(q, qlen, &req), FL_FRAME_OK);
        fl_server_role_t *role = strcmp(server, "coordinator") == 0 ? &r.lc.cs->role
                                                                     : &r.lc.tablets[0]->role;
        fl_rpc_out_t rout;
        fl_rpc_out_init(&rout);
        assert_int_equal(fl_server_handle(role, NULL, &req, &rout), 0);
        fl_rpc_out_flatten(&rout);
        fl_buf_t out = rout.buf; /* a view: freed through rout */
        fl_frame_response_t gr, or_;
        assert_int_equal(fl_frame_parse_response(g, glen, &gr), FL_FRAME_OK);
        assert_int_equal(fl_frame_parse_response(out.data, out.len, &or_), FL_FRAME_OK);
        assert_int_equal(or_.request_id, req.request_id);
        r.mismatch[0] = '\0';
        int ok = 1;
        if (gr.type != or_.type) {
            note(&r, "response type %d vs ours %d; ", gr.type, or_.type);
            ok = 0;
        } else if (gr.type == FL_RESPONSE_ERROR) {
            Fluss__ErrorResponse *ge = fluss__error_response__unpack(NULL, gr.body_len, gr.body);
            Fluss__ErrorResponse *oe = fluss__error_response__unpack(NULL, or_.body_len, or_.body);
            assert_non_null(ge);
            assert_non_null(oe);
            if (expected_error(api, ge->error_code) != oe->error_code) {
                note(&r, "error code %d vs ours %d (%s); ", ge->error_code, oe->error_code,
                     oe->error_message ? oe->error_message : "");
                ok = 0;
            }
            fluss__error_response__free_unpacked(ge, NULL);
            fluss__error_response__free_unpacked(oe, NULL);
        } else {
            ProtobufCMessage *gm = protobuf_c_message_unpack(rd, NULL, gr.body_len, gr.body);
            ProtobufCMessage *om = protobuf_c_message_unpack(rd, NULL, or_.body_len, or_.body);
            assert_non_null(gm); /* our .proto decodes the reference's bytes */
            assert_non_null(om);
            ok = api == FL_API_API_VERSIONS
                     ? compare_api_versions(&r, (Fluss__ApiVersionsResponse *)gm,
                                            (Fluss__ApiVersionsResponse *)om)
                     : compare_messages(&r, gm, om, rd->short_name);
            protobuf_c_message_free_unpacked(gm, NULL);
            protobuf_c_message_free_unpacked(om, NULL);
        }
        if (!ok) {
            print_message("%s/%s: %s\n", scenario, req_name, r.mismatch);
            failures++;
        }
        compared++;
        fl_rpc_out_free(&rout);
        fl_free(q);
        fl_free(g);
    }
    print_message("%s: %zu frames compared, %zu skipped\n", scenario, compared, skipped);
    json_decref(index);
    replay_teardown(&r);
    assert_int_equal(failures, 0);
    assert_true(compared >= min_compared);
}

static void test_replay_pyfluss(void **state) {
    (void)state;
    replay_dir("pyfluss", 40);
}

static void test_replay_java(void **state) {
    (void)state;
    replay_dir("java", 18);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_pyfluss),
        cmocka_unit_test(test_replay_java),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
