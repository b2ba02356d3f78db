/*
 * test_log_remote_manifest.c — the remote log manifest and its handle
 * (log_remote_manifest.h): the reference's JSON byte for byte, round
 * trips with and without a partition, every refusal of damaged input
 * (ids that could escape the bucket directory, overlaps, repeats, types,
 * ranges), and the queries a fetch and a timestamp lookup make.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "log_remote_manifest.h"

#define ID1 "0b8a4f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
#define ID2 "1c9b5a8f-2d3e-4f60-9bac-1d2e3f4a5b6c"
#define ID3 "2dac6b90-3e4f-4071-acbd-2e3f4a5b6c7d"

static fl_remote_segment_t seg(const char *id, int64_t start, int64_t end, int64_t ts,
                               int32_t size) {
    fl_remote_segment_t s;
    memset(&s, 0, sizeof(s));
    snprintf(s.id, sizeof(s.id), "%s", id);
    s.start_offset = start;
    s.end_offset = end;
    s.max_timestamp = ts;
    s.size_bytes = size;
    return s;
}

static void build(fl_remote_manifest_t *m, const char *partition) {
    fl_remote_bucket_t b = {"db", "orders", partition, 7, partition ? 3 : -1, 2};
    fl_remote_manifest_init(m, &b);
    fl_error_t err;
    fl_remote_segment_t s1 = seg(ID1, 0, 100, 1700000000000, 4096);
    fl_remote_segment_t s2 = seg(ID2, 100, 250, 1700000001000, 8000);
    fl_remote_segment_t s3 = seg(ID3, 250, 251, 1700000002000, 70);
    assert_int_equal(fl_remote_manifest_append(m, &s1, &err), 0);
    assert_int_equal(fl_remote_manifest_append(m, &s2, &err), 0);
    assert_int_equal(fl_remote_manifest_append(m, &s3, &err), 0);
}

static char *encode(const fl_remote_manifest_t *m) {
    fl_buf_t b;
    fl_buf_init(&b);
    fl_remote_manifest_encode(m, &b);
    fl_buf_put_u8(&b, 0);
    return (char *)b.data;
}

static void test_reference_json(void **state) {
    (void)state;
    fl_remote_manifest_t m;
    build(&m, "2024$eu");
    char *text = encode(&m);
    /* RemoteLogManifestJsonSerde's fields, in its order */
    assert_string_equal(
        text,
        "{\"version\":1,\"database\":\"db\",\"table\":\"orders\",\"partition_name\":\"2024$eu\","
        "\"table_id\":7,\"partition_id\":3,\"bucket_id\":2,\"remote_log_segments\":["
        "{\"segment_id\":\"" ID1 "\",\"start_offset\":0,\"end_offset\":100,"
        "\"max_timestamp\":1700000000000,\"size_in_bytes\":4096},"
        "{\"segment_id\":\"" ID2 "\",\"start_offset\":100,\"end_offset\":250,"
        "\"max_timestamp\":1700000001000,\"size_in_bytes\":8000},"
        "{\"segment_id\":\"" ID3 "\",\"start_offset\":250,\"end_offset\":251,"
        "\"max_timestamp\":1700000002000,\"size_in_bytes\":70}]}");
    fl_free(text);
    fl_remote_manifest_free(&m);
    build(&m, NULL);
    text = encode(&m);
    assert_non_null(strstr(text, "\"table\":\"orders\",\"table_id\":7,\"bucket_id\":2,"));
    assert_null(strstr(text, "partition"));
    fl_free(text);
    fl_remote_manifest_free(&m);
}

static void roundtrip(const char *partition) {
    fl_remote_manifest_t m, back;
    build(&m, partition);
    char *text = encode(&m);
    fl_error_t err;
    assert_int_equal(fl_remote_manifest_decode((const uint8_t *)text, strlen(text), &back, &err), 0);
    fl_remote_bucket_t b = {"db", "orders", partition, 7, partition ? 3 : -1, 2};
    assert_true(fl_remote_manifest_is_for(&back, &b));
    fl_remote_bucket_t other = {"db", "orders", partition, 7, partition ? 3 : -1, 1};
    assert_false(fl_remote_manifest_is_for(&back, &other));
    assert_int_equal(back.count, 3);
    assert_memory_equal(back.segments, m.segments, 3 * sizeof(*m.segments));
    assert_int_equal(fl_remote_manifest_start(&back), 0);
    assert_int_equal(fl_remote_manifest_end(&back), 251);
    assert_int_equal(fl_remote_manifest_bytes(&back), 4096 + 8000 + 70);
    fl_free(text);
    fl_remote_manifest_free(&m);
    fl_remote_manifest_free(&back);
}

static void test_roundtrip(void **state) {
    (void)state;
    roundtrip(NULL);
    roundtrip("2024$eu");
}

static void test_reads_reference_bytes(void **state) {
    (void)state;
    /* as Jackson writes it (spacing aside), upper-case hex accepted as
     * UUID.fromString does, unknown fields ignored */
    const char *json =
        "{ \"version\": 1, \"database\": \"fluss\", \"table\": \"t\", \"table_id\": 12,"
        " \"bucket_id\": 0, \"extra\": true, \"remote_log_segments\": [ {\"segment_id\":"
        " \"0B8A4F7E-1C2D-4E5F-8A9B-0C1D2E3F4A5B\", \"start_offset\": 5, \"end_offset\": 9,"
        " \"max_timestamp\": -1, \"size_in_bytes\": 0} ] }";
    fl_remote_manifest_t m;
    fl_error_t err;
    assert_int_equal(fl_remote_manifest_decode((const uint8_t *)json, strlen(json), &m, &err), 0);
    assert_string_equal(m.database, "fluss");
    assert_null(m.partition_name);
    assert_int_equal(m.partition_id, -1);
    assert_int_equal(m.table_id, 12);
    assert_int_equal(m.count, 1);
    assert_int_equal(m.segments[0].start_offset, 5);
    assert_int_equal(m.segments[0].max_timestamp, -1);
    fl_remote_manifest_free(&m);
}

static void expect_refused(const char *json) {
    fl_remote_manifest_t m;
    fl_error_t err;
    int rc = fl_remote_manifest_decode((const uint8_t *)json, strlen(json), &m, &err);
    if (rc != FLUSS_ERR__CORRUPT) fail_msg("accepted (%d): %s", rc, json);
    assert_int_equal(m.count, 0);
    assert_null(m.database);
}

#define HEAD "{\"version\":1,\"database\":\"db\",\"table\":\"t\",\"table_id\":1,\"bucket_id\":0,"
#define SEG(id, s, e) "{\"segment_id\":\"" id "\",\"start_offset\":" #s ",\"end_offset\":" #e \
                      ",\"max_timestamp\":1,\"size_in_bytes\":10}"

static void test_refusals(void **state) {
    (void)state;
    expect_refused("");
    expect_refused("[]");
    expect_refused("{\"version\":1}");
    expect_refused(HEAD "\"remote_log_segments\":[]} trailing");
    expect_refused("{\"version\":2,\"database\":\"db\",\"table\":\"t\",\"table_id\":1,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"../x\",\"table\":\"t\",\"table_id\":1,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"db\",\"table\":\"..\",\"table_id\":1,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"d\\u0000b\",\"table\":\"t\",\"table_id\":1,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"db\",\"table\":\"t\",\"partition_name\":\"p\","
                   "\"table_id\":1,\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"db\",\"table\":\"t\",\"table_id\":-1,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"db\",\"table\":\"t\",\"table_id\":1,"
                   "\"bucket_id\":2147483648,\"remote_log_segments\":[]}");
    expect_refused("{\"version\":1,\"database\":\"db\",\"table\":\"t\",\"table_id\":1.5,"
                   "\"bucket_id\":0,\"remote_log_segments\":[]}");
    expect_refused(HEAD "\"remote_log_segments\":{}}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG("../../../../etc", 0, 1) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1 "x", 0, 1) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG("0b8a4f7e/1c2d-4e5f-8a9b-0c1d2e3f4a5b", 0, 1) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1, 5, 5) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1, -1, 5) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1, 0, 10) "," SEG(ID2, 9, 20) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1, 10, 20) "," SEG(ID2, 0, 5) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[" SEG(ID1, 0, 10) "," SEG(ID1, 10, 20) "]}");
    expect_refused(HEAD "\"remote_log_segments\":[{\"segment_id\":\"" ID1 "\",\"start_offset\":0,"
                   "\"end_offset\":1,\"max_timestamp\":1,\"size_in_bytes\":2147483648}]}");
    expect_refused(HEAD "\"remote_log_segments\":[{\"segment_id\":\"" ID1 "\",\"start_offset\":0,"
                   "\"end_offset\":1,\"size_in_bytes\":1}]}");
    expect_refused(HEAD "\"remote_log_segments\":[1]}");
    expect_refused("{\"version\":1,\"version\":1,\"database\":\"db\",\"table\":\"t\","
                   "\"table_id\":1,\"bucket_id\":0,\"remote_log_segments\":[]}");
    /* a gap between segments is fine (tiering began after the log start) */
    const char *gap = HEAD "\"remote_log_segments\":[" SEG(ID1, 0, 10) "," SEG(ID2, 20, 30) "]}";
    fl_remote_manifest_t m;
    fl_error_t err;
    assert_int_equal(fl_remote_manifest_decode((const uint8_t *)gap, strlen(gap), &m, &err), 0);
    fl_remote_manifest_free(&m);
}

static void test_append_checks(void **state) {
    (void)state;
    fl_remote_manifest_t m;
    build(&m, NULL);
    fl_error_t err;
    fl_remote_segment_t overlap = seg("3ebd7ca1-4f50-4182-bdce-3f4a5b6c7d8e", 250, 300, 1, 1);
    assert_int_not_equal(fl_remote_manifest_append(&m, &overlap, &err), 0);
    fl_remote_segment_t bad = seg("not-a-uuid", 251, 300, 1, 1);
    assert_int_not_equal(fl_remote_manifest_append(&m, &bad, &err), 0);
    assert_int_equal(m.count, 3);
    fl_remote_manifest_drop_front(&m, 2);
    assert_int_equal(m.count, 1);
    assert_int_equal(fl_remote_manifest_start(&m), 250);
    fl_remote_manifest_drop_front(&m, 5);
    assert_int_equal(fl_remote_manifest_start(&m), INT64_MAX);
    assert_int_equal(fl_remote_manifest_end(&m), -1);
    fl_remote_manifest_free(&m);
}

static void test_relevant_and_time(void **state) {
    (void)state;
    fl_remote_manifest_t m;
    build(&m, NULL); /* [0,100) [100,250) [250,251) */
    assert_int_equal(fl_remote_manifest_relevant(&m, -2), 0);
    assert_int_equal(fl_remote_manifest_relevant(&m, 0), 0);
    assert_int_equal(fl_remote_manifest_relevant(&m, 99), 0);
    assert_int_equal(fl_remote_manifest_relevant(&m, 100), 1);
    assert_int_equal(fl_remote_manifest_relevant(&m, 249), 1);
    assert_int_equal(fl_remote_manifest_relevant(&m, 250), 2);
    assert_int_equal(fl_remote_manifest_relevant(&m, 251), 3);
    assert_int_equal(fl_remote_manifest_relevant(&m, 1000), 3);
    assert_int_equal(fl_remote_manifest_for_time(&m, 0), 0);
    assert_int_equal(fl_remote_manifest_for_time(&m, 1700000000500), 1);
    assert_int_equal(fl_remote_manifest_for_time(&m, 1700000002000), 2);
    assert_int_equal(fl_remote_manifest_for_time(&m, 1700000002001), 3);
    fl_remote_manifest_free(&m);
    fl_remote_manifest_init(&m, NULL);
    assert_int_equal(fl_remote_manifest_relevant(&m, 0), 0);
    fl_remote_manifest_free(&m);
}

static void test_handle(void **state) {
    (void)state;
    fl_buf_t b;
    fl_buf_init(&b);
    fl_remote_handle_encode("/remote/log/db/t-1/0/metadata/" ID1 ".manifest", 251, &b);
    fl_buf_put_u8(&b, 0);
    assert_string_equal((char *)b.data,
                        "{\"version\":1,\"remote_log_manifest_path\":\"/remote/log/db/t-1/0/"
                        "metadata/" ID1 ".manifest\",\"remote_log_end_offset\":251}");
    fl_remote_handle_t h;
    fl_error_t err;
    assert_int_equal(fl_remote_handle_decode(b.data, b.len - 1, &h, &err), 0);
    assert_int_equal(h.end_offset, 251);
    assert_non_null(strstr(h.manifest_path, ID1 ".manifest"));
    fl_remote_handle_free(&h);
    fl_buf_free(&b);
    const char *bad[] = {"{}", "{\"version\":1,\"remote_log_manifest_path\":\"\","
                               "\"remote_log_end_offset\":1}",
                         "{\"version\":1,\"remote_log_manifest_path\":\"x\","
                         "\"remote_log_end_offset\":-2}",
                         "{\"version\":3,\"remote_log_manifest_path\":\"x\","
                         "\"remote_log_end_offset\":1}",
                         "nope"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(fl_remote_handle_decode((const uint8_t *)bad[i], strlen(bad[i]), &h, &err),
                         FLUSS_ERR__CORRUPT);
}

static void test_uuid(void **state) {
    (void)state;
    char a[FL_UUID_TEXT_LEN + 1], b[FL_UUID_TEXT_LEN + 1];
    fl_uuid_random(a);
    fl_uuid_random(b);
    assert_true(fl_uuid_text_ok(a, strlen(a)));
    assert_string_not_equal(a, b);
    assert_int_equal(a[14], '4'); /* version 4 */
    assert_false(fl_uuid_text_ok("../0b8a4f7e-1c2d-4e5f-8a9b-0c1d2e3", 36));
    assert_false(fl_uuid_text_ok(ID1, 35));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_json),  cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_reads_reference_bytes), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_append_checks),   cmocka_unit_test(test_relevant_and_time),
        cmocka_unit_test(test_handle),          cmocka_unit_test(test_uuid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
