/*
 * cli_data.h — the `fluss produce` and `fluss scan` commands of the CLI
 * (cli_produce.c, cli_scan.c), called by cli_main.c's dispatcher.
 * bootstrap is the --bootstrap-server value or NULL (then
 * $FLUSS_BOOTSTRAP or 127.0.0.1:9123). Exit codes as cli_main.c.
 */
#ifndef FL_CLI_DATA_H
#define FL_CLI_DATA_H

#include "fluss.h"

int fl_cli_produce(const char *bootstrap, int argc, char **argv);
int fl_cli_scan(const char *bootstrap, int argc, char **argv);

/* Shared by both: connects and opens DB.TABLE (a bare TABLE means
 * database fluss); prints the error and returns 1, or 2 for a bad name. */
int fl_cli_open_table(const char *bootstrap, const char *path, fluss_client_t **client,
                      fluss_table_t **table);

#endif
