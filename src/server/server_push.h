/*
 * server_push.h — the coordinator's messages to its tablet servers: what
 * Fluss's CoordinatorRequestBatch sends, built from the metadata store's
 * tables and sent over one rpc_client per tablet server (an in-process
 * connection in local mode, the internal listener in a cluster).
 *
 * A table created or changed becomes one UPDATE_METADATA to every tablet
 * server (the table whole: its entry, every schema by id in fluss-c's
 * field 1000, every partition) and one NOTIFY_LEADER_AND_ISR to each
 * server holding a replica of one of its buckets. A table or partition
 * that is gone becomes STOP_REPLICA (delete, deleteRemote) for each of its
 * buckets to the servers holding them, before the UPDATE_METADATA that
 * forgets it (DELETED_TABLE_ID for a table). To know what is gone, the
 * push keeps the assignment it last sent of every table (Fluss's
 * CoordinatorContext).
 *
 * Messages are queued in order by the fl_push_table* calls, which run
 * under the coordinator's lock (they read the store's views), and sent by
 * fl_push_flush, which runs without it and returns once every message
 * queued before it was answered (or failed: that is logged), or after a
 * second at most: a tablet server that stopped answering does not hold
 * the coordinator's next election. Sends keep
 * the queue's order on every connection; a tablet server applies them in
 * that order on one thread.
 *
 * Thread rule: any thread; fl_push_flush never from a loop thread.
 */
#ifndef FL_SERVER_PUSH_H
#define FL_SERVER_PUSH_H

#include "coordinator_lake.h"
#include "metastore.h"
#include "rpc_client.h"
#include "server_node.h"

typedef struct fl_push fl_push_t;

/* epoch: the coordinator epoch its UPDATE_METADATA, NOTIFY_LEADER_AND_ISR
 * and STOP_REPLICA carry (tablet servers fence older ones). */
/* lake: the cluster's lake settings, shown in lake tables' descriptors
 * (coordinator_lake.h); borrowed, may be NULL. */
fl_push_t *fl_push_new(const fl_endpoint_t *coordinator, int32_t epoch,
                       const fl_lake_config_t *lake);
/* Registers a tablet server and the client that reaches it (taken);
 * listeners: what it registered ("NAME://host:port,..."; NULL in local
 * mode), passed on to every tablet server (PbServerNode.listeners) so
 * followers find their leaders' internal listeners. */
void fl_push_add_tablet(fl_push_t *p, const fl_endpoint_t *ep, const char *listeners,
                        fl_rpc_client_t *client);
/* A tablet server left: its client is destroyed (what was sent on it
 * fails); nothing more is sent to it. Not from the client's loop. */
void fl_push_remove_tablet(fl_push_t *p, int32_t id);
/* The registered tablet servers a message went unanswered to (the
 * connection failed or timed out; a refusal is an answer) since the last
 * call: up to cap ids into ids, their marks cleared. Every other message
 * holds a table whole, so telling such a server its missed drops and
 * every table again (as one that joins) makes good whatever it missed:
 * an unanswered message never arrived (its connection failed) or was
 * written ahead of the new ones on the same connection. */
size_t fl_push_take_behind(fl_push_t *p, int32_t *ids, size_t cap);
/* Queues again, for tablet server id (one fl_push_take_behind gave), the
 * drops it may have missed as they were (STOP_REPLICA, a dropped table's
 * UPDATE_METADATA: final, since table and partition ids are never used
 * again) and an UPDATE_METADATA with the servers. The caller then queues
 * every table to it (fl_push_table_to) and flushes. */
void fl_push_resend_to(fl_push_t *p, int32_t id);
/* Sends a request to tablet server id (fl_server_send_fn's shape, ctx a
 * fl_push_send_ctx_t): on its client, or, when it is not registered, cb
 * at once with FLUSS_ERR__TRANSPORT. For requests other than the push's
 * own messages (a lake tiering round's). */
typedef struct fl_push_send_ctx {
    fl_push_t *push;
    int32_t tablet_id;
} fl_push_send_ctx_t;
void fl_push_send(void *ctx, int16_t api_key, const uint8_t *body, size_t len, fl_rpc_reply_fn cb,
                  void *arg);
/* The registered tablet servers' endpoints. */
size_t fl_push_tablets(fl_push_t *p, fl_endpoint_t *out, size_t cap);

/* The coordinator's endpoint changed (its port is known once it listens):
 * queues an UPDATE_METADATA with the servers and no table. */
void fl_push_set_coordinator(fl_push_t *p, const fl_endpoint_t *coordinator);
/* Queues an UPDATE_METADATA with the servers and no table, to every
 * tablet server (one came or went). */
void fl_push_servers(fl_push_t *p);
/* Queues the messages for a created or changed table (its partitions
 * that disappeared since the last push are stopped first). */
void fl_push_table(fl_push_t *p, const fl_ms_table_t *t);
/* The same, to one tablet server only (one that just joined). */
void fl_push_table_to(fl_push_t *p, const fl_ms_table_t *t, int32_t tablet_id);
/* NOTIFY_KV_SNAPSHOT_OFFSET to the followers of bucket b (of table_id,
 * partition_id, bucket): a snapshot committed up to offset, below which
 * their copy of the changelog may go. */
void fl_push_kv_snapshot_offset(fl_push_t *p, const fl_ms_bucket_t *b, int64_t table_id,
                                int64_t partition_id, int32_t bucket, int64_t offset);
/* NOTIFY_REMOTE_LOG_OFFSETS to the followers of bucket b: its remote log
 * was committed as [start, end) (start -1: empty), which their local
 * segments below end may follow. */
void fl_push_remote_log_offsets(fl_push_t *p, const fl_ms_bucket_t *b, int64_t table_id,
                                int64_t partition_id, int32_t bucket, int64_t start,
                                int64_t end);
/* Queues a message that holds its whole subject (NOTIFY_ACLS: every ACL;
 * NOTIFY_SCRAM_CREDENTIALS: every credential) to every registered tablet
 * server, or to tablet_id only when it is >= 0. */
void fl_push_message(fl_push_t *p, int16_t api_key, const ProtobufCMessage *m, int32_t tablet_id);
/* Queues the messages for a dropped table. */
void fl_push_table_dropped(fl_push_t *p, const char *db, const char *name, int64_t table_id);
/* Sends what is queued and waits for the answers (1 s at most). */
void fl_push_flush(fl_push_t *p);
/* Destroys the clients (what is pending fails) and frees. */
void fl_push_destroy(fl_push_t *p);

#endif
