/*
 * arrow_validate.h — the structural check of the Arrow body of an ARROW log
 * batch against its table schema, done on PRODUCE_LOG before a batch is
 * stored (fluss-c is stricter here than Fluss 0.9.1, which checks only the
 * CRC): a batch we accept can always be fetched, projected (arrow_project.c)
 * and read by the clients' Arrow readers. No value is decoded and no
 * compressed buffer is inflated. Thread rule: none.
 */
#ifndef FL_ARROW_VALIDATE_H
#define FL_ARROW_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "types_datatype.h"

/* Checks that msg[0, len) is exactly one encapsulated RecordBatch message
 * (nothing after it) of `rows` rows whose field nodes and buffers fit the
 * columns column_types[0, column_count):
 *  - everything fl_arrow_message_parse checks; no variadicBufferCounts;
 *    buffers in body order without overlap;
 *  - as many nodes and buffers as the columns flatten to (arrow_layout.c);
 *  - each top-level node has exactly `rows` rows, and no nulls in a NOT NULL
 *    column; struct children at least their parent's length, list and map
 *    children at least the last offset (when the offsets are readable);
 *    no node longer than INT32_MAX;
 *  - each buffer long enough for its node: validity (when null_count > 0 or
 *    present) ceil(n / 8), fixed-width values n * width, BOOLEAN bits,
 *    offsets (n + 1) * 4; for STRING/BYTES/CHAR and ARRAY/MAP offsets that
 *    are readable (uncompressed, or stored raw in a compressed body) the
 *    first and last offset are ordered and the last one lies within the data
 *    buffer / child;
 *  - compressed buffers: empty, or an 8-byte prefix (−1 raw, 0 empty, else
 *    the uncompressed length, which the size checks above use) followed by
 *    exactly one whole LZ4 frame (header checksum, block sizes within the
 *    frame's block maximum, end mark, optional checksums; content size, when
 *    present, equal to the prefix) or whole ZSTD frame(s) (content sizes,
 *    when present, adding up to the prefix).
 * Not detected without inflating: corrupt bytes inside a well-framed LZ4
 * block or ZSTD block, and offsets of compressed offset buffers. Such a
 * batch is still stored, fetched and projected by the server (projection
 * copies buffers verbatim); only a client's decompression of it fails.
 * Errors: FLUSS_ERR_CORRUPT_RECORD_EXCEPTION with a message naming the
 * column and buffer; FLUSS_ERR__INVALID_ARG for a column type without an
 * Arrow layout; FLUSS_ERR__NO_MEMORY when no LZ4 context can be made. */
int fl_arrow_validate(const uint8_t *msg, size_t len, const fl_datatype_t *const *column_types,
                      size_t column_count, int64_t rows, fl_error_t *err);

#endif
