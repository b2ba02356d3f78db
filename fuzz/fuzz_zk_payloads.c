/*
 * fuzz_zk_payloads.c — the znode payloads the ZooKeeper metastore reads
 * (metastore_zk_codec.h): whatever is in a znode is untrusted (anything
 * with access to the ensemble may have written it). Every decoder gets
 * the input; what decodes is encoded and decoded again, and must give
 * the same values (decode ∘ encode is the identity on decoded values).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"
#include "common_error.h"
#include "fuzz_common.h"
#include "metastore_zk_codec.h"

#define FUZZ_SCHEMA "{\"version\":1,\"columns\":[{\"name\":\"id\",\"id\":0}],\"highest_field_id\":0}"

static void fuzz_db(const uint8_t *data, size_t size) {
    char *json;
    int64_t c, m;
    if (fl_zk_db_reg_decode(data, size, &json, &c, &m, NULL)) return;
    fl_error_t err;
    char *reg = fl_zk_db_reg_encode(json, c, m, &err);
    if (!reg) {
        fprintf(stderr, "decoded database does not encode: %s\n  %s\n", err.msg, json);
        abort();
    }
    char *json2;
    int64_t c2, m2;
    FUZZ_CHECK(fl_zk_db_reg_decode(reg, strlen(reg), &json2, &c2, &m2, NULL) == 0);
    FUZZ_CHECK(strcmp(json, json2) == 0 && c == c2 && m == m2);
    free(json);
    free(json2);
    free(reg);
}

static void fuzz_table(const uint8_t *data, size_t size) {
    char *json;
    int64_t id, c, m;
    if (fl_zk_table_reg_decode(data, size, FUZZ_SCHEMA, &json, &id, &c, &m, NULL)) return;
    fl_error_t err;
    char *reg = fl_zk_table_reg_encode(json, FUZZ_SCHEMA, id, c, m, &err);
    if (!reg) {
        fprintf(stderr, "decoded table does not encode: %s\n  %s\n", err.msg, json);
        abort();
    }
    char *json2;
    int64_t id2, c2, m2;
    FUZZ_CHECK(fl_zk_table_reg_decode(reg, strlen(reg), FUZZ_SCHEMA, &json2, &id2, &c2, &m2,
                                      NULL) == 0);
    FUZZ_CHECK(strcmp(json, json2) == 0 && id == id2 && c == c2 && m == m2);
    free(json);
    free(json2);
    free(reg);
    (void)fl_zk_schema_autoinc_column(FUZZ_SCHEMA);
}

static void fuzz_values_free(char **values, size_t n) {
    for (size_t i = 0; i < n; i++) fl_free(values[i]);
    fl_free(values);
}

static void fuzz_partition(const uint8_t *data, size_t size) {
    int64_t tid, pid, created = 0;
    char **values;
    size_t n;
    int has_created;
    if (fl_zk_partition_decode(data, size, &tid, &pid, &values, &n, &created, &has_created, NULL))
        return;
    fl_ms_partition_t p = {.partition_id = pid, .name = "p", .values = values, .value_count = n,
                           .created_ms = created};
    char *enc = fl_zk_partition_encode(tid, &p, NULL);
    FUZZ_CHECK(enc != NULL);
    int64_t tid2, pid2, created2 = 0;
    char **values2;
    size_t n2;
    int has2;
    FUZZ_CHECK(fl_zk_partition_decode(enc, strlen(enc), &tid2, &pid2, &values2, &n2, &created2,
                                      &has2, NULL) == 0);
    FUZZ_CHECK(tid == tid2 && pid == pid2 && created == created2 && has2 && n == n2);
    for (size_t i = 0; i < n; i++) FUZZ_CHECK(strcmp(values[i], values2[i]) == 0);
    fuzz_values_free(values, n);
    fuzz_values_free(values2, n2);
    free(enc);
}

static void fuzz_assignment(const uint8_t *data, size_t size) {
    int64_t tid;
    fl_ms_bucket_t *b;
    int32_t n;
    if (fl_zk_assignment_decode(data, size, &tid, &b, &n, NULL)) return;
    char *enc = fl_zk_assignment_encode(tid, b, n);
    int64_t tid2;
    fl_ms_bucket_t *b2;
    int32_t n2;
    FUZZ_CHECK(fl_zk_assignment_decode(enc, strlen(enc), &tid2, &b2, &n2, NULL) == 0);
    FUZZ_CHECK(tid == tid2 && n == n2);
    for (int32_t i = 0; i < n; i++) {
        FUZZ_CHECK(b[i].replica_count == b2[i].replica_count);
        FUZZ_CHECK(memcmp(b[i].replicas, b2[i].replicas,
                          (size_t)b[i].replica_count * sizeof(int32_t)) == 0);
    }
    fl_free(b);
    fl_free(b2);
    free(enc);
}

static void fuzz_leader_isr(const uint8_t *data, size_t size) {
    fl_zk_leader_isr_t l, l2;
    if (fl_zk_leader_isr_decode(data, size, &l, NULL)) return;
    char *enc = fl_zk_leader_isr_encode(&l);
    FUZZ_CHECK(fl_zk_leader_isr_decode(enc, strlen(enc), &l2, NULL) == 0);
    FUZZ_CHECK(memcmp(&l, &l2, sizeof(l)) == 0);
    free(enc);
}

static void fuzz_servers(const uint8_t *data, size_t size) {
    fl_zk_tablet_server_t ts = {0}, ts2 = {0};
    if (fl_zk_tablet_server_decode(data, size, &ts, NULL) == 0) {
        char *enc = fl_zk_tablet_server_encode(&ts);
        FUZZ_CHECK(fl_zk_tablet_server_decode(enc, strlen(enc), &ts2, NULL) == 0);
        FUZZ_CHECK(strcmp(ts.listeners, ts2.listeners) == 0);
        FUZZ_CHECK((!ts.rack && !ts2.rack) || (ts.rack && ts2.rack && !strcmp(ts.rack, ts2.rack)));
        FUZZ_CHECK(ts.register_ms == ts2.register_ms);
        fl_zk_tablet_server_clear(&ts);
        fl_zk_tablet_server_clear(&ts2);
        free(enc);
    }
    char *id, *listeners;
    if (fl_zk_coordinator_decode(data, size, &id, &listeners, NULL) == 0) {
        char *enc = fl_zk_coordinator_encode(id, listeners);
        char *id2, *listeners2;
        FUZZ_CHECK(fl_zk_coordinator_decode(enc, strlen(enc), &id2, &listeners2, NULL) == 0);
        FUZZ_CHECK(strcmp(id, id2) == 0 && strcmp(listeners, listeners2) == 0);
        fl_free(id);
        fl_free(listeners);
        fl_free(id2);
        fl_free(listeners2);
        free(enc);
    }
}

static void fuzz_numbers(const uint8_t *data, size_t size) {
    int64_t v;
    if (fl_zk_counter_decode(data, size, &v, NULL) == 0) {
        uint8_t out[8];
        fl_zk_counter_encode(v, out);
        FUZZ_CHECK(size == 8 && memcmp(out, data, 8) == 0);
    }
    int32_t e, e2;
    if (fl_zk_epoch_decode(data, size, &e, NULL) == 0) {
        char text[12];
        fl_zk_epoch_encode(e, text);
        FUZZ_CHECK(fl_zk_epoch_decode(text, strlen(text), &e2, NULL) == 0 && e == e2);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_db(data, size);
    fuzz_table(data, size);
    fuzz_partition(data, size);
    fuzz_assignment(data, size);
    fuzz_leader_isr(data, size);
    fuzz_servers(data, size);
    fuzz_numbers(data, size);
    return 0;
}
