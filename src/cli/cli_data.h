/*
 * cli_data.h — the `fluss produce` and `fluss scan` commands of the CLI
 * (cli_produce.c, cli_scan.c), called by cli_main.c's dispatcher.
 * bootstrap is the --bootstrap-server value or NULL (then
 * $FLUSS_BOOTSTRAP or 127.0.0.1:9123). Exit codes as cli_main.c.
 */
#ifndef FL_CLI_DATA_H
#define FL_CLI_DATA_H

#include <stdbool.h>
#include <stdio.h>

#include "fluss.h"

#define FL_CLI_FIELDS_MAX 4096

int fl_cli_produce(const char *bootstrap, int argc, char **argv);
int fl_cli_scan(const char *bootstrap, int argc, char **argv);
/* cli_kv.c: primary-key tables */
int fl_cli_upsert(const char *bootstrap, int argc, char **argv);
int fl_cli_delete(const char *bootstrap, int argc, char **argv);
int fl_cli_lookup(const char *bootstrap, int argc, char **argv);

/* Values every row read starts with (`produce --partition`: the
 * partition-key columns), and the partition name each row must then
 * have. */
#define FL_CLI_PRESETS_MAX 64
typedef struct fl_cli_preset {
    size_t n;
    int32_t cols[FL_CLI_PRESETS_MAX];
    const char *vals[FL_CLI_PRESETS_MAX];
    char name[1024];
} fl_cli_preset_t;

/* Where fl_cli_read_rows puts the rows it reads (an append writer, an
 * upsert writer upserting or deleting). */
typedef struct fl_cli_sink {
    int (*put)(void *w, const fluss_row_t *row, fluss_error_t *err);
    int (*flush)(void *w, fluss_error_t *err);
    int64_t (*acked)(void *w);
    void *w;
    const char *verb; /* "produced", "upserted", "deleted" */
    const fl_cli_preset_t *preset; /* NULL: none */
} fl_cli_sink_t;

/* Reads rows from stdin (CSV, or JSON lines; with header the first CSV
 * line names the columns; else the fields are cols[0..ncols) or every
 * column in order when cols is NULL) into sink, with progress on stderr;
 * flushes at the end. Returns the exit code (0, or 1 for bad input or a
 * failed write). */
int fl_cli_read_rows(fluss_table_t *t, bool json, bool header, const int32_t *cols, size_t ncols,
                     const fl_cli_sink_t *sink);

/* One CSV record (RFC 4180; a record may span lines inside quotes). */
typedef struct fl_csv_record {
    char *buf; /* field texts, NUL separated */
    size_t cap;
    size_t count;
    size_t starts[FL_CLI_FIELDS_MAX];
    bool quoted[FL_CLI_FIELDS_MAX];
} fl_csv_record_t;

/* Returns 1 on a record, 0 at end of input, -1 on malformed input. */
int fl_csv_read(FILE *in, fl_csv_record_t *r, long *line_no);
const char *fl_csv_field(const fl_csv_record_t *r, size_t i);

/* Shared by all: connects and opens DB.TABLE (a bare TABLE means
 * database fluss); prints the error and returns 1, or 2 for a bad name. */
int fl_cli_open_table(const char *bootstrap, const char *path, fluss_client_t **client,
                      fluss_table_t **table);
/* Splits DB.TABLE (bare TABLE: database fluss); -1 for a database name
 * longer than cap. */
int fl_cli_split_path(const char *path, char *db, size_t cap, const char **table);
/* Connects (printing why not); returns 0 or the exit code 1. */
int fl_cli_connect(const char *bootstrap, fluss_client_t **client);
/* Prints "fluss: MESSAGE (NAME, code N)" and returns the exit code 1. */
int fl_cli_fail(const fluss_error_t *err);

/* cli_partition.c: `fluss partition add|drop|list` and `fluss table alter` */
int fl_cli_partition(const char *bootstrap, int argc, char **argv);
int fl_cli_table_alter(const char *bootstrap, int argc, char **argv);
/* cli_acl.c: `fluss acl add|list|drop` */
int fl_cli_acl(const char *bootstrap, int argc, char **argv);
/* cli_user.c: `fluss user add|delete|list` (SCRAM users) */
int fl_cli_user(const char *bootstrap, int argc, char **argv);
/* cli_lake.c: `fluss lake status|tier` */
int fl_cli_lake(const char *bootstrap, int argc, char **argv);

#endif
