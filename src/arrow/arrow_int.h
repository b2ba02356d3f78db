/*
 * arrow_int.h — implementer header of the arrow module: what its files
 * share but callers do not need. Thread rule: none.
 */
#ifndef FL_ARROW_INT_H
#define FL_ARROW_INT_H

#include "arrow_ipc.h"

#define FL_ARROW_CONTINUATION 0xFFFFFFFFu
#define FL_ARROW_PREFIX_BYTES 8          /* continuation + metadata length */
#define FL_ARROW_STRUCT_BYTES 16         /* FieldNode and Buffer structs */
#define FL_ARROW_HEADER_RECORD_BATCH 3   /* MessageHeader union: Schema=1, DictionaryBatch=2, RecordBatch=3 */
#define FL_ARROW_LENGTH_PREFIX 8         /* int64 uncompressed length of a compressed buffer */
#define FL_ARROW_RAW_LENGTH (-1)         /* ... meaning "the bytes that follow are raw" */

/* Appends the continuation marker, the metadata length and a Message
 * flatbuffer (version, RecordBatch{rows, nodes, buffers, compression unless
 * NONE}, body_len) padded so the body that the caller appends next starts
 * 8-aligned relative to the message start. */
void fl_arrow_message_write_header(fl_buf_t *out, int16_t version, int64_t rows,
                                   const fl_arrow_node_t *nodes, size_t node_count,
                                   const fl_arrow_buffer_t *buffers, size_t buffer_count,
                                   fl_arrow_codec_t codec, int64_t body_len);

/* Buffers of a parsed view come in body order without overlap (what
 * padded lengths and projection rely on); CORRUPT_RECORD_EXCEPTION if not. */
int fl_arrow_check_buffer_order(const fl_arrow_batch_view_t *v, fl_error_t *err);

#endif
