/*
 * auth_acl.h — the ACL model of Fluss 0.9.1's DefaultAuthorizer: bindings
 * of (resource, principal, host, operation, permission), the filters that
 * list and drop them (AclBindingFilter), the set of every ACL a server
 * knows, indexed by resource, the per-resource JSON document the reference
 * keeps in ZooKeeper (ResourceAclJsonSerde), super.users, and the
 * authorization decision with its denial message.
 *
 * Pure: no I/O, no locks, no globals. A set is owned by one thread; the
 * server layer publishes immutable copies (fl_acl_set_copy) to readers,
 * and any number of threads may read one set nobody mutates.
 *
 * The decision (acl_facts.md §1–§2): super users pass; otherwise an ALLOW
 * binding must exist on the resource, its parents (TABLE "db.t" ->
 * DATABASE "db" -> CLUSTER "fluss-cluster"), or the SAME type's wildcard
 * resource "*", for the principal or ("*","*"), host "*" or the client's
 * IP text, and operation op or ALL (DESCRIBE is also implied by READ,
 * WRITE, CREATE, DROP and ALTER). There is no DENY in 0.9.1; a binding
 * stored with permission ANY never grants. No ACL means no access.
 */
#ifndef FL_AUTH_ACL_H
#define FL_AUTH_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common_error.h"

/* codes as on the wire (PbAclInfo / PbAclFilter int32 fields) */
enum { FL_ACL_RES_ANY = 1, FL_ACL_RES_CLUSTER = 2, FL_ACL_RES_DATABASE = 3, FL_ACL_RES_TABLE = 4 };
enum {
    FL_ACL_OP_ANY = 1,
    FL_ACL_OP_ALL = 2,
    FL_ACL_OP_READ = 3,
    FL_ACL_OP_WRITE = 4,
    FL_ACL_OP_CREATE = 5,
    FL_ACL_OP_DROP = 6,
    FL_ACL_OP_ALTER = 7,
    FL_ACL_OP_DESCRIBE = 8
};
enum { FL_ACL_PERM_ANY = 1, FL_ACL_PERM_ALLOW = 2 };

#define FL_ACL_CLUSTER_NAME "fluss-cluster"
#define FL_ACL_WILDCARD "*"

/* Bounds of a stored resource document (fl_acl_set_load_resource): the
 * whole text, and each string value in it. ZooKeeper itself caps a znode
 * at about 1 MiB; the local store has no such cap, so ours is looser. */
#define FL_ACL_JSON_BYTES_MAX (16u << 20)
#define FL_ACL_STRING_MAX 65536

/* One ACL on one resource (AclBinding). Owns its strings. */
typedef struct fl_acl_binding {
    int32_t resource_type; /* CLUSTER, DATABASE, TABLE */
    char *resource_name;   /* "fluss-cluster", "db", "db.t", or "*" */
    char *principal_type;  /* "User", or "*" with name "*" = any principal */
    char *principal_name;
    char *host; /* "*" or an exact IP text */
    int32_t operation;
    int32_t permission;
} fl_acl_binding_t;

/* AclBindingFilter; NULL fields match anything. Borrows its strings. */
typedef struct fl_acl_filter {
    int32_t resource_type;     /* ANY matches every type and then ignores resource_name */
    const char *resource_name; /* exact: "*" matches only the wildcard resource itself */
    const char *principal_type, *principal_name; /* compared only when both are set */
    const char *host;                            /* exact: "*" matches only host "*" */
    int32_t operation;                           /* ANY = any; READ does not match ALL */
    int32_t permission;                          /* ANY = any */
} fl_acl_filter_t;

/* Enum names as the reference prints them ("CLUSTER", "DESCRIBE",
 * "ALLOW"); NULL for a code 0.9.1 does not know. */
const char *fl_acl_resource_type_name(int32_t t);
const char *fl_acl_operation_name(int32_t op);
const char *fl_acl_permission_name(int32_t p);
/* The code of a name, case-insensitive; 0 if unknown. */
int32_t fl_acl_operation_from_name(const char *s);
int32_t fl_acl_permission_from_name(const char *s);
int32_t fl_acl_resource_type_from_name(const char *s);

/* Frees b's strings (b itself is the caller's) and zeroes it. */
void fl_acl_binding_clear(fl_acl_binding_t *b);
/* dst becomes a deep copy of src; dst's old contents are not freed. */
void fl_acl_binding_copy(fl_acl_binding_t *dst, const fl_acl_binding_t *src);
/* Every field equal (strings case-sensitive), as AclBinding.equals. */
bool fl_acl_binding_equal(const fl_acl_binding_t *a, const fl_acl_binding_t *b);
/* ResourceFilter.matches && AccessControlEntryFilter.matches. */
bool fl_acl_filter_matches(const fl_acl_filter_t *f, const fl_acl_binding_t *b);
/* Whether b may enter a set: known codes (the messages of 0.9.1's
 * fromCode), every string set and at most FL_ACL_STRING_MAX bytes as
 * written to the document (see fl_acl_resource_json on U+FFFD), so that
 * its stored document loads again. FLUSS_ERR__INVALID_ARG if not.
 * Names (even ""), hosts, resource type ANY, operation ANY and
 * permission ANY are otherwise free, as in 0.9.1. */
int fl_acl_binding_check(const fl_acl_binding_t *b, fl_error_t *err);

/* Every ACL a server knows, indexed by resource (type, name) so a check
 * looks at a handful of resources, not every ACL. A resource exists while
 * it holds at least one binding. Not thread-safe; see the head comment. */
typedef struct fl_acl_set fl_acl_set_t;

fl_acl_set_t *fl_acl_set_new(void);
void fl_acl_set_free(fl_acl_set_t *s);
fl_acl_set_t *fl_acl_set_copy(const fl_acl_set_t *s);
/* Adds a copy of b; idempotent: true if b was not there. b must pass
 * fl_acl_binding_check (the caller's duty: wire bytes are checked, not
 * asserted, before they get here). */
bool fl_acl_set_add(fl_acl_set_t *s, const fl_acl_binding_t *b);
/* Removes every binding f matches, appending copies of them to *removed
 * (fl_realloc'd array of *n_removed entries; caller clears and frees).
 * Returns how many this call removed. Calling it once per filter in
 * request order gives DROP_ACLS's "lowest-index filter wins". */
size_t fl_acl_set_remove(fl_acl_set_t *s, const fl_acl_filter_t *f, fl_acl_binding_t **removed,
                         size_t *n_removed);
size_t fl_acl_set_count(const fl_acl_set_t *s);
/* All bindings, in a stable order: by resource type, then name (bytewise),
 * then insertion. Borrowed: valid until s next changes. */
const fl_acl_binding_t *fl_acl_set_at(const fl_acl_set_t *s, size_t i);
/* The resources that hold bindings, in the same order: count and i-th
 * (type, name; name borrowed until s next changes). */
size_t fl_acl_set_resource_count(const fl_acl_set_t *s);
void fl_acl_set_resource_at(const fl_acl_set_t *s, size_t i, int32_t *type, const char **name);
/* How many bindings resource (type, name) holds (0 if none). */
size_t fl_acl_set_resource_size(const fl_acl_set_t *s, int32_t type, const char *name);

/* One resource's bindings as the reference stores them in ZooKeeper
 * (/fluss-acls/<TYPE>/<name>), compact, keys in this order, bindings in
 * insertion order:
 *   {"version":1,"acls":[{"principal_type":"User","principal_name":"guest",
 *    "permission_type":"ALLOW","host":"*","operation":"READ"},...]}
 * NULL if the resource holds none; else free with fl_free. A string that
 * is not UTF-8 (protobuf-c does not check) is written with U+FFFD in place
 * of each byte that does not start a valid sequence: JSON must be UTF-8,
 * and Java's decoder would have replaced them on the way in. */
char *fl_acl_resource_json(const fl_acl_set_t *s, int32_t type, const char *name);
/* Replaces resource (type, name)'s bindings with those of json[0..len) (an
 * empty "acls" list removes the resource; duplicates collapse, as in the
 * reference's HashSet). Bytes from ZooKeeper or disk: a document that is
 * not exactly that shape — not JSON, a missing, unknown, repeated or
 * mistyped key, "version" other than 1, an operation or permission name
 * that is not an exact enum name, a string over FL_ACL_STRING_MAX bytes,
 * over FL_ACL_JSON_BYTES_MAX bytes in all — is refused with
 * FLUSS_ERR__CORRUPT and a message naming what is wrong, and s is
 * unchanged. */
int fl_acl_set_load_resource(fl_acl_set_t *s, int32_t type, const char *name, const char *json,
                             size_t len, fl_error_t *err);

/* The principal of a connection: type "User" and the SASL name, or
 * ("User", "ANONYMOUS") on a PLAINTEXT listener. Borrowed strings. */
typedef struct fl_acl_principal {
    const char *type;
    const char *name;
} fl_acl_principal_t;

/* super.users: "User:admin;User:bob" — entries split at ';', each trimmed
 * and then "Type:name" split at its one ':'. NULL, "" or empty entries
 * give nothing; an entry without exactly one ':' or with an empty side is
 * refused with FLUSS_ERR__INVALID_ARG (the reference would fail to start,
 * or silently drop what follows a second ':'). */
typedef struct fl_acl_super_users fl_acl_super_users_t;
int fl_acl_super_users_parse(const char *text, fl_acl_super_users_t **out, fl_error_t *err);
void fl_acl_super_users_free(fl_acl_super_users_t *u);
size_t fl_acl_super_users_count(const fl_acl_super_users_t *u);
/* u may be NULL (no super users). */
bool fl_acl_is_super_user(const fl_acl_super_users_t *u, const fl_acl_principal_t *p);

/* DefaultAuthorizer.authorizeAction (see the head comment). host is the
 * client's address text (NULL: only host "*" bindings apply). The
 * database of a TABLE "db.t" is the text before the FIRST '.' (all of it
 * when there is none). su may be NULL. Internal sessions are the caller's
 * business: they are never checked. */
bool fl_acl_authorized(const fl_acl_set_t *s, const fl_acl_super_users_t *su,
                       const fl_acl_principal_t *p, const char *host, int32_t op,
                       int32_t resource_type, const char *resource_name);

/* The reference's denial message (AuthorizationException, code 48),
 * trailing space included, cut to cap:
 * "Principal FlussPrincipal{name='guest', type='User'} have no
 * authorization to operate CREATE on resource Resource{type=CLUSTER,
 * name='fluss-cluster'} " */
void fl_acl_denial_message(char *buf, size_t cap, const fl_acl_principal_t *p, int32_t op,
                           int32_t resource_type, const char *resource_name);

#endif
