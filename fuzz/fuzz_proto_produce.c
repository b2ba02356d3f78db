/*
 * fuzz_proto_produce.c — the zero-copy ProduceLogRequest decoder
 * (proto_produce.h) against protobuf-c, differentially: the input is a
 * request body. Whenever the view accepts it, protobuf_c_message_unpack
 * must accept it too with the same acks, table id, timeout and buckets
 * (partition id, bucket id, records bytes), and every view records slice
 * must lie inside the input. The view may refuse what protobuf-c accepts
 * (the server then falls back to protobuf-c), never the reverse.
 */
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fluss_api.pb-c.h"
#include "proto_produce.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Fluss__ProduceLogRequest *v = NULL;
    if (fl_proto_produce_view(data, size, &v) != 0) return 0;
    Fluss__ProduceLogRequest *p = (Fluss__ProduceLogRequest *)protobuf_c_message_unpack(
        &fluss__produce_log_request__descriptor, NULL, size, data);
    FUZZ_CHECK(p != NULL);
    FUZZ_CHECK(v->acks == p->acks && v->table_id == p->table_id && v->timeout_ms == p->timeout_ms);
    FUZZ_CHECK(v->n_buckets_req == p->n_buckets_req);
    for (size_t i = 0; i < v->n_buckets_req; i++) {
        const Fluss__PbProduceLogReqForBucket *a = v->buckets_req[i], *b = p->buckets_req[i];
        FUZZ_CHECK(a->bucket_id == b->bucket_id);
        FUZZ_CHECK(a->has_partition_id == b->has_partition_id);
        FUZZ_CHECK(!a->has_partition_id || a->partition_id == b->partition_id);
        FUZZ_CHECK(a->records.len == b->records.len);
        FUZZ_CHECK(a->records.len == 0 ||
                   (a->records.data >= data && a->records.data + a->records.len <= data + size));
        FUZZ_CHECK(a->records.len == 0 || memcmp(a->records.data, b->records.data, a->records.len) == 0);
    }
    protobuf_c_message_free_unpacked(&p->base, NULL);
    fl_proto_produce_view_free(v);
    return 0;
}
