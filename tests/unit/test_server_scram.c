/*
 * test_server_scram.c — a role's SCRAM users (server_scram.h) under load:
 * reader threads look credentials up (as the loops do for each SCRAM
 * exchange) while a writer publishes new sets (as NOTIFY_SCRAM_CREDENTIALS
 * does); a lookup finds a whole credential of the set it read, never a
 * freed or half-copied one, and after the last publish exactly its users.
 * Runs under ThreadSanitizer in `make test-tsan`.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common_alloc.h"
#include "server_scram.h"

#define USERS 8

/* Credential texts for user<i>, iterations 4096 + i (so a lookup can tell
 * which user's credential it got). */
static char *texts[USERS];

static void make_texts(void) {
    for (int i = 0; i < USERS; i++) {
        fl_scram_credential_t c;
        fl_error_t err;
        uint8_t salt[16];
        memset(salt, i, sizeof(salt));
        assert_int_equal(fl_scram_credential_make(FL_SCRAM_SHA256, "pw", 2, salt, sizeof(salt),
                                                  4096 + i, &c, &err), 0);
        texts[i] = fl_scram_credential_encode(&c);
    }
}

/* Publishes user0 .. user<n-1>. */
static void publish(fl_scram_users_t *u, int n) {
    fl_ms_scram_node_t nodes[USERS];
    const fl_ms_scram_node_t *ptrs[USERS];
    char names[USERS][16];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "user%d", i);
        nodes[i] = (fl_ms_scram_node_t){.user = names[i], .mechanism = "SCRAM-SHA-256",
                                        .credential = texts[i]};
        ptrs[i] = &nodes[i];
    }
    fl_scram_users_publish(u, ptrs, (size_t)n);
}

typedef struct reader {
    fl_scram_users_t *u;
    atomic_bool *stop;
    atomic_long lookups;
    bool broken;
} reader_t;

static void *read_loop(void *arg) {
    reader_t *r = arg;
    while (!atomic_load(r->stop)) {
        for (int i = 0; i < USERS; i++) {
            char name[16];
            snprintf(name, sizeof(name), "user%d", i);
            fl_scram_credential_t c;
            if (fl_scram_users_lookup(r->u, name, FL_SCRAM_SHA256, &c) &&
                (c.iterations != 4096 + i || c.salt_len != 16 || c.salt[0] != (uint8_t)i))
                r->broken = true;
            if (fl_scram_users_lookup(r->u, name, FL_SCRAM_SHA512, &c)) r->broken = true;
        }
        atomic_fetch_add(&r->lookups, 1);
    }
    return NULL;
}

static void test_publish_while_looking_up(void **state) {
    (void)state;
    make_texts();
    fl_scram_users_t *u = fl_scram_users_new();
    atomic_bool stop;
    atomic_init(&stop, false);
    reader_t rs[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        rs[i] = (reader_t){.u = u, .stop = &stop};
        atomic_init(&rs[i].lookups, 0);
        pthread_create(&th[i], NULL, read_loop, &rs[i]);
    }
    for (int round = 0;; round++) {
        publish(u, round % (USERS + 1));
        bool enough = round >= 100;
        for (int i = 0; i < 3; i++) enough = enough && atomic_load(&rs[i].lookups) >= 100;
        if (enough) break;
    }
    publish(u, 3);
    atomic_store(&stop, true);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_false(rs[i].broken);
    }
    assert_int_equal(fl_scram_users_count(u), 3);
    fl_scram_credential_t c;
    assert_true(fl_scram_users_lookup(u, "user2", FL_SCRAM_SHA256, &c));
    assert_int_equal(c.iterations, 4098);
    assert_false(fl_scram_users_lookup(u, "user3", FL_SCRAM_SHA256, &c));
    fl_scram_users_free(u);
    for (int i = 0; i < USERS; i++) fl_free(texts[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_publish_while_looking_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
