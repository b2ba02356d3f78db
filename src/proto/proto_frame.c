/*
 * proto_frame.c — Fluss RPC frame codec (layout in proto_frame.h).
 */
#include "proto_frame.h"

enum fl_frame_status fl_frame_peek(const uint8_t *buf, size_t len,
                                   size_t frame_max, size_t *frame_bytes) {
    if (len < FL_FRAME_LEN_BYTES) return FL_FRAME_NEED_MORE;
    uint32_t n = fl_get_be32(buf);
    if (n > INT32_MAX || n > frame_max) return FL_FRAME_TOO_LARGE;
    size_t total = (size_t)n + FL_FRAME_LEN_BYTES;
    if (len < total) return FL_FRAME_NEED_MORE;
    *frame_bytes = total;
    return FL_FRAME_OK;
}

enum fl_frame_status fl_frame_parse_request(const uint8_t *frame, size_t len,
                                            fl_frame_request_t *out) {
    if (len < FL_FRAME_LEN_BYTES + FL_FRAME_REQUEST_HEADER_BYTES)
        return FL_FRAME_TOO_SHORT;
    const uint8_t *h = frame + FL_FRAME_LEN_BYTES;
    out->api_key = (int16_t)fl_get_be16(h);
    out->api_version = (int16_t)fl_get_be16(h + 2);
    out->request_id = (int32_t)fl_get_be32(h + 4);
    out->body = h + FL_FRAME_REQUEST_HEADER_BYTES;
    out->body_len = len - FL_FRAME_LEN_BYTES - FL_FRAME_REQUEST_HEADER_BYTES;
    return FL_FRAME_OK;
}

enum fl_frame_status fl_frame_parse_response(const uint8_t *frame, size_t len,
                                             fl_frame_response_t *out) {
    if (len < FL_FRAME_LEN_BYTES + 1) return FL_FRAME_TOO_SHORT;
    const uint8_t *h = frame + FL_FRAME_LEN_BYTES;
    out->type = h[0];
    if (out->type == FL_RESPONSE_SERVER_FAILURE) {
        out->request_id = -1;
        out->body = h + 1;
        out->body_len = len - FL_FRAME_LEN_BYTES - 1;
        return FL_FRAME_OK;
    }
    if (len < FL_FRAME_LEN_BYTES + FL_FRAME_RESPONSE_HEADER_BYTES)
        return FL_FRAME_TOO_SHORT;
    out->request_id = (int32_t)fl_get_be32(h + 1);
    out->body = h + FL_FRAME_RESPONSE_HEADER_BYTES;
    out->body_len = len - FL_FRAME_LEN_BYTES - FL_FRAME_RESPONSE_HEADER_BYTES;
    return FL_FRAME_OK;
}

void fl_frame_put_request_header(fl_buf_t *out, int16_t api_key,
                                 int16_t api_version, int32_t request_id,
                                 size_t body_len) {
    fl_buf_put_be32(out, (uint32_t)(body_len + FL_FRAME_REQUEST_HEADER_BYTES));
    fl_buf_put_be16(out, (uint16_t)api_key);
    fl_buf_put_be16(out, (uint16_t)api_version);
    fl_buf_put_be32(out, (uint32_t)request_id);
}

void fl_frame_put_response_header(fl_buf_t *out, uint8_t type,
                                  int32_t request_id, size_t body_len) {
    fl_buf_put_be32(out, (uint32_t)(body_len + FL_FRAME_RESPONSE_HEADER_BYTES));
    fl_buf_put_u8(out, type);
    fl_buf_put_be32(out, (uint32_t)request_id);
}
