/*
 * coordinator_lake.h — the cluster's lake settings as Fluss 0.9.1 has them
 * (ConfigOptions.DATALAKE_FORMAT, LakeCatalogDynamicLoader,
 * LakeStorageUtils) and what they do to tables:
 *
 *   datalake.format: iceberg            the cluster's lake; injected into
 *                                       every new table as
 *                                       table.datalake.format (clients pick
 *                                       their bucketing from it)
 *   datalake.iceberg.type: hadoop       the catalog; fluss-c writes the
 *                                       Hadoop layout itself
 *   datalake.iceberg.warehouse: DIR     <DIR>/<db>/<table>/metadata/...
 *   datalake.iceberg.<other>: V         passed on to tables
 *
 * A table with table.datalake.enabled=true shows every datalake.iceberg.*
 * key as table.datalake.iceberg.* in its table info (GET_TABLE_INFO,
 * METADATA), computed when asked, not stored: the Flink connector opens
 * the lake catalog from them (TableRegistration#toTableInfo).
 *
 * Only `iceberg` with `hadoop` is served: PAIMON and LANCE need a lake
 * writer fluss-c does not have, so a server configured with them refuses
 * to start rather than accept lake tables it would never tier.
 *
 * Thread rule: plain data, read-only once the server runs.
 */
#ifndef FL_COORDINATOR_LAKE_H
#define FL_COORDINATOR_LAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"
#include "common_strlist.h"

#define FL_LAKE_OPTIONS_MAX 32
#define FL_LAKE_KEY_MAX 128
#define FL_LAKE_VALUE_MAX 1024

typedef struct fl_lake_option {
    char key[FL_LAKE_KEY_MAX];     /* without "datalake.<format>." */
    char value[FL_LAKE_VALUE_MAX];
} fl_lake_option_t;

typedef struct fl_lake_config {
    char format[16];               /* "iceberg"; "" = the cluster has no lake */
    char warehouse[4096];          /* an absolute directory, file:// taken off */
    fl_lake_option_t options[FL_LAKE_OPTIONS_MAX];
    size_t n_options;
    /* lake.orphan-file.min-age (ours, default 1 h): how old a file no
     * lake snapshot references must be before it is removed */
    int64_t orphan_min_age_ms;
    /* lake.tiering.auto-expire-snapshot (Fluss's tiering-service key,
     * default false): expire every lake table's snapshots after its
     * rounds, as table.datalake.auto-expire-snapshot does for one */
    bool auto_expire_snapshot;
    /* lake.tiering.mode (ours): internal (default) — flussd tiers every
     * lake table itself; external — it does not, and serves
     * LAKE_TIERING_HEARTBEAT, PREPARE_ and COMMIT_LAKE_TABLE_SNAPSHOT to
     * Fluss's own Flink tiering job instead */
    bool external_tiering;
} fl_lake_config_t;

/* From the server's configuration, given as its keys and values (the
 * server's own config type lives above this layer). cwd resolves a
 * relative warehouse. Refuses, with the key in the message: an unknown
 * datalake.format, a datalake.<x>.* key of another format (Fluss's
 * "Invalid configuration '%s' for '%s' datalake format"), a format other
 * than iceberg, an iceberg type other than hadoop, a missing warehouse,
 * too many or too long options, a bad lake.orphan-file.min-age, a
 * lake.tiering.auto-expire-snapshot other than true or false, a
 * lake.tiering.mode other than internal or external. */
int fl_lake_config_parse(const fl_kvlist_t *server_config, const char *cwd, fl_lake_config_t *out,
                         fl_error_t *err);

bool fl_lake_config_on(const fl_lake_config_t *c);

/* True when the table's properties turn its lake on
 * (table.datalake.enabled=true, case-insensitive as Boolean.parseBoolean). */
bool fl_lake_table_enabled(const fl_kvlist_t *properties);
/* The same for a stored table descriptor (JSON); false when it does not
 * parse. */
bool fl_lake_table_json_enabled(const char *table_json);

/* The table info the clients see: table_json with the lake's options as
 * table.datalake.<format>.* properties when the lake is on for the table.
 * NULL when nothing is added (no lake, lake off for the table, or JSON
 * that does not parse: the stored JSON is then shown as it is); else a
 * malloc'd string the caller frees. */
char *fl_lake_present_table_json(const fl_lake_config_t *c, const char *table_json);

/* <warehouse>/<db>/<table> into out (cap bytes); false when it does not fit. */
bool fl_lake_table_dir(const fl_lake_config_t *c, const char *db, const char *table, char *out,
                       size_t cap);

#endif
