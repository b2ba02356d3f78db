/*
 * common_murmur.h — Fluss's bucketing hash (FlussBucketingFunction with
 * MurmurHashUtils / MathUtils): MurmurHash3 x86_32 over 4-byte little-endian
 * words with seed 42 whose tail bytes are each mixed as a whole
 * sign-extended block (Flink's variant, not standard murmur3), then the
 * bucket is murmurHash(hash) % buckets. Clients pick buckets with it; the
 * server never checks placement.
 */
#ifndef FL_COMMON_MURMUR_H
#define FL_COMMON_MURMUR_H

#include <stddef.h>
#include <stdint.h>

#define FL_MURMUR_SEED 42

/* Hash of the encoded bucket key bytes. */
int32_t fl_murmur_hash_bytes(const void *data, size_t len, uint32_t seed);
/* MathUtils.murmurHash: re-mixes an int and returns a non-negative value. */
int32_t fl_murmur_mix_int(int32_t code);
/* The bucket of an encoded bucket key among n buckets. */
int32_t fl_bucket_of(const void *key, size_t len, int32_t n);

/* Standard MurmurHash3 x86_32 (tail bytes unsigned, one block): Iceberg's
 * bucket transform hash (guava's murmur3_32_fixed). */
uint32_t fl_murmur3_32(const void *data, size_t len, uint32_t seed);
/* Iceberg's bucket transform of an encoded key among n buckets:
 * (murmur3_32(key, seed 0) & INT_MAX) % n, as Fluss's
 * IcebergBucketingFunction picks buckets for ICEBERG lake tables. */
int32_t fl_iceberg_bucket_of(const void *key, size_t len, int32_t n);

#endif
