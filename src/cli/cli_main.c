/*
 * cli_main.c — `fluss`, the command-line tool over libfluss:
 *   fluss [--bootstrap-server HOST:PORT] db create|drop|list|describe ...
 *   fluss [--bootstrap-server HOST:PORT] table create|drop|list|describe|alter ...
 *   fluss [--bootstrap-server HOST:PORT] partition add|drop|list DB.TABLE ... (cli_partition.c)
 *   fluss [--bootstrap-server HOST:PORT] produce|scan DB.TABLE ... (cli_produce.c, cli_scan.c)
 *   fluss [--bootstrap-server HOST:PORT] upsert|delete|lookup DB.TABLE ... (cli_kv.c)
 * Exit codes: 0 ok, 1 the server or connection failed, 2 bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_data.h"
#include "fluss.h"

#define FL_CLI_PROPS_MAX 64

static const char *g_bootstrap = NULL;

static void usage_main(FILE *f) {
    fprintf(f,
            "usage: fluss [--bootstrap-server HOST:PORT] [--sasl-username NAME] [--tls-ca FILE]\n"
            "             [--tls-cert FILE --tls-key FILE] COMMAND ...\n"
            "\n"
            "Commands:\n"
            "  db create NAME [--comment TEXT] [--property K=V]... [--if-not-exists]\n"
            "  db drop NAME [--if-exists] [--restrict]\n"
            "  db list\n"
            "  db describe NAME\n"
            "  table create DB.TABLE --schema \"COLUMNS\" [--primary-key COLS] [--buckets N]\n"
            "               [--bucket-key COLS] [--partition-key COLS] [--comment TEXT]\n"
            "               [--property K=V]... [--custom-property K=V]... [--if-not-exists]\n"
            "  table drop DB.TABLE [--if-exists]\n"
            "  table list [DB]\n"
            "  table describe DB.TABLE [--json]\n"
            "  table alter DB.TABLE [--add-column \"C TYPE\"] [--set K=V] [--reset K]\n"
            "  partition add|drop DB.TABLE K=V[,K2=V2]   partition list DB.TABLE [K=V,...]\n"
            "  produce DB.TABLE [--format csv|json] [--header] [--partition K=V,...]\n"
            "               [--batch-bytes N] [--linger-ms N]\n"
            "  scan DB.TABLE [--from earliest|latest|TIMESTAMP_MS] [--columns a,b] [--follow]\n"
            "               [--format table|json|csv] [--limit N] [--changelog]\n"
            "               [--partition K=V,...] [--filter \"c > 5 AND d IS NULL\"]\n"
            "  upsert DB.TABLE [--format csv|json] [--header] [--columns a,b]\n"
            "  delete DB.TABLE [KEY...]\n"
            "  lookup DB.TABLE [--format table|json] [KEY...]\n"
            "  lake status DB.TABLE                  lake tier DB.TABLE --now\n"
            "  acl add|list|drop [--principal User:N] [--operation OP] [--resource R]\n"
            "  user add|delete NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512]   user list\n"
            "\n"
            "The bootstrap server defaults to $FLUSS_BOOTSTRAP or 127.0.0.1:9123.\n"
            "On a SASL listener: --sasl-username NAME (or $FLUSS_SASL_USERNAME) and the\n"
            "password in $FLUSS_SASL_PASSWORD (never on the command line); mechanism\n"
            "PLAIN, or $FLUSS_SASL_MECHANISM (SCRAM-SHA-256, SCRAM-SHA-512).\n"
            "On a TLS listener (SSL, SASL_SSL): --tls-ca FILE (or $FLUSS_TLS_CA), the PEM\n"
            "CAs of the server's certificate; a client certificate with --tls-cert FILE\n"
            "--tls-key FILE (or $FLUSS_TLS_CERT, $FLUSS_TLS_KEY).\n"
            "Run 'fluss db --help' or 'fluss table create --help' for details.\n");
}

static void usage_db(FILE *f) {
    fprintf(f,
            "usage: fluss db create NAME [--comment TEXT] [--property K=V]... [--if-not-exists]\n"
            "       fluss db drop NAME [--if-exists] [--restrict]\n"
            "       fluss db list\n"
            "       fluss db describe NAME\n"
            "\n"
            "drop removes the database with all its tables unless --restrict is given,\n"
            "in which case a non-empty database is an error.\n");
}

static void usage_table(FILE *f) {
    fprintf(f,
            "usage: fluss table create DB.TABLE --schema \"COLUMNS\" [options]\n"
            "       fluss table drop DB.TABLE [--if-exists]\n"
            "       fluss table list [DB]          (default database: fluss)\n"
            "       fluss table describe DB.TABLE [--json]\n"
            "       fluss table alter DB.TABLE [--add-column \"C TYPE\"] [--set K=V] [--reset K]\n"
            "\n"
            "create options:\n"
            "  --schema \"id INT NOT NULL, name STRING COMMENT 'x', ts TIMESTAMP(3)\"\n"
            "           types: BOOLEAN TINYINT SMALLINT INT BIGINT FLOAT DOUBLE DECIMAL(p,s)\n"
            "                  CHAR(n) STRING BINARY(n) BYTES DATE TIME(p) TIMESTAMP(p)\n"
            "                  TIMESTAMP_LTZ(p) ARRAY<T> MAP<K,V> ROW<name T, ...>\n"
            "  --primary-key COLS     comma list; makes a primary-key table\n"
            "  --buckets N            bucket count (server default otherwise)\n"
            "  --bucket-key COLS      bucket key (PK tables default to the primary key)\n"
            "  --partition-key COLS   partition keys\n"
            "  --comment TEXT         table comment\n"
            "  --property K=V         table option, e.g. table.log.arrow.compression.type=LZ4_FRAME\n"
            "  --custom-property K=V  free-form property\n"
            "  --if-not-exists        no error when the table exists\n");
}

static int fail(const fluss_error_t *err) {
    fprintf(stderr, "fluss: %s (%s, code %d)\n", err->message, fluss_error_name(err->code),
            err->code);
    return 1;
}

static int bad_usage(const char *msg, void (*usage)(FILE *)) {
    fprintf(stderr, "fluss: %s\n\n", msg);
    usage(stderr);
    return 2;
}

static fluss_client_t *connect_or_die(int *rc) {
    fluss_client_t *c = NULL;
    if (fl_cli_connect(g_bootstrap, &c) != 0) {
        *rc = 1;
        return NULL;
    }
    return c;
}

static void print_time(const char *label, int64_t ms) {
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char buf[64];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    printf("%-15s %s.%03dZ\n", label, buf, (int)(ms % 1000));
}

static void print_list(const char *label, char **items) {
    printf("%-15s ", label);
    for (size_t i = 0; items && items[i]; i++) printf("%s%s", i ? ", " : "", items[i]);
    printf("\n");
}

static int has_help(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

/* Splits DB.TABLE (a bare TABLE means database fluss). */
static int split_path(const char *arg, char *db, size_t dbcap, const char **table) {
    const char *dot = strchr(arg, '.');
    if (!dot) {
        snprintf(db, dbcap, "fluss");
        *table = arg;
        return 0;
    }
    if ((size_t)(dot - arg) >= dbcap) return -1;
    memcpy(db, arg, (size_t)(dot - arg));
    db[dot - arg] = '\0';
    *table = dot + 1;
    return 0;
}

static int cmd_db(int argc, char **argv) {
    if (argc < 1 || has_help(argc, argv)) {
        usage_db(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    const char *sub = argv[0];
    int rc = 0;
    fluss_error_t err;
    if (strcmp(sub, "create") == 0) {
        if (argc < 2) return bad_usage("db create needs a NAME", usage_db);
        const char *comment = NULL;
        const char *props[FL_CLI_PROPS_MAX + 1] = {0};
        int nprops = 0, ine = 0;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--comment") == 0 && i + 1 < argc) comment = argv[++i];
            else if (strcmp(argv[i], "--property") == 0 && i + 1 < argc && nprops < FL_CLI_PROPS_MAX)
                props[nprops++] = argv[++i];
            else if (strcmp(argv[i], "--if-not-exists") == 0) ine = 1;
            else return bad_usage("unknown option for db create", usage_db);
        }
        fluss_client_t *c = connect_or_die(&rc);
        if (!c) return rc;
        if (fluss_database_create(c, argv[1], comment, props, ine, &err)) rc = fail(&err);
        else printf("created database %s\n", argv[1]);
        fluss_client_destroy(c);
    } else if (strcmp(sub, "drop") == 0) {
        if (argc < 2) return bad_usage("db drop needs a NAME", usage_db);
        int ie = 0, cascade = 1;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--if-exists") == 0) ie = 1;
            else if (strcmp(argv[i], "--restrict") == 0) cascade = 0;
            else return bad_usage("unknown option for db drop", usage_db);
        }
        fluss_client_t *c = connect_or_die(&rc);
        if (!c) return rc;
        if (fluss_database_drop(c, argv[1], ie, cascade, &err)) rc = fail(&err);
        else printf("dropped database %s\n", argv[1]);
        fluss_client_destroy(c);
    } else if (strcmp(sub, "list") == 0) {
        fluss_client_t *c = connect_or_die(&rc);
        if (!c) return rc;
        char **names = NULL;
        if (fluss_database_list(c, &names, &err)) rc = fail(&err);
        for (size_t i = 0; names && names[i]; i++) printf("%s\n", names[i]);
        fluss_strings_free(names);
        fluss_client_destroy(c);
    } else if (strcmp(sub, "describe") == 0) {
        if (argc < 2) return bad_usage("db describe needs a NAME", usage_db);
        fluss_client_t *c = connect_or_die(&rc);
        if (!c) return rc;
        fluss_database_info_t *info = NULL;
        if (fluss_database_info(c, argv[1], &info, &err)) {
            rc = fail(&err);
        } else {
            printf("%-15s %s\n", "database", info->name);
            printf("%-15s %s\n", "comment", info->comment ? info->comment : "");
            print_list("properties", info->custom_properties);
            print_time("created", info->created_time_ms);
            print_time("modified", info->modified_time_ms);
            fluss_database_info_free(info);
        }
        fluss_client_destroy(c);
    } else {
        return bad_usage("unknown db command", usage_db);
    }
    return rc;
}

static int cmd_table_create(int argc, char **argv) {
    fluss_table_spec_t spec = {0};
    const char *props[FL_CLI_PROPS_MAX + 1] = {0}, *cprops[FL_CLI_PROPS_MAX + 1] = {0};
    int np = 0, ncp = 0, ine = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v && strcmp(a, "--if-not-exists") != 0)
            return bad_usage("option needs a value", usage_table);
        if (strcmp(a, "--schema") == 0) spec.schema = v, i++;
        else if (strcmp(a, "--primary-key") == 0) spec.primary_key = v, i++;
        else if (strcmp(a, "--bucket-key") == 0) spec.bucket_keys = v, i++;
        else if (strcmp(a, "--partition-key") == 0) spec.partition_keys = v, i++;
        else if (strcmp(a, "--comment") == 0) spec.comment = v, i++;
        else if (strcmp(a, "--buckets") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || n <= 0 || n > 1000000) return bad_usage("--buckets needs a positive number", usage_table);
            spec.bucket_count = (int32_t)n;
            i++;
        } else if (strcmp(a, "--property") == 0 && np < FL_CLI_PROPS_MAX) props[np++] = v, i++;
        else if (strcmp(a, "--custom-property") == 0 && ncp < FL_CLI_PROPS_MAX) cprops[ncp++] = v, i++;
        else if (strcmp(a, "--if-not-exists") == 0) ine = 1;
        else return bad_usage("unknown option for table create", usage_table);
    }
    if (!spec.schema) return bad_usage("table create needs --schema", usage_table);
    spec.properties = props;
    spec.custom_properties = cprops;
    char db[256];
    const char *table;
    if (split_path(argv[1], db, sizeof(db), &table)) return bad_usage("bad DB.TABLE", usage_table);
    int rc = 0;
    fluss_error_t err;
    char *json = fluss_table_spec_to_json(&spec, &err);
    if (!json) {
        fprintf(stderr, "fluss: %s\n", err.message);
        return 2;
    }
    free(json);
    fluss_client_t *c = connect_or_die(&rc);
    if (!c) return rc;
    if (fluss_table_create(c, db, table, &spec, ine, &err)) rc = fail(&err);
    else printf("created table %s.%s\n", db, table);
    fluss_client_destroy(c);
    return rc;
}

static int cmd_table(int argc, char **argv) {
    if (argc < 1 || has_help(argc, argv)) {
        usage_table(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    const char *sub = argv[0];
    int rc = 0;
    fluss_error_t err;
    if (strcmp(sub, "create") == 0) {
        if (argc < 2) return bad_usage("table create needs DB.TABLE", usage_table);
        return cmd_table_create(argc, argv);
    }
    if (strcmp(sub, "alter") == 0) return fl_cli_table_alter(g_bootstrap, argc, argv);
    if (strcmp(sub, "list") == 0) {
        fluss_client_t *c = connect_or_die(&rc);
        if (!c) return rc;
        char **names = NULL;
        if (fluss_table_list(c, argc > 1 ? argv[1] : "fluss", &names, &err)) rc = fail(&err);
        for (size_t i = 0; names && names[i]; i++) printf("%s\n", names[i]);
        fluss_strings_free(names);
        fluss_client_destroy(c);
        return rc;
    }
    if (strcmp(sub, "drop") != 0 && strcmp(sub, "describe") != 0)
        return bad_usage("unknown table command", usage_table);
    if (argc < 2) return bad_usage("this command needs DB.TABLE", usage_table);
    char db[256];
    const char *table;
    if (split_path(argv[1], db, sizeof(db), &table)) return bad_usage("bad DB.TABLE", usage_table);
    int ie = 0, as_json = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--if-exists") == 0 && sub[1] == 'r') ie = 1;
        else if (strcmp(argv[i], "--json") == 0 && sub[1] == 'e') as_json = 1;
        else return bad_usage("unknown option", usage_table);
    }
    fluss_client_t *c = connect_or_die(&rc);
    if (!c) return rc;
    if (strcmp(sub, "drop") == 0) {
        if (fluss_table_drop(c, db, table, ie, &err)) rc = fail(&err);
        else printf("dropped table %s.%s\n", db, table);
    } else {
        fluss_table_info_t *info = NULL;
        if (fluss_table_info(c, db, table, &info, &err)) {
            rc = fail(&err);
        } else if (as_json) {
            printf("%s\n", info->descriptor_json);
            fluss_table_info_free(info);
        } else {
            printf("%-15s %s.%s\n", "table", info->database, info->name);
            printf("%-15s %lld\n", "table id", (long long)info->table_id);
            printf("%-15s %d\n", "schema id", info->schema_id);
            printf("%-15s %s\n", "schema", info->schema);
            print_list("primary key", info->primary_key);
            print_list("bucket key", info->bucket_keys);
            printf("%-15s %d\n", "buckets", info->bucket_count);
            print_list("partition key", info->partition_keys);
            printf("%-15s %s\n", "comment", info->comment ? info->comment : "");
            print_list("properties", info->properties);
            print_list("custom", info->custom_properties);
            print_time("created", info->created_time_ms);
            print_time("modified", info->modified_time_ms);
            fluss_table_info_free(info);
        }
    }
    fluss_client_destroy(c);
    return rc;
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--bootstrap-server") == 0 && i + 1 < argc) {
            g_bootstrap = argv[++i];
        } else if (strncmp(argv[i], "--bootstrap-server=", 19) == 0) {
            g_bootstrap = argv[i] + 19;
        } else if (strcmp(argv[i], "--sasl-username") == 0 && i + 1 < argc) {
            setenv("FLUSS_SASL_USERNAME", argv[++i], 1);
        } else if (strcmp(argv[i], "--tls-ca") == 0 && i + 1 < argc) {
            setenv("FLUSS_TLS_CA", argv[++i], 1);
        } else if (strcmp(argv[i], "--tls-cert") == 0 && i + 1 < argc) {
            setenv("FLUSS_TLS_CERT", argv[++i], 1);
        } else if (strcmp(argv[i], "--tls-key") == 0 && i + 1 < argc) {
            setenv("FLUSS_TLS_KEY", argv[++i], 1);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_main(stdout);
            return 0;
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage_main(stderr);
        return 2;
    }
    if (strcmp(argv[i], "db") == 0) return cmd_db(argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "table") == 0) return cmd_table(argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "partition") == 0)
        return fl_cli_partition(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "acl") == 0) return fl_cli_acl(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "user") == 0) return fl_cli_user(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "lake") == 0) return fl_cli_lake(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "produce") == 0) return fl_cli_produce(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "scan") == 0) return fl_cli_scan(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "upsert") == 0) return fl_cli_upsert(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "delete") == 0) return fl_cli_delete(g_bootstrap, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "lookup") == 0) return fl_cli_lookup(g_bootstrap, argc - i - 1, argv + i + 1);
    fprintf(stderr, "fluss: unknown command '%s'\n\n", argv[i]);
    usage_main(stderr);
    return 2;
}
