/*
 * lake_rle.h — Parquet's RLE/bit-packing hybrid (parquet-format
 * Encodings.md "Run Length Encoding / Bit-Packing Hybrid"), the encoding of
 * definition levels (bit width 1) and of dictionary indices (bit width up
 * to 32). No length prefix here: the caller adds the u32 of a level block
 * or the bit-width byte of a dictionary-indexed page.
 *
 *   run        := rle-run | bit-packed-run
 *   rle-run    := ULEB128(count << 1), value in ceil(width/8) bytes LE
 *   bit-packed := ULEB128(groups << 1 | 1), groups * 8 values, each `width`
 *                 bits, packed LSB first (0..7 at width 3 -> 88 C6 FA)
 *
 * Thread rule: none (pure functions).
 */
#ifndef FL_LAKE_RLE_H
#define FL_LAKE_RLE_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"
#include "common_error.h"

#define FL_RLE_WIDTH_MAX 32

/* The bit width that holds every value up to max_value (0 for 0). */
int fl_rle_bit_width(uint32_t max_value);

/* Appends n values of `width` bits (each < 2^width) as hybrid runs: runs
 * of 8 or more equal values as RLE runs, the rest bit-packed in groups of
 * 8 (the last group padded with zeros). */
void fl_rle_encode(fl_buf_t *out, const uint32_t *v, size_t n, int width);

/* Decodes exactly n values from p[0..len). *used (may be NULL) gets the
 * bytes consumed. FLUSS_ERR__CORRUPT when the runs end early or a width or
 * header is out of range. */
int fl_rle_decode(const uint8_t *p, size_t len, int width, uint32_t *out, size_t n, size_t *used,
                  fl_error_t *err);

#endif
