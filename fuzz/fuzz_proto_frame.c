/*
 * fuzz_proto_frame.c — fuzzes the Fluss RPC frame layer (proto_frame.h)
 * and the protobuf-c request and response decoders behind it. The input is
 * a byte stream as a peer would send it: it is cut into frames with
 * fl_frame_peek, each frame is parsed as a request and its body unpacked
 * with the request message of its API key (every key proto_api.h defines),
 * and parsed again as a response whose body is unpacked as ErrorResponse
 * (type 1) or as the response message of an API chosen by the request id
 * (type 0), since a response frame does not name its API.
 *
 * Invariants checked: peek never sizes a frame past the input or under the
 * length field; parsed header fields and body views stay inside the frame.
 */
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fluss_api.pb-c.h"
#include "proto_api.h"
#include "proto_frame.h"
#include "fuzz_common.h"

#define FUZZ_FRAME_MAX (1u << 20)


static void fuzz_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *body, size_t len) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, body);
    if (!m) return;
    /* A decoded message is valid and packs again to its computed size. */
    FUZZ_CHECK(protobuf_c_message_check(m));
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *out = malloc(n ? n : 1);
    FUZZ_CHECK(out != NULL);
    FUZZ_CHECK(protobuf_c_message_pack(m, out) == n);
    free(out);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void fuzz_request(const uint8_t *frame, size_t len) {
    fl_frame_request_t req;
    if (fl_frame_parse_request(frame, len, &req) != FL_FRAME_OK) {
        FUZZ_CHECK(len < FL_FRAME_LEN_BYTES + FL_FRAME_REQUEST_HEADER_BYTES);
        return;
    }
    FUZZ_CHECK(req.body == frame + FL_FRAME_LEN_BYTES + FL_FRAME_REQUEST_HEADER_BYTES);
    FUZZ_CHECK(req.body + req.body_len == frame + len);
    const fl_api_info_t *info = fl_api_info(req.api_key);
    const fuzz_api_messages_t *api = fuzz_api_find(req.api_key);
    /* Every key the API table defines has its messages here, and no other. */
    FUZZ_CHECK((info == NULL) == (api == NULL));
    if (info) FUZZ_CHECK(info->key == req.api_key && info->min_version <= info->max_version);
    if (api) fuzz_unpack(api->request, req.body, req.body_len);
}

static void fuzz_response(const uint8_t *frame, size_t len) {
    fl_frame_response_t resp;
    if (fl_frame_parse_response(frame, len, &resp) != FL_FRAME_OK) return;
    FUZZ_CHECK(resp.body >= frame && resp.body + resp.body_len == frame + len);
    if (resp.type == FL_RESPONSE_ERROR || resp.type == FL_RESPONSE_SERVER_FAILURE) {
        fuzz_unpack(&fluss__error_response__descriptor, resp.body, resp.body_len);
    } else if (resp.type == FL_RESPONSE_SUCCESS) {
        size_t i = (uint32_t)resp.request_id % FUZZ_API_COUNT;
        fuzz_unpack(fuzz_api_messages[i].response, resp.body, resp.body_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t pos = 0;
    while (pos < size) {
        size_t frame_bytes = 0;
        enum fl_frame_status st = fl_frame_peek(data + pos, size - pos, FUZZ_FRAME_MAX,
                                                &frame_bytes);
        if (st != FL_FRAME_OK) {
            FUZZ_CHECK(st == FL_FRAME_NEED_MORE || st == FL_FRAME_TOO_LARGE);
            break;
        }
        FUZZ_CHECK(frame_bytes >= FL_FRAME_LEN_BYTES && frame_bytes <= size - pos);
        FUZZ_CHECK(frame_bytes <= FUZZ_FRAME_MAX + FL_FRAME_LEN_BYTES);
        fuzz_request(data + pos, frame_bytes);
        fuzz_response(data + pos, frame_bytes);
        pos += frame_bytes;
    }
    return 0;
}
