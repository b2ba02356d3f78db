/*
 * common_crc32c.h — CRC-32C (Castagnoli), the checksum of Fluss record
 * batches (same as java.util.zip.CRC32C and Kafka). Uses the SSE4.2 crc32
 * instruction when the CPU has it, a slicing table otherwise.
 */
#ifndef FL_COMMON_CRC32C_H
#define FL_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* crc of data continuing from crc (start with 0). */
uint32_t fl_crc32c(uint32_t crc, const void *data, size_t len);

#endif
