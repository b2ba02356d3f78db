/*
 * cli_acl.c — `fluss acl add|list|drop`: the cluster's ACLs (Fluss
 * 0.9.1's model: authorizer.enabled on the server).
 *
 *   fluss acl add  --principal User:NAME --operation OP --resource R [--host H]
 *   fluss acl list [--principal P] [--operation OP] [--resource R] [--host H]
 *   fluss acl drop [--principal P] [--operation OP] [--resource R] [--host H]
 *
 * R is "cluster", "database:DB", "table:DB.T" (a name "*" for all of the
 * type); P is TYPE:NAME ("*:*" for everyone); OP one of ALL READ WRITE
 * CREATE DROP ALTER DESCRIBE (and ANY in a filter). A filter names what it
 * matches, an option left out matches anything.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli_data.h"
#include "fluss.h"

static void usage_acl(FILE *f) {
    fprintf(f,
            "usage: fluss acl add --principal User:NAME --operation OP --resource R [--host H]\n"
            "       fluss acl list [--principal P] [--operation OP] [--resource R] [--host H]\n"
            "       fluss acl drop [--principal P] [--operation OP] [--resource R] [--host H]\n"
            "\n"
            "R: cluster | database:DB | table:DB.TABLE (a name '*' means all of its type)\n"
            "P: TYPE:NAME, e.g. User:alice; '*:*' is everyone\n"
            "OP: ALL READ WRITE CREATE DROP ALTER DESCRIBE (ANY in list/drop)\n"
            "H: the client's IP address, '*' (default for add) for any\n");
}

typedef struct acl_args {
    char ptype[128], pname[512];
    bool has_principal;
    int operation;
    int rtype;
    char rname[1024];
    const char *host;
} acl_args_t;

static int parse_resource(const char *s, acl_args_t *a) {
    const char *colon = strchr(s, ':');
    if (strcasecmp(s, "cluster") == 0) {
        a->rtype = FLUSS_ACL_RESOURCE_CLUSTER;
        snprintf(a->rname, sizeof(a->rname), "fluss-cluster");
        return 0;
    }
    if (!colon) return -1;
    size_t n = (size_t)(colon - s);
    if (n == 8 && strncasecmp(s, "database", 8) == 0) a->rtype = FLUSS_ACL_RESOURCE_DATABASE;
    else if (n == 5 && strncasecmp(s, "table", 5) == 0) a->rtype = FLUSS_ACL_RESOURCE_TABLE;
    else return -1;
    if (!colon[1] || strlen(colon + 1) >= sizeof(a->rname)) return -1;
    snprintf(a->rname, sizeof(a->rname), "%s", colon + 1);
    return 0;
}

static int parse_args(int argc, char **argv, acl_args_t *a) {
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--principal") == 0 && v) {
            const char *colon = strchr(v, ':');
            if (!colon || colon == v || !colon[1] || (size_t)(colon - v) >= sizeof(a->ptype) ||
                strlen(colon + 1) >= sizeof(a->pname)) {
                fprintf(stderr, "fluss: --principal wants TYPE:NAME, got '%s'\n", v);
                return 2;
            }
            snprintf(a->ptype, sizeof(a->ptype), "%.*s", (int)(colon - v), v);
            snprintf(a->pname, sizeof(a->pname), "%s", colon + 1);
            a->has_principal = true;
            i++;
        } else if (strcmp(argv[i], "--operation") == 0 && v) {
            a->operation = fluss_acl_operation_parse(v);
            if (!a->operation) {
                fprintf(stderr, "fluss: unknown operation '%s'\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(argv[i], "--resource") == 0 && v) {
            if (parse_resource(v, a)) {
                fprintf(stderr, "fluss: --resource wants cluster, database:DB or table:DB.T, "
                                "got '%s'\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(argv[i], "--host") == 0 && v) {
            a->host = v;
            i++;
        } else {
            fprintf(stderr, "fluss: unexpected argument '%s'\n\n", argv[i]);
            usage_acl(stderr);
            return 2;
        }
    }
    return 0;
}

static fluss_acl_t to_acl(acl_args_t *a) {
    fluss_acl_t x = {
        .resource_type = a->rtype ? a->rtype : FLUSS_ACL_RESOURCE_ANY,
        .resource_name = a->rtype ? a->rname : NULL,
        .principal_type = a->has_principal ? a->ptype : NULL,
        .principal_name = a->has_principal ? a->pname : NULL,
        .host = (char *)a->host,
        .operation = a->operation ? a->operation : FLUSS_ACL_OP_ANY,
        .permission = 0,
    };
    return x;
}

static void print_acls(const fluss_acl_t *acls, size_t n) {
    printf("%-10s %-28s %-20s %-10s %-16s %s\n", "TYPE", "RESOURCE", "PRINCIPAL", "OPERATION",
           "HOST", "PERMISSION");
    for (size_t i = 0; i < n; i++) {
        const fluss_acl_t *a = &acls[i];
        char principal[700];
        snprintf(principal, sizeof(principal), "%s:%s", a->principal_type, a->principal_name);
        const char *op = fluss_acl_operation_name(a->operation);
        const char *type = fluss_acl_resource_type_name(a->resource_type);
        printf("%-10s %-28s %-20s %-10s %-16s %s\n", type ? type : "?", a->resource_name,
               principal, op ? op : "?", a->host,
               a->permission == FLUSS_ACL_PERMISSION_ALLOW ? "ALLOW" : "ANY");
    }
}

int fl_cli_acl(const char *bootstrap, int argc, char **argv) {
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        usage_acl(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    const char *sub = argv[0];
    acl_args_t a;
    int rc = parse_args(argc - 1, argv + 1, &a);
    if (rc) return rc;
    bool add = strcmp(sub, "add") == 0;
    if (!add && strcmp(sub, "list") != 0 && strcmp(sub, "drop") != 0) {
        fprintf(stderr, "fluss: unknown acl command '%s'\n\n", sub);
        usage_acl(stderr);
        return 2;
    }
    if (add && (!a.has_principal || !a.operation || !a.rtype ||
                a.operation == FLUSS_ACL_OP_ANY)) {
        fprintf(stderr, "fluss: acl add needs --principal, --operation (not ANY) and "
                        "--resource\n");
        return 2;
    }
    fluss_client_t *c = NULL;
    if (fl_cli_connect(bootstrap, &c)) return 1;
    fluss_error_t err;
    fluss_acl_t x = to_acl(&a);
    fluss_acl_t *out = NULL;
    size_t n = 0;
    if (add) {
        if (!x.host) x.host = "*";
        x.permission = FLUSS_ACL_PERMISSION_ALLOW;
        rc = fluss_acl_create(c, &x, 1, &err);
        if (!rc) printf("added 1 ACL\n");
    } else if (strcmp(sub, "list") == 0) {
        rc = fluss_acl_list(c, &x, &out, &n, &err);
        if (!rc) print_acls(out, n);
    } else {
        rc = fluss_acl_drop(c, &x, &out, &n, &err);
        if (!rc) {
            printf("dropped %zu ACL(s)\n", n);
            if (n) print_acls(out, n);
        }
    }
    fluss_acls_free(out, n);
    fluss_client_destroy(c);
    return rc ? fl_cli_fail(&err) : 0;
}
