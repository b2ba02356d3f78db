/*
 * fluss.h — libfluss, the C client of fluss-c (and of any Fluss server).
 *
 * Conventions:
 * - Handles are opaque. Objects returned through an out-pointer are owned
 *   by the caller and freed with the matching _free/_destroy function.
 * - Functions return 0 on success or an error code (fluss_errors.h:
 *   Fluss wire codes >= -1, local codes FLUSS_ERR__*) and fill *err when
 *   err is not NULL.
 * - Calls block until the server answers or the client's timeout passes.
 *   A client handle is not thread-safe: use one per thread.
 */
#ifndef FLUSS_H
#define FLUSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluss_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fluss_error {
    int code;
    char message[2048];
} fluss_error_t;

typedef struct fluss_client fluss_client_t;

/* Connects to a bootstrap server ("host:port"), learns the cluster from
 * GET_METADATA and connects to the coordinator. timeout_ms bounds every
 * call (0 = 30 s). */
int fluss_client_new(const char *bootstrap, int timeout_ms, fluss_client_t **out,
                     fluss_error_t *err);
void fluss_client_destroy(fluss_client_t *client);

/* A NULL-terminated array of strings; free with fluss_strings_free. */
void fluss_strings_free(char **strings);

/* ---- databases ---- */

typedef struct fluss_database_info {
    char *name;
    char *comment;                 /* NULL when none */
    char **custom_properties;      /* NULL-terminated "key=value" strings */
    int64_t created_time_ms;
    int64_t modified_time_ms;
} fluss_database_info_t;

/* comment may be NULL; custom_properties is NULL or a NULL-terminated
 * array of "key=value" strings. */
int fluss_database_create(fluss_client_t *c, const char *name, const char *comment,
                          const char *const *custom_properties, bool ignore_if_exists,
                          fluss_error_t *err);
int fluss_database_drop(fluss_client_t *c, const char *name, bool ignore_if_not_exists,
                        bool cascade, fluss_error_t *err);
int fluss_database_list(fluss_client_t *c, char ***names, fluss_error_t *err);
int fluss_database_exists(fluss_client_t *c, const char *name, bool *exists, fluss_error_t *err);
int fluss_database_info(fluss_client_t *c, const char *name, fluss_database_info_t **out,
                        fluss_error_t *err);
void fluss_database_info_free(fluss_database_info_t *info);

/* ---- tables ---- */

typedef struct fluss_table_spec {
    /* Flink-SQL-style column list: "id INT NOT NULL, name STRING, ts TIMESTAMP(3)" */
    const char *schema;
    const char *primary_key;    /* "id" or "a,b"; NULL for a log table */
    const char *partition_keys; /* comma list or NULL */
    const char *bucket_keys;    /* comma list or NULL (server default) */
    int32_t bucket_count;       /* 0 = server default */
    const char *comment;        /* NULL when none */
    const char *const *properties;        /* NULL-terminated "key=value" or NULL */
    const char *const *custom_properties; /* NULL-terminated "key=value" or NULL */
} fluss_table_spec_t;

typedef struct fluss_table_info {
    char *database;
    char *name;
    int64_t table_id;
    int32_t schema_id;
    int32_t bucket_count;
    char *schema;          /* column list in the spec's syntax */
    char **primary_key;    /* NULL-terminated, empty for log tables */
    char **bucket_keys;    /* NULL-terminated */
    char **partition_keys; /* NULL-terminated */
    char *comment;         /* NULL when none */
    char **properties;     /* NULL-terminated "key=value" */
    char **custom_properties;
    char *descriptor_json; /* the table descriptor as the server stores it */
    int64_t created_time_ms;
    int64_t modified_time_ms;
} fluss_table_info_t;

int fluss_table_create(fluss_client_t *c, const char *database, const char *table,
                       const fluss_table_spec_t *spec, bool ignore_if_exists, fluss_error_t *err);
int fluss_table_drop(fluss_client_t *c, const char *database, const char *table,
                     bool ignore_if_not_exists, fluss_error_t *err);
int fluss_table_list(fluss_client_t *c, const char *database, char ***names, fluss_error_t *err);
int fluss_table_exists(fluss_client_t *c, const char *database, const char *table, bool *exists,
                       fluss_error_t *err);
int fluss_table_info(fluss_client_t *c, const char *database, const char *table,
                     fluss_table_info_t **out, fluss_error_t *err);
void fluss_table_info_free(fluss_table_info_t *info);

/* Builds the TableDescriptor JSON for a spec without talking to a server.
 * Returns a malloc'd string (free with free()) or NULL with err set. */
char *fluss_table_spec_to_json(const fluss_table_spec_t *spec, fluss_error_t *err);

/* The name of an error code ("TABLE_NOT_EXIST"). */
const char *fluss_error_name(int code);

#ifdef __cplusplus
}
#endif
#endif
