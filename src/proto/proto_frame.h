/*
 * proto_frame.h — the Fluss RPC frame layer, sans I/O.
 *
 * Byte layout (all big-endian):
 *
 *   request  | 0..3 int32 frame length N (bytes after this field)
 *            | 4..5 int16 api_key | 6..7 int16 api_version
 *            | 8..11 int32 request_id | 12.. protobuf body (N - 8 bytes)
 *   response | 0..3 int32 frame length N
 *            | 4 int8 response type (0 success, 1 error, 2 server failure)
 *            | 5..8 int32 request_id | 9.. protobuf body (N - 5 bytes)
 *
 * Server failure frames (type 2, no request id) are never written by us:
 * pyfluss mis-parses them. Decoders only read from the given span and tell
 * "need more bytes" from "corrupt".
 */
#ifndef FL_PROTO_FRAME_H
#define FL_PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "common_buf.h"

#define FL_FRAME_LEN_BYTES 4
#define FL_FRAME_REQUEST_HEADER_BYTES 8
#define FL_FRAME_RESPONSE_HEADER_BYTES 5

enum fl_frame_status {
    FL_FRAME_OK = 0,
    FL_FRAME_NEED_MORE = 1,
    FL_FRAME_TOO_LARGE = 2, /* declared length is negative or over the limit */
    FL_FRAME_TOO_SHORT = 3, /* frame too short to hold its header */
};

enum fl_response_type {
    FL_RESPONSE_SUCCESS = 0,
    FL_RESPONSE_ERROR = 1,
    FL_RESPONSE_SERVER_FAILURE = 2,
};

typedef struct fl_frame_request {
    int16_t api_key;
    int16_t api_version;
    int32_t request_id;
    const uint8_t *body; /* view into the caller's buffer */
    size_t body_len;
} fl_frame_request_t;

typedef struct fl_frame_response {
    uint8_t type;
    int32_t request_id;
    const uint8_t *body;
    size_t body_len;
} fl_frame_response_t;

/* Looks at the start of buf. On FL_FRAME_OK *frame_bytes is the size of the
 * whole frame including its length field. */
enum fl_frame_status fl_frame_peek(const uint8_t *buf, size_t len,
                                   size_t frame_max, size_t *frame_bytes);

/* Parses one whole frame (as sized by fl_frame_peek). */
enum fl_frame_status fl_frame_parse_request(const uint8_t *frame, size_t len,
                                            fl_frame_request_t *out);
enum fl_frame_status fl_frame_parse_response(const uint8_t *frame, size_t len,
                                             fl_frame_response_t *out);

/* Writers append a header whose length covers body_len more bytes, which
 * the caller appends next. */
void fl_frame_put_request_header(fl_buf_t *out, int16_t api_key,
                                 int16_t api_version, int32_t request_id,
                                 size_t body_len);
void fl_frame_put_response_header(fl_buf_t *out, uint8_t type,
                                  int32_t request_id, size_t body_len);

#endif
