/*
 * test_proto_frame.c — the Fluss RPC frame codec (proto_frame.h): peek tells
 * "need more" from "too large", the header parsers read big-endian fields,
 * the writers round trip with the parsers, and the Java client's first
 * request (reference protocol.md §1.2) parses and its body decodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_buf.h"
#include "fluss_api.pb-c.h"
#include "proto_frame.h"

/* The Java client's first request on every connection: API_VERSIONS v0,
 * request id 0, body {1:"fluss", 2:"0.1.0"}. */
static const uint8_t java_first_request[] = {
    0x00, 0x00, 0x00, 0x16, 0x03, 0xE8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0A,
    0x05, 0x66, 0x6C, 0x75, 0x73, 0x73, 0x12, 0x05, 0x30, 0x2E, 0x31, 0x2E, 0x30,
};

static void test_peek_need_more_below_length_field(void **state) {
    (void)state;
    size_t bytes = 12345;
    for (size_t len = 0; len < FL_FRAME_LEN_BYTES; len++) {
        assert_int_equal(fl_frame_peek(java_first_request, len, 1024, &bytes),
                         FL_FRAME_NEED_MORE);
        assert_int_equal(bytes, 12345); /* untouched */
    }
}

static void test_peek_need_more_partial_body(void **state) {
    (void)state;
    size_t bytes = 0;
    for (size_t len = FL_FRAME_LEN_BYTES; len < sizeof(java_first_request); len++)
        assert_int_equal(fl_frame_peek(java_first_request, len, 1024, &bytes),
                         FL_FRAME_NEED_MORE);
}

static void test_peek_ok_exact_size(void **state) {
    (void)state;
    size_t bytes = 0;
    assert_int_equal(fl_frame_peek(java_first_request, sizeof(java_first_request), 1024, &bytes),
                     FL_FRAME_OK);
    assert_int_equal(bytes, sizeof(java_first_request));
    assert_int_equal(bytes, 0x16 + 4);
    /* frame_max is inclusive: a body of exactly frame_max bytes is fine */
    bytes = 0;
    assert_int_equal(fl_frame_peek(java_first_request, sizeof(java_first_request), 0x16, &bytes),
                     FL_FRAME_OK);
    assert_int_equal(bytes, 26);
    /* an empty frame (length 0) is 4 bytes */
    const uint8_t empty[4] = {0, 0, 0, 0};
    assert_int_equal(fl_frame_peek(empty, 4, 1024, &bytes), FL_FRAME_OK);
    assert_int_equal(bytes, 4);
}

static void test_peek_too_large(void **state) {
    (void)state;
    size_t bytes = 777;
    /* one byte over the limit, even with only the length field available */
    assert_int_equal(fl_frame_peek(java_first_request, 4, 0x15, &bytes), FL_FRAME_TOO_LARGE);
    uint8_t big[4];
    fl_put_be32(big, 1000001);
    assert_int_equal(fl_frame_peek(big, 4, 1000000, &bytes), FL_FRAME_TOO_LARGE);
    fl_put_be32(big, 1000000);
    assert_int_equal(fl_frame_peek(big, 4, 1000000, &bytes), FL_FRAME_NEED_MORE);
    /* the top bit set is a negative Java int: too large even with no limit */
    const uint8_t neg[4] = {0x80, 0x00, 0x00, 0x10};
    assert_int_equal(fl_frame_peek(neg, 4, SIZE_MAX, &bytes), FL_FRAME_TOO_LARGE);
    const uint8_t all[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(fl_frame_peek(all, 4, SIZE_MAX, &bytes), FL_FRAME_TOO_LARGE);
    assert_int_equal(bytes, 777);
}

static void test_peek_two_frames_back_to_back(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_buf_append(&b, java_first_request, sizeof(java_first_request));
    const uint8_t body2[3] = {0xAA, 0xBB, 0xCC};
    fl_frame_put_request_header(&b, 1007, 0, 1, sizeof(body2));
    fl_buf_append(&b, body2, sizeof(body2));

    size_t first = 0, second = 0;
    assert_int_equal(fl_frame_peek(b.data, b.len, 1024, &first), FL_FRAME_OK);
    assert_int_equal(first, sizeof(java_first_request));
    assert_int_equal(fl_frame_peek(b.data + first, b.len - first, 1024, &second), FL_FRAME_OK);
    assert_int_equal(second, 4 + 8 + 3);
    assert_int_equal(first + second, b.len);

    fl_frame_request_t r;
    assert_int_equal(fl_frame_parse_request(b.data + first, second, &r), FL_FRAME_OK);
    assert_int_equal(r.api_key, 1007);
    assert_int_equal(r.request_id, 1);
    assert_int_equal(r.body_len, 3);
    assert_memory_equal(r.body, body2, 3);
    /* the second frame minus one byte still needs more */
    assert_int_equal(fl_frame_peek(b.data + first, second - 1, 1024, &second),
                     FL_FRAME_NEED_MORE);
    fl_buf_free(&b);
}

static void test_java_first_request(void **state) {
    (void)state;
    fl_frame_request_t r;
    memset(&r, 0xEE, sizeof(r));
    assert_int_equal(fl_frame_parse_request(java_first_request, sizeof(java_first_request), &r),
                     FL_FRAME_OK);
    assert_int_equal(r.api_key, 1000);
    assert_int_equal(r.api_version, 0);
    assert_int_equal(r.request_id, 0);
    assert_ptr_equal(r.body, java_first_request + 12);
    assert_int_equal(r.body_len, 14);

    Fluss__ApiVersionsRequest *m = fluss__api_versions_request__unpack(NULL, r.body_len, r.body);
    assert_non_null(m);
    assert_string_equal(m->client_software_name, "fluss");
    assert_string_equal(m->client_software_version, "0.1.0");
    fluss__api_versions_request__free_unpacked(m, NULL);
}

static void test_parse_request_big_endian_fields(void **state) {
    (void)state;
    const uint8_t f[] = {0x00, 0x00, 0x00, 0x09, 0x12, 0x34, 0x56, 0x78,
                         0x9A, 0xBC, 0xDE, 0xF0, 0x42};
    fl_frame_request_t r;
    assert_int_equal(fl_frame_parse_request(f, sizeof(f), &r), FL_FRAME_OK);
    assert_int_equal(r.api_key, 0x1234);
    assert_int_equal(r.api_version, 0x5678);
    assert_int_equal((uint32_t)r.request_id, 0x9ABCDEF0u);
    assert_true(r.request_id < 0);
    assert_int_equal(r.body_len, 1);
    assert_int_equal(r.body[0], 0x42);

    const uint8_t neg[] = {0, 0, 0, 8, 0x03, 0xE8, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_int_equal(fl_frame_parse_request(neg, sizeof(neg), &r), FL_FRAME_OK);
    assert_int_equal(r.request_id, -1);
    assert_int_equal(r.api_version, 1);
    assert_int_equal(r.body_len, 0);
}

static void test_parse_too_short(void **state) {
    (void)state;
    fl_frame_request_t r;
    fl_frame_response_t p;
    for (size_t len = 0; len < 12; len++)
        assert_int_equal(fl_frame_parse_request(java_first_request, len, &r),
                         FL_FRAME_TOO_SHORT);
    assert_int_equal(fl_frame_parse_request(java_first_request, 12, &r), FL_FRAME_OK);
    assert_int_equal(r.body_len, 0);

    const uint8_t ok[] = {0, 0, 0, 5, 0, 0, 0, 0, 7};
    for (size_t len = 0; len < sizeof(ok); len++)
        assert_int_equal(fl_frame_parse_response(ok, len, &p), FL_FRAME_TOO_SHORT);
    assert_int_equal(fl_frame_parse_response(ok, sizeof(ok), &p), FL_FRAME_OK);
    assert_int_equal(p.request_id, 7);
    assert_int_equal(p.body_len, 0);
}

static void test_parse_response_fields(void **state) {
    (void)state;
    const uint8_t err[] = {0, 0, 0, 7, 1, 0x80, 0x00, 0x00, 0x17, 0x08, 0x07};
    fl_frame_response_t p;
    assert_int_equal(fl_frame_parse_response(err, sizeof(err), &p), FL_FRAME_OK);
    assert_int_equal(p.type, FL_RESPONSE_ERROR);
    assert_int_equal((uint32_t)p.request_id, 0x80000017u);
    assert_int_equal(p.body_len, 2);
    assert_int_equal(p.body[0], 0x08);
    assert_int_equal(p.body[1], 0x07);

    /* server failure: no request id, the body follows the type byte */
    const uint8_t fail[] = {0, 0, 0, 3, 2, 0x0A, 0x00};
    assert_int_equal(fl_frame_parse_response(fail, sizeof(fail), &p), FL_FRAME_OK);
    assert_int_equal(p.type, FL_RESPONSE_SERVER_FAILURE);
    assert_int_equal(p.request_id, -1);
    assert_int_equal(p.body_len, 2);
    assert_ptr_equal(p.body, fail + 5);
}

static void test_request_writer_round_trip(void **state) {
    (void)state;
    const int16_t keys[] = {1000, 1007, 0, -2, INT16_MAX};
    const int32_t ids[] = {0, 1, -1, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        fl_buf_t b;
        fl_buf_init(&b);
        uint8_t body[17];
        for (size_t k = 0; k < sizeof(body); k++) body[k] = (uint8_t)(k * 7 + i);
        fl_frame_put_request_header(&b, keys[i], (int16_t)i, ids[i], sizeof(body));
        assert_int_equal(b.len, 12);
        fl_buf_append(&b, body, sizeof(body));
        size_t n = 0;
        assert_int_equal(fl_frame_peek(b.data, b.len, 1 << 20, &n), FL_FRAME_OK);
        assert_int_equal(n, b.len);
        fl_frame_request_t r;
        assert_int_equal(fl_frame_parse_request(b.data, n, &r), FL_FRAME_OK);
        assert_int_equal(r.api_key, keys[i]);
        assert_int_equal(r.api_version, (int16_t)i);
        assert_int_equal(r.request_id, ids[i]);
        assert_int_equal(r.body_len, sizeof(body));
        assert_memory_equal(r.body, body, sizeof(body));
        fl_buf_free(&b);
    }
    /* the writer reproduces the Java client's bytes */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_frame_put_request_header(&b, 1000, 0, 0, 14);
    fl_buf_append(&b, java_first_request + 12, 14);
    assert_int_equal(b.len, sizeof(java_first_request));
    assert_memory_equal(b.data, java_first_request, b.len);
    fl_buf_free(&b);
}

static void test_response_writer_round_trip(void **state) {
    (void)state;
    const uint8_t types[] = {FL_RESPONSE_SUCCESS, FL_RESPONSE_ERROR};
    const int32_t ids[] = {23, -5};
    for (size_t i = 0; i < 2; i++) {
        fl_buf_t b;
        fl_buf_init(&b);
        const uint8_t body[] = {0x08, 0x07, 0x12, 0x01, 0x41};
        fl_frame_put_response_header(&b, types[i], ids[i], sizeof(body));
        assert_int_equal(b.len, 9);
        assert_int_equal(fl_get_be32(b.data), 5 + sizeof(body));
        fl_buf_append(&b, body, sizeof(body));
        size_t n = 0;
        assert_int_equal(fl_frame_peek(b.data, b.len, 64, &n), FL_FRAME_OK);
        assert_int_equal(n, b.len);
        fl_frame_response_t p;
        assert_int_equal(fl_frame_parse_response(b.data, n, &p), FL_FRAME_OK);
        assert_int_equal(p.type, types[i]);
        assert_int_equal(p.request_id, ids[i]);
        assert_int_equal(p.body_len, sizeof(body));
        assert_memory_equal(p.body, body, sizeof(body));
        fl_buf_free(&b);
    }
    /* golden: GET_TABLE_INFO error response header 00 00 00 2f | 01 00 00 00 17 */
    fl_buf_t b;
    fl_buf_init(&b);
    fl_frame_put_response_header(&b, FL_RESPONSE_ERROR, 23, 42);
    const uint8_t want[] = {0x00, 0x00, 0x00, 0x2f, 0x01, 0x00, 0x00, 0x00, 0x17};
    assert_int_equal(b.len, sizeof(want));
    assert_memory_equal(b.data, want, sizeof(want));
    fl_buf_free(&b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peek_need_more_below_length_field),
        cmocka_unit_test(test_peek_need_more_partial_body),
        cmocka_unit_test(test_peek_ok_exact_size),
        cmocka_unit_test(test_peek_too_large),
        cmocka_unit_test(test_peek_two_frames_back_to_back),
        cmocka_unit_test(test_java_first_request),
        cmocka_unit_test(test_parse_request_big_endian_fields),
        cmocka_unit_test(test_parse_too_short),
        cmocka_unit_test(test_parse_response_fields),
        cmocka_unit_test(test_request_writer_round_trip),
        cmocka_unit_test(test_response_writer_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
