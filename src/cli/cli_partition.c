/*
 * cli_partition.c — `fluss partition add|drop|list DB.TABLE [k=v,...]`
 * (CREATE_PARTITION, DROP_PARTITION, LIST_PARTITION_INFOS) and `fluss
 * table alter DB.TABLE --add-column "c INT" | --set k=v | --reset k`
 * (ALTER_TABLE), over libfluss's admin calls. Exit codes as cli_main.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_data.h"

#define FL_CLI_CHANGES_MAX 64

static void usage_partition(FILE *f) {
    fprintf(f,
            "usage: fluss partition add DB.TABLE K=V[,K2=V2] [--if-not-exists]\n"
            "       fluss partition drop DB.TABLE K=V[,K2=V2] [--if-exists]\n"
            "       fluss partition list DB.TABLE [K=V,...]\n"
            "\n"
            "add and drop name every partition key; list shows every partition, or those\n"
            "matching the values given (id | name | spec).\n");
}

static void usage_alter(FILE *f) {
    fprintf(f,
            "usage: fluss table alter DB.TABLE [--add-column \"NAME TYPE [COMMENT 'x']\"]...\n"
            "                         [--set K=V]... [--reset K]... [--if-exists]\n"
            "\n"
            "Sends the changes in one ALTER_TABLE: --set changes a table option (the server\n"
            "decides which may change, e.g. table.datalake.freshness), --reset puts one back\n"
            "to its default, --add-column adds a nullable column at the end. Options and\n"
            "columns go in separate calls (the server refuses both at once).\n");
}

static int bad(const char *msg, void (*usage)(FILE *)) {
    fprintf(stderr, "fluss: %s\n\n", msg);
    usage(stderr);
    return 2;
}

static int list_partitions(fluss_client_t *c, const char *db, const char *table,
                           const char *spec) {
    fluss_partition_info_t *infos = NULL;
    size_t n = 0;
    fluss_error_t err;
    if (fluss_partition_list(c, db, table, spec, &infos, &n, &err)) return fl_cli_fail(&err);
    printf("id | name | spec\n");
    for (size_t i = 0; i < n; i++)
        printf("%lld | %s | %s\n", (long long)infos[i].partition_id, infos[i].name, infos[i].spec);
    fluss_partition_infos_free(infos, n);
    return 0;
}

int fl_cli_partition(const char *bootstrap, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_partition(stdout);
            return 0;
        }
    if (argc < 2) return bad("partition needs a command and DB.TABLE", usage_partition);
    const char *sub = argv[0], *path = argv[1], *spec = NULL;
    bool add = strcmp(sub, "add") == 0, drop = strcmp(sub, "drop") == 0;
    if (!add && !drop && strcmp(sub, "list") != 0)
        return bad("unknown partition command", usage_partition);
    bool ignore = false;
    for (int i = 2; i < argc; i++) {
        if (add && strcmp(argv[i], "--if-not-exists") == 0) ignore = true;
        else if (drop && strcmp(argv[i], "--if-exists") == 0) ignore = true;
        else if (argv[i][0] != '-' && !spec) spec = argv[i];
        else return bad("unknown option for partition", usage_partition);
    }
    if ((add || drop) && !spec) return bad("add and drop need a partition spec K=V", usage_partition);
    char db[256];
    const char *table;
    if (fl_cli_split_path(path, db, sizeof(db), &table)) return bad("bad DB.TABLE", usage_partition);
    fluss_client_t *c = NULL;
    if (fl_cli_connect(bootstrap, &c)) return 1;
    fluss_error_t err;
    int rc = 0;
    if (add) {
        if (fluss_partition_create(c, db, table, spec, ignore, &err)) rc = fl_cli_fail(&err);
        else printf("added partition %s of %s.%s\n", spec, db, table);
    } else if (drop) {
        if (fluss_partition_drop(c, db, table, spec, ignore, &err)) rc = fl_cli_fail(&err);
        else printf("dropped partition %s of %s.%s\n", spec, db, table);
    } else {
        rc = list_partitions(c, db, table, spec);
    }
    fluss_client_destroy(c);
    return rc;
}

int fl_cli_table_alter(const char *bootstrap, int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_alter(stdout);
            return 0;
        }
    if (argc < 2) return bad("table alter needs DB.TABLE", usage_alter);
    fluss_table_change_t ch[FL_CLI_CHANGES_MAX];
    char *owned[FL_CLI_CHANGES_MAX];
    size_t n = 0, nowned = 0;
    bool ignore = false;
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--if-exists") == 0) {
            ignore = true;
            continue;
        }
        if (!v || n >= FL_CLI_CHANGES_MAX) {
            rc = bad(v ? "too many changes" : "option needs a value", usage_alter);
            break;
        }
        memset(&ch[n], 0, sizeof(ch[n]));
        if (strcmp(a, "--add-column") == 0) {
            ch[n].kind = FLUSS_TABLE_ADD_COLUMN;
            ch[n].column = v;
        } else if (strcmp(a, "--reset") == 0) {
            ch[n].kind = FLUSS_TABLE_RESET_OPTION;
            ch[n].key = v;
        } else if (strcmp(a, "--set") == 0) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v) {
                rc = bad("--set needs K=V", usage_alter);
                break;
            }
            char *key = strndup(v, (size_t)(eq - v));
            owned[nowned++] = key;
            ch[n].kind = FLUSS_TABLE_SET_OPTION;
            ch[n].key = key;
            ch[n].value = eq + 1;
        } else {
            rc = bad("unknown option for table alter", usage_alter);
            break;
        }
        n++;
        i++;
    }
    if (!rc && n == 0) rc = bad("table alter needs a change", usage_alter);
    char db[256];
    const char *table;
    if (!rc && fl_cli_split_path(argv[1], db, sizeof(db), &table))
        rc = bad("bad DB.TABLE", usage_alter);
    fluss_client_t *c = NULL;
    if (!rc && fl_cli_connect(bootstrap, &c)) rc = 1;
    if (!rc) {
        fluss_error_t err;
        if (fluss_table_alter(c, db, table, ch, n, ignore, &err)) rc = fl_cli_fail(&err);
        else printf("altered table %s.%s\n", db, table);
        fluss_client_destroy(c);
    }
    for (size_t i = 0; i < nowned; i++) free(owned[i]);
    return rc;
}
