/*
 * cli_user.c — `fluss user add|delete|list`: SCRAM users (fluss-c's own).
 *
 *   fluss user add NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--iterations N]
 *   fluss user delete NAME [--mechanism M]
 *   fluss user list
 *
 * The new password comes from $FLUSS_NEW_PASSWORD, or the first line of
 * standard input — never from the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_data.h"
#include "fluss.h"

static void usage_user(FILE *f) {
    fprintf(f, "usage: fluss user add NAME [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] "
               "[--iterations N]\n"
               "       fluss user delete NAME [--mechanism M]\n"
               "       fluss user list\n"
               "\n"
               "add reads the password from $FLUSS_NEW_PASSWORD or the first line of stdin.\n");
}

static int read_password(char *buf, size_t cap) {
    const char *env = getenv("FLUSS_NEW_PASSWORD");
    if (env && *env) {
        if (strlen(env) >= cap) return -1;
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    if (!fgets(buf, (int)cap, stdin)) return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf[0] ? 0 : -1;
}

int fl_cli_user(const char *bootstrap, int argc, char **argv) {
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        usage_user(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;
    }
    const char *sub = argv[0], *name = NULL, *mechanism = "SCRAM-SHA-256";
    long iterations = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mechanism") == 0 && i + 1 < argc) {
            mechanism = argv[++i];
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            char *end;
            iterations = strtol(argv[++i], &end, 10);
            if (*end || iterations <= 0 || iterations > 100000000) {
                fprintf(stderr, "fluss: bad --iterations '%s'\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] != '-' && !name) {
            name = argv[i];
        } else {
            fprintf(stderr, "fluss: unexpected argument '%s'\n\n", argv[i]);
            usage_user(stderr);
            return 2;
        }
    }
    bool list = strcmp(sub, "list") == 0;
    if (!list && strcmp(sub, "add") != 0 && strcmp(sub, "delete") != 0) {
        fprintf(stderr, "fluss: unknown user command '%s'\n\n", sub);
        usage_user(stderr);
        return 2;
    }
    if (!list && !name) {
        fprintf(stderr, "fluss: user %s needs a NAME\n", sub);
        return 2;
    }
    char password[1024];
    if (strcmp(sub, "add") == 0 && read_password(password, sizeof(password))) {
        fprintf(stderr, "fluss: no password: set $FLUSS_NEW_PASSWORD or give it on stdin\n");
        return 2;
    }
    fluss_client_t *c = NULL;
    if (fl_cli_connect(bootstrap, &c)) return 1;
    fluss_error_t err;
    int rc;
    if (list) {
        fluss_scram_user_t *users = NULL;
        size_t n = 0;
        rc = fluss_scram_user_list(c, &users, &n, &err);
        if (!rc) {
            printf("%-24s %-14s %s\n", "USER", "MECHANISM", "ITERATIONS");
            for (size_t i = 0; i < n; i++)
                printf("%-24s %-14s %d\n", users[i].user, users[i].mechanism, users[i].iterations);
        }
        fluss_scram_users_free(users, n);
    } else if (strcmp(sub, "add") == 0) {
        rc = fluss_scram_user_set(c, name, mechanism, password, (int)iterations, &err);
        memset(password, 0, sizeof(password));
        if (!rc) printf("user %s: %s credential set\n", name, mechanism);
    } else {
        rc = fluss_scram_user_delete(c, name, mechanism, &err);
        if (!rc) printf("user %s: %s credential deleted\n", name, mechanism);
    }
    fluss_client_destroy(c);
    return rc ? fl_cli_fail(&err) : 0;
}
