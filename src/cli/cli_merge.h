/*
 * cli_merge.h — the rows of a primary-key table's union read merged by
 * key (`fluss scan` of a PK lake table): the lake snapshot's rows, then
 * the changelog after it, the last change of a key winning (+I, +U: its
 * row; -U, -D: none), printed once all are read, in (partition, bucket,
 * offset) order of each key's last row.
 *
 * Rows are kept as printed lines: memory grows with the changes read
 * (the CLI's batch read of one table). Single-threaded.
 */
#ifndef FL_CLI_MERGE_H
#define FL_CLI_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct fl_cli_merge fl_cli_merge_t;

fl_cli_merge_t *fl_cli_merge_new(void);
void fl_cli_merge_free(fl_cli_merge_t *m);
/* The key's row is now line (copied; NULL: the key is gone), found at
 * (partition, bucket, offset). */
void fl_cli_merge_put(fl_cli_merge_t *m, const char *key, size_t key_len, const char *line,
                      size_t line_len, int64_t partition, int32_t bucket, int64_t offset);
/* Writes the live rows to out, at most limit (-1: all); returns how many. */
size_t fl_cli_merge_print(fl_cli_merge_t *m, FILE *out, long long limit);

#endif
