/*
 * test_proto_produce.c — the zero-copy ProduceLogRequest view
 * (proto_produce.h): requests packed by protobuf-c come back with the same
 * fields and records pointing into the input; refusals for what the view
 * does not take (the server then asks protobuf-c); and a mutation run of
 * 200,000 inputs checking the rule the fuzz target checks: whatever the
 * view accepts, protobuf-c accepts with the same values.
 */
#include <protobuf-c/protobuf-c.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fluss_api.pb-c.h"
#include "proto_produce.h"

static uint8_t *pack_request(size_t nb, size_t *len) {
    static uint8_t recs[4][300];
    Fluss__PbProduceLogReqForBucket b[4];
    Fluss__PbProduceLogReqForBucket *bp[4];
    for (size_t i = 0; i < nb; i++) {
        Fluss__PbProduceLogReqForBucket init = FLUSS__PB_PRODUCE_LOG_REQ_FOR_BUCKET__INIT;
        b[i] = init;
        b[i].bucket_id = (int32_t)i + 3;
        b[i].has_partition_id = i % 2;
        b[i].partition_id = -5 - (int64_t)i;
        for (size_t k = 0; k < sizeof(recs[i]); k++) recs[i][k] = (uint8_t)(k * 31 + i);
        b[i].records.data = recs[i];
        b[i].records.len = 100 + 50 * i;
        bp[i] = &b[i];
    }
    Fluss__ProduceLogRequest r = FLUSS__PRODUCE_LOG_REQUEST__INIT;
    r.acks = -1;
    r.table_id = 1234567890123LL;
    r.timeout_ms = 30000;
    r.n_buckets_req = nb;
    r.buckets_req = bp;
    *len = protobuf_c_message_get_packed_size(&r.base);
    uint8_t *out = malloc(*len);
    protobuf_c_message_pack(&r.base, out);
    return out;
}

static void test_view_matches_protobuf_c(void **state) {
    (void)state;
    for (size_t nb = 0; nb <= 4; nb++) {
        size_t len;
        uint8_t *body = pack_request(nb, &len);
        Fluss__ProduceLogRequest *v;
        assert_int_equal(fl_proto_produce_view(body, len, &v), 0);
        assert_int_equal(v->acks, -1);
        assert_int_equal(v->table_id, 1234567890123LL);
        assert_int_equal(v->timeout_ms, 30000);
        assert_int_equal(v->n_buckets_req, nb);
        for (size_t i = 0; i < nb; i++) {
            const Fluss__PbProduceLogReqForBucket *b = v->buckets_req[i];
            assert_int_equal(b->bucket_id, (int32_t)i + 3);
            assert_int_equal(b->has_partition_id, (int)(i % 2));
            if (b->has_partition_id) assert_int_equal(b->partition_id, -5 - (int64_t)i);
            assert_int_equal(b->records.len, 100 + 50 * i);
            /* a view: the bytes are the input's own */
            assert_true(b->records.data > body && b->records.data + b->records.len <= body + len);
            assert_int_equal(b->records.data[7], (uint8_t)(7 * 31 + i));
        }
        fl_proto_produce_view_free(v);
        free(body);
    }
}

static void test_view_refuses_what_it_does_not_take(void **state) {
    (void)state;
    Fluss__ProduceLogRequest *v;
    /* acks as a 32-bit fixed field instead of a varint */
    const uint8_t wrong_type[] = {0x0d, 1, 0, 0, 0, 0x10, 1, 0x18, 1};
    assert_int_equal(fl_proto_produce_view(wrong_type, sizeof(wrong_type), &v), -1);
    /* timeout_ms missing */
    const uint8_t missing[] = {0x08, 1, 0x10, 1};
    assert_int_equal(fl_proto_produce_view(missing, sizeof(missing), &v), -1);
    /* a bucket without records */
    const uint8_t no_records[] = {0x08, 1, 0x10, 1, 0x18, 1, 0x22, 2, 0x10, 0};
    assert_int_equal(fl_proto_produce_view(no_records, sizeof(no_records), &v), -1);
    /* a length past the end */
    const uint8_t cut[] = {0x08, 1, 0x10, 1, 0x18, 1, 0x22, 50, 0x10};
    assert_int_equal(fl_proto_produce_view(cut, sizeof(cut), &v), -1);
    /* a group (wire type 3) */
    const uint8_t group[] = {0x08, 1, 0x10, 1, 0x18, 1, 0x2b, 0x2c};
    assert_int_equal(fl_proto_produce_view(group, sizeof(group), &v), -1);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_mutations_never_looser_than_protobuf_c(void **state) {
    (void)state;
    size_t len;
    uint8_t *seed = pack_request(3, &len);
    uint8_t *buf = malloc(len + 64);
    size_t accepted = 0;
    for (int round = 0; round < 200000; round++) {
        size_t n = len;
        memcpy(buf, seed, len);
        int edits = 1 + (int)(next_rand() % 4);
        for (int e = 0; e < edits; e++) {
            uint64_t r = next_rand();
            switch (r % 4) {
            case 0: buf[r / 4 % n] = (uint8_t)(r >> 32); break;        /* a byte */
            case 1: buf[r / 4 % n] ^= (uint8_t)(1u << (r >> 40) % 8); break; /* a bit */
            case 2: if (n > 1) n -= 1 + (size_t)(r / 4 % (n < 8 ? n - 1 : 8)); break; /* cut */
            default: if (n < len + 60) buf[n++] = (uint8_t)(r >> 24); break; /* append */
            }
        }
        Fluss__ProduceLogRequest *v;
        if (fl_proto_produce_view(buf, n, &v) != 0) continue;
        accepted++;
        Fluss__ProduceLogRequest *p = (Fluss__ProduceLogRequest *)protobuf_c_message_unpack(
            &fluss__produce_log_request__descriptor, NULL, n, buf);
        assert_non_null(p);
        assert_true(v->acks == p->acks && v->table_id == p->table_id &&
                    v->timeout_ms == p->timeout_ms);
        assert_int_equal(v->n_buckets_req, p->n_buckets_req);
        for (size_t i = 0; i < v->n_buckets_req; i++) {
            const Fluss__PbProduceLogReqForBucket *a = v->buckets_req[i], *b = p->buckets_req[i];
            assert_int_equal(a->bucket_id, b->bucket_id);
            assert_int_equal(a->has_partition_id, b->has_partition_id);
            if (a->has_partition_id) assert_int_equal(a->partition_id, b->partition_id);
            assert_int_equal(a->records.len, b->records.len);
            if (a->records.len) assert_memory_equal(a->records.data, b->records.data, a->records.len);
        }
        protobuf_c_message_free_unpacked(&p->base, NULL);
        fl_proto_produce_view_free(v);
    }
    assert_true(accepted > 1000); /* the run compared something */
    free(buf);
    free(seed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_matches_protobuf_c),
        cmocka_unit_test(test_view_refuses_what_it_does_not_take),
        cmocka_unit_test(test_mutations_never_looser_than_protobuf_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
