/*
 * metastore_zk_codec.h — the payloads of the ZooKeeper metastore's znodes,
 * as Apache Fluss writes and reads them (fluss-server/.../zk/data, the *JsonSerde classes
 * and ZkData): JSON documents, the 8-byte counters and the epoch text.
 * No I/O: bytes in, values out, and back. Every decoder takes untrusted
 * bytes (a znode anyone with access to the ensemble may have written) and
 * bounds-checks them; fuzz/fuzz_zk_payloads.c parses, encodes and parses
 * again.
 *
 *   znode                                          payload
 *   /metadata/databases/<db>                       DatabaseRegistration
 *     {"version":1,"comment"?,"custom_properties":{..},"created_time","modified_time"}
 *   /metadata/databases/<db>/tables/<t>            TableRegistration
 *     {"version":1,"table_id",<descriptor members but "schema">,"created_time","modified_time"}
 *   .../tables/<t>/schemas/<id>                    Schema JSON, verbatim
 *   .../tables/<t>/partitions/<name>               TablePartition
 *     {"version":1,"table_id","partition_id"} + fluss-c's "partition_values":[..],
 *     "created_time" (0.9.1 reads only the first three)
 *   .../tables/<t>/auto_inc/col_<column id>        counter
 *   /metadata/{table_seqid,partition_seqid,writer_id}  counter
 *   /tabletservers/tables/<table id>               TableAssignment
 *     {"version":1,"buckets":{"0":[replica ids],..}}
 *   /tabletservers/partitions/<partition id>       PartitionAssignment
 *     {"version":1,"table_id","buckets":{..}}
 *   .../buckets/<b>/leader_isr                     LeaderAndIsr
 *     {"version":1,"leader","leader_epoch","isr":[..],"coordinator_epoch","bucket_epoch"}
 *   /tabletservers/ids/<id> (ephemeral)            TabletServerRegistration
 *     {"version":3,"listeners":"NAME://host:port,..","register_timestamp","rack"?}
 *   /coordinators/active (ephemeral)               CoordinatorAddress
 *     {"version":2,"id","listeners"}
 *   /coordinators/epoch                            the epoch in decimal ASCII ("3")
 *
 * A counter is Curator's DistributedAtomicLong value: 8 bytes, big-endian
 * two's complement; a missing znode reads as 0.
 *
 * The metastore interface keeps a table's TableDescriptor JSON (with the
 * latest schema inside) and a database's DatabaseDescriptor JSON; the
 * registrations are those documents with the ZooKeeper-only members added
 * and (tables) "schema" taken out, since Fluss keeps schemas in their own
 * znodes. Decoding puts them back; an encode whose decode would not give
 * the same text back is refused (nothing is stored that reads back
 * different). Strings returned are the caller's to free with free().
 */
#ifndef FL_METASTORE_ZK_CODEC_H
#define FL_METASTORE_ZK_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "metastore.h"

/* Largest payload decoded (ZooKeeper's own jute.maxbuffer default is 1 MiB). */
#define FL_ZK_PAYLOAD_MAX (16u * 1024 * 1024)
/* Buckets of one table or partition in an assignment. */
#define FL_ZK_BUCKETS_MAX 65536

/* ---- databases ---- */
char *fl_zk_db_reg_encode(const char *db_json, int64_t created_ms, int64_t modified_ms,
                          fl_error_t *err);
int fl_zk_db_reg_decode(const void *data, size_t len, char **db_json, int64_t *created_ms,
                        int64_t *modified_ms, fl_error_t *err);

/* ---- tables: schema_json is the latest schema, the one table_json holds ---- */
char *fl_zk_table_reg_encode(const char *table_json, const char *schema_json, int64_t table_id,
                             int64_t created_ms, int64_t modified_ms, fl_error_t *err);
int fl_zk_table_reg_decode(const void *data, size_t len, const char *schema_json,
                           char **table_json, int64_t *table_id, int64_t *created_ms,
                           int64_t *modified_ms, fl_error_t *err);
/* The column id of the schema's auto-increment column, or -1 when it has none. */
int32_t fl_zk_schema_autoinc_column(const char *schema_json);

/* ---- partitions: values NULL when the znode has none (0.9.1 writes
 * none); then the caller splits the name ---- */
char *fl_zk_partition_encode(int64_t table_id, const fl_ms_partition_t *p, fl_error_t *err);
int fl_zk_partition_decode(const void *data, size_t len, int64_t *table_id,
                           int64_t *partition_id, char ***values, size_t *value_count,
                           int64_t *created_ms, int *has_created, fl_error_t *err);

/* ---- bucket assignments: table_id < 0 for a table's, else a partition's ---- */
char *fl_zk_assignment_encode(int64_t table_id, const fl_ms_bucket_t *buckets, int32_t count);
/* Fills buckets[i].replicas (leader -1, epoch 0); *buckets is fl_calloc'd,
 * free with fl_free. table_id is -1 when absent (a table's assignment). */
int fl_zk_assignment_decode(const void *data, size_t len, int64_t *table_id,
                            fl_ms_bucket_t **buckets, int32_t *count, fl_error_t *err);

/* ---- LeaderAndIsr ---- */
typedef struct fl_zk_leader_isr {
    int32_t leader;
    int32_t leader_epoch;
    int32_t isr_count;
    int32_t isr[FL_REPLICAS_MAX];
    int32_t coordinator_epoch;
    int32_t bucket_epoch;
} fl_zk_leader_isr_t;

char *fl_zk_leader_isr_encode(const fl_zk_leader_isr_t *l);
int fl_zk_leader_isr_decode(const void *data, size_t len, fl_zk_leader_isr_t *out,
                            fl_error_t *err);

/* ---- tablet server registration ---- */
typedef struct fl_zk_tablet_server {
    int32_t id;
    char *listeners; /* "CLIENT://127.0.0.1:9123,INTERNAL://..." */
    char *rack;      /* NULL when none */
    int64_t register_ms;
    /* the incarnation epoch: the registration znode's creation zxid,
     * larger for every new registration of any server (KAFKA-7235's
     * broker epoch); not in the payload */
    int64_t incarnation;
} fl_zk_tablet_server_t;

char *fl_zk_tablet_server_encode(const fl_zk_tablet_server_t *ts);
/* Fills listeners, rack, register_ms (id and incarnation come from the
 * znode's name and stat). Version 1 (host, port) reads as CLIENT://host:port. */
int fl_zk_tablet_server_decode(const void *data, size_t len, fl_zk_tablet_server_t *out,
                               fl_error_t *err);
void fl_zk_tablet_server_clear(fl_zk_tablet_server_t *ts);

/* ---- coordinator address ---- */
char *fl_zk_coordinator_encode(const char *id, const char *listeners);
int fl_zk_coordinator_decode(const void *data, size_t len, char **id, char **listeners,
                             fl_error_t *err);

/* ---- counters and the epoch ---- */
void fl_zk_counter_encode(int64_t v, uint8_t out[8]);
int fl_zk_counter_decode(const void *data, size_t len, int64_t *v, fl_error_t *err);
/* writes at most 12 bytes with the NUL */
void fl_zk_epoch_encode(int32_t epoch, char out[12]);
int fl_zk_epoch_decode(const void *data, size_t len, int32_t *epoch, fl_error_t *err);

#endif
