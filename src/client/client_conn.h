/*
 * client_conn.h — one blocking connection of libfluss to a Fluss server:
 * connect, API_VERSIONS handshake, then request/response with timeouts.
 * Not thread-safe (one owner).
 */
#ifndef FL_CLIENT_CONN_H
#define FL_CLIENT_CONN_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "common_error.h"

typedef struct fl_client_conn {
    int fd;
    int32_t next_request_id;
    int timeout_ms;
    int server_type; /* 1 coordinator, 2 tablet server, 0 unknown */
} fl_client_conn_t;

int fl_client_conn_open(fl_client_conn_t *c, const char *host, int port, int timeout_ms,
                        fl_error_t *err);
void fl_client_conn_close(fl_client_conn_t *c);
/* Sends req as api_key v0 and decodes the answer with resp_desc into
 * *resp (free with protobuf_c_message_free_unpacked). An ERROR_RESPONSE
 * returns its code with the server's message in err. */
int fl_client_conn_call(fl_client_conn_t *c, int16_t api_key, const ProtobufCMessage *req,
                        const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                        fl_error_t *err);
/* Splits "host:port". */
int fl_client_parse_hostport(const char *s, char *host, size_t host_cap, int *port,
                             fl_error_t *err);

#endif
