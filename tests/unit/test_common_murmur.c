/*
 * test_common_murmur.c — Fluss bucketing against the vectors of
 * protocol.md §6.1 (from Fluss's BucketingFunctionTest and values re-run on
 * the Java logic).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common_murmur.h"

static void test_bucket_vectors(void **state) {
    (void)state;
    const uint8_t a[] = {0x00, 0x0A};
    assert_int_equal(fl_bucket_of(a, sizeof(a), 7), 1);
    const uint8_t b[] = {0x00, 0x0A, 0x0A, 0x0A};
    assert_int_equal(fl_bucket_of(b, sizeof(b), 12), 0);
    const char *uuid = "2bb87d68-baf9-4e64-90f9-f80910419fa6";
    assert_int_equal(fl_bucket_of(uuid, strlen(uuid), 16), 6);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    assert_int_equal((uint32_t)fl_murmur_hash_bytes(fox, strlen(fox), FL_MURMUR_SEED), 0x1BC6F880u);
    assert_int_equal(fl_bucket_of(fox, strlen(fox), 8), 6);
}

static void test_hash_vectors(void **state) {
    (void)state;
    assert_int_equal((uint32_t)fl_murmur_hash_bytes("", 0, FL_MURMUR_SEED), 0x087FCD5Cu);
    assert_int_equal((uint32_t)fl_murmur_mix_int(42), 0x43A46E1Du);
    const uint8_t one[] = {0x01}; /* INT key 1, compacted */
    assert_int_equal((uint32_t)fl_murmur_hash_bytes(one, 1, FL_MURMUR_SEED), 0xE8F30D16u);
    assert_int_equal(fl_murmur_mix_int(fl_murmur_hash_bytes(one, 1, FL_MURMUR_SEED)), 1113307500);
    assert_int_equal(fl_bucket_of(one, 1, 8), 4);
    assert_int_equal(fl_bucket_of(one, 1, 16), 12);
    /* tail bytes >= 0x80 are sign-extended (the Java client's choice) */
    const uint8_t neg[] = {0x80, 0x01};
    assert_int_equal((uint32_t)fl_murmur_hash_bytes(neg, 2, FL_MURMUR_SEED), 0x660FC139u);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_vectors),
        cmocka_unit_test(test_hash_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
