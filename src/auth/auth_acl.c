/*
 * auth_acl.c — the ACL model of DefaultAuthorizer (auth_acl.h): names and
 * codes, bindings and filters, the per-resource index, the ZooKeeper
 * document of one resource, super.users and the decision.
 *
 * The set is a sorted array of resources (type, then name bytewise), each
 * with its bindings in insertion order. Each resource also keeps `first`,
 * the position of its first binding in the whole set, so fl_acl_set_at is
 * a binary search and a check looks up at most four resources. Mutations
 * (ACL DDL, change notifications) are rare and pay the O(resources)
 * renumbering; checks are on every request.
 */
#include "auth_acl.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common_alloc.h"

/* ------------------------------------------------------------------ */
/* names and codes                                                     */

static const char *const FL_ACL_RES_NAMES[] = {NULL, "ANY", "CLUSTER", "DATABASE", "TABLE"};
static const char *const FL_ACL_OP_NAMES[] = {NULL,     "ANY",  "ALL",   "READ",    "WRITE",
                                              "CREATE", "DROP", "ALTER", "DESCRIBE"};
static const char *const FL_ACL_PERM_NAMES[] = {NULL, "ANY", "ALLOW"};

#define FL_ACL_COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static const char *fl_acl_name_of(const char *const *names, int32_t n, int32_t code) {
    return code > 0 && code < n ? names[code] : NULL;
}

/* exact: Enum.valueOf (the stored document); else fromName's ignore-case */
static int32_t fl_acl_code_of(const char *const *names, int32_t n, const char *s, bool exact) {
    if (!s) return 0;
    for (int32_t i = 1; i < n; i++)
        if (exact ? strcmp(names[i], s) == 0 : strcasecmp(names[i], s) == 0) return i;
    return 0;
}

const char *fl_acl_resource_type_name(int32_t t) {
    return fl_acl_name_of(FL_ACL_RES_NAMES, FL_ACL_COUNT(FL_ACL_RES_NAMES), t);
}
const char *fl_acl_operation_name(int32_t op) {
    return fl_acl_name_of(FL_ACL_OP_NAMES, FL_ACL_COUNT(FL_ACL_OP_NAMES), op);
}
const char *fl_acl_permission_name(int32_t p) {
    return fl_acl_name_of(FL_ACL_PERM_NAMES, FL_ACL_COUNT(FL_ACL_PERM_NAMES), p);
}
int32_t fl_acl_operation_from_name(const char *s) {
    return fl_acl_code_of(FL_ACL_OP_NAMES, FL_ACL_COUNT(FL_ACL_OP_NAMES), s, false);
}
int32_t fl_acl_permission_from_name(const char *s) {
    return fl_acl_code_of(FL_ACL_PERM_NAMES, FL_ACL_COUNT(FL_ACL_PERM_NAMES), s, false);
}
int32_t fl_acl_resource_type_from_name(const char *s) {
    return fl_acl_code_of(FL_ACL_RES_NAMES, FL_ACL_COUNT(FL_ACL_RES_NAMES), s, false);
}

/* ------------------------------------------------------------------ */
/* bindings and filters                                                */

static char *fl_acl_dup(const char *s) { return s ? fl_strdup(s) : NULL; }

static bool fl_acl_str_eq(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

void fl_acl_binding_clear(fl_acl_binding_t *b) {
    if (!b) return;
    fl_free(b->resource_name);
    fl_free(b->principal_type);
    fl_free(b->principal_name);
    fl_free(b->host);
    *b = (fl_acl_binding_t){.resource_type = 0};
}

void fl_acl_binding_copy(fl_acl_binding_t *dst, const fl_acl_binding_t *src) {
    *dst = (fl_acl_binding_t){
        .resource_type = src->resource_type,
        .resource_name = fl_acl_dup(src->resource_name),
        .principal_type = fl_acl_dup(src->principal_type),
        .principal_name = fl_acl_dup(src->principal_name),
        .host = fl_acl_dup(src->host),
        .operation = src->operation,
        .permission = src->permission,
    };
}

/* AccessControlEntry.equals: everything but the resource */
static bool fl_acl_entry_equal(const fl_acl_binding_t *a, const fl_acl_binding_t *b) {
    return a->operation == b->operation && a->permission == b->permission &&
           fl_acl_str_eq(a->principal_type, b->principal_type) &&
           fl_acl_str_eq(a->principal_name, b->principal_name) && fl_acl_str_eq(a->host, b->host);
}

bool fl_acl_binding_equal(const fl_acl_binding_t *a, const fl_acl_binding_t *b) {
    return a->resource_type == b->resource_type &&
           fl_acl_str_eq(a->resource_name, b->resource_name) && fl_acl_entry_equal(a, b);
}

/* ResourceFilter.matches: type ANY matches everything, name included */
static bool fl_acl_filter_matches_resource(const fl_acl_filter_t *f, int32_t type,
                                           const char *name) {
    if (f->resource_type == FL_ACL_RES_ANY) return true;
    return f->resource_type == type && (!f->resource_name || fl_acl_str_eq(f->resource_name, name));
}

/* AccessControlEntryFilter.matches; a half-given principal is "any", as
 * the wire conversion builds a principal only from both fields */
static bool fl_acl_filter_matches_entry(const fl_acl_filter_t *f, const fl_acl_binding_t *b) {
    if (f->principal_type && f->principal_name &&
        !(fl_acl_str_eq(f->principal_type, b->principal_type) &&
          fl_acl_str_eq(f->principal_name, b->principal_name)))
        return false;
    if (f->host && !fl_acl_str_eq(f->host, b->host)) return false;
    if (f->operation != FL_ACL_OP_ANY && f->operation != b->operation) return false;
    return f->permission == FL_ACL_PERM_ANY || f->permission == b->permission;
}

bool fl_acl_filter_matches(const fl_acl_filter_t *f, const fl_acl_binding_t *b) {
    return fl_acl_filter_matches_resource(f, b->resource_type, b->resource_name) &&
           fl_acl_filter_matches_entry(f, b);
}

/* ------------------------------------------------------------------ */
/* UTF-8: the stored document must be; protobuf-c does not check        */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF — what jansson accepts), 0 if none. */
static size_t fl_acl_utf8_len(const unsigned char *p) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (p[1] < lo || p[1] > hi) return 0; /* also stops at the NUL */
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

/* The bytes s takes once written as JSON's UTF-8 (fl_acl_utf8_clean). */
static size_t fl_acl_utf8_clean_len(const char *s) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = fl_acl_utf8_len(p);
        n += k ? k : 3;
        p += k ? k : 1;
    }
    return n;
}

/* s with U+FFFD for each byte that starts no valid sequence */
static char *fl_acl_utf8_clean(const char *s) {
    char *out = fl_malloc(fl_acl_utf8_clean_len(s) + 1), *w = out;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t k = fl_acl_utf8_len(p);
        if (k) {
            memcpy(w, p, k);
            w += k, p += k;
        } else {
            memcpy(w, "\xEF\xBF\xBD", 3);
            w += 3, p++;
        }
    }
    *w = '\0';
    return out;
}

/* ------------------------------------------------------------------ */
/* what may enter a set                                                */

static int fl_acl_check_string(const char *what, const char *v, fl_error_t *err) {
    if (!v) return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ACL binding has no %s", what);
    size_t n = fl_acl_utf8_clean_len(v); /* as written to the document */
    if (n > FL_ACL_STRING_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "ACL binding's %s is %zu bytes, over %d",
                          what, n, FL_ACL_STRING_MAX);
    return 0;
}

int fl_acl_binding_check(const fl_acl_binding_t *b, fl_error_t *err) {
    if (!fl_acl_resource_type_name(b->resource_type))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "Unknown resource type code %d",
                          b->resource_type);
    if (!fl_acl_operation_name(b->operation))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "Unknown operation type code: %d",
                          b->operation);
    if (!fl_acl_permission_name(b->permission))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "Unknown permission type: %d",
                          b->permission);
    int rc = fl_acl_check_string("resource name", b->resource_name, err);
    if (!rc) rc = fl_acl_check_string("principal type", b->principal_type, err);
    if (!rc) rc = fl_acl_check_string("principal name", b->principal_name, err);
    if (!rc) rc = fl_acl_check_string("host", b->host, err);
    return rc;
}

/* ------------------------------------------------------------------ */
/* the set                                                             */

typedef struct fl_acl_resource {
    int32_t type;
    char *name;
    size_t name_len;
    fl_acl_binding_t *bindings; /* insertion order; each carries type and name */
    size_t count, cap;
    size_t first; /* position of bindings[0] in the whole set */
} fl_acl_resource_t;

struct fl_acl_set {
    fl_acl_resource_t *res; /* sorted by type, then name bytewise; none empty */
    size_t count, cap;
    size_t total;
};

fl_acl_set_t *fl_acl_set_new(void) { return fl_calloc(1, sizeof(fl_acl_set_t)); }

static void fl_acl_resource_free(fl_acl_resource_t *r) {
    for (size_t i = 0; i < r->count; i++) fl_acl_binding_clear(&r->bindings[i]);
    fl_free(r->bindings);
    fl_free(r->name);
}

void fl_acl_set_free(fl_acl_set_t *s) {
    if (!s) return;
    for (size_t i = 0; i < s->count; i++) fl_acl_resource_free(&s->res[i]);
    fl_free(s->res);
    fl_free(s);
}

fl_acl_set_t *fl_acl_set_copy(const fl_acl_set_t *s) {
    fl_acl_set_t *c = fl_acl_set_new();
    if (!s || !s->count) return c;
    c->res = fl_calloc(s->count, sizeof(*c->res));
    c->count = c->cap = s->count;
    c->total = s->total;
    for (size_t i = 0; i < s->count; i++) {
        const fl_acl_resource_t *from = &s->res[i];
        fl_acl_resource_t *to = &c->res[i];
        *to = (fl_acl_resource_t){
            .type = from->type,
            .name = fl_strdup(from->name),
            .name_len = from->name_len,
            .bindings = fl_calloc(from->count, sizeof(fl_acl_binding_t)),
            .count = from->count,
            .cap = from->count,
            .first = from->first,
        };
        for (size_t j = 0; j < from->count; j++)
            fl_acl_binding_copy(&to->bindings[j], &from->bindings[j]);
    }
    return c;
}

/* (type, name[0..len)) against r, in the set's order */
static int fl_acl_key_cmp(int32_t type, const char *name, size_t len, const fl_acl_resource_t *r) {
    if (type != r->type) return type < r->type ? -1 : 1;
    int c = memcmp(name, r->name, len < r->name_len ? len : r->name_len);
    if (c) return c;
    return len < r->name_len ? -1 : len > r->name_len;
}

/* true if found; *pos is its index, or where it would go */
static bool fl_acl_find(const fl_acl_set_t *s, int32_t type, const char *name, size_t len,
                        size_t *pos) {
    size_t lo = 0, hi = s ? s->count : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = fl_acl_key_cmp(type, name, len, &s->res[mid]);
        if (c == 0) {
            *pos = mid;
            return true;
        }
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    *pos = lo;
    return false;
}

static const fl_acl_resource_t *fl_acl_lookup(const fl_acl_set_t *s, int32_t type,
                                              const char *name, size_t len) {
    size_t pos;
    return fl_acl_find(s, type, name, len, &pos) ? &s->res[pos] : NULL;
}

/* recomputes `first` from resource `from` on, and the total */
static void fl_acl_renumber(fl_acl_set_t *s, size_t from) {
    size_t at = 0;
    if (from > 0 && from <= s->count) at = s->res[from - 1].first + s->res[from - 1].count;
    for (size_t i = from; i < s->count; i++) {
        s->res[i].first = at;
        at += s->res[i].count;
    }
    s->total = at;
}

static fl_acl_resource_t *fl_acl_insert_resource(fl_acl_set_t *s, size_t pos, int32_t type,
                                                 const char *name) {
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->res = fl_realloc(s->res, s->cap * sizeof(*s->res));
    }
    memmove(&s->res[pos + 1], &s->res[pos], (s->count - pos) * sizeof(*s->res));
    s->count++;
    s->res[pos] = (fl_acl_resource_t){
        .type = type, .name = fl_strdup(name), .name_len = strlen(name)};
    return &s->res[pos];
}

static void fl_acl_erase_resource(fl_acl_set_t *s, size_t pos) {
    fl_acl_resource_free(&s->res[pos]);
    memmove(&s->res[pos], &s->res[pos + 1], (s->count - pos - 1) * sizeof(*s->res));
    s->count--;
}

static bool fl_acl_resource_holds(const fl_acl_resource_t *r, const fl_acl_binding_t *b) {
    for (size_t i = 0; i < r->count; i++)
        if (fl_acl_entry_equal(&r->bindings[i], b)) return true;
    return false;
}

/* appends a copy of b's entry under r's own type and name */
static void fl_acl_resource_push(fl_acl_resource_t *r, const fl_acl_binding_t *b) {
    if (r->count == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->bindings = fl_realloc(r->bindings, r->cap * sizeof(*r->bindings));
    }
    fl_acl_binding_t *x = &r->bindings[r->count++];
    fl_acl_binding_copy(x, b);
    fl_free(x->resource_name);
    x->resource_type = r->type;
    x->resource_name = fl_strdup(r->name);
}

bool fl_acl_set_add(fl_acl_set_t *s, const fl_acl_binding_t *b) {
    assert(b->resource_name && b->principal_type && b->principal_name && b->host);
    assert(fl_acl_operation_name(b->operation) && fl_acl_permission_name(b->permission));
    size_t pos;
    fl_acl_resource_t *r;
    if (fl_acl_find(s, b->resource_type, b->resource_name, strlen(b->resource_name), &pos)) {
        r = &s->res[pos];
        if (fl_acl_resource_holds(r, b)) return false;
    } else {
        r = fl_acl_insert_resource(s, pos, b->resource_type, b->resource_name);
    }
    fl_acl_resource_push(r, b);
    fl_acl_renumber(s, pos);
    return true;
}

/* moves r's bindings that f matches to the end of *out; returns how many */
static size_t fl_acl_resource_take(fl_acl_resource_t *r, const fl_acl_filter_t *f,
                                   fl_acl_binding_t **out, size_t *n_out) {
    size_t hits = 0;
    for (size_t i = 0; i < r->count; i++) hits += fl_acl_filter_matches_entry(f, &r->bindings[i]);
    if (!hits) return 0;
    *out = fl_realloc(*out, (*n_out + hits) * sizeof(**out));
    size_t keep = 0;
    for (size_t i = 0; i < r->count; i++) {
        if (fl_acl_filter_matches_entry(f, &r->bindings[i])) (*out)[(*n_out)++] = r->bindings[i];
        else r->bindings[keep++] = r->bindings[i];
    }
    r->count = keep;
    return hits;
}

size_t fl_acl_set_remove(fl_acl_set_t *s, const fl_acl_filter_t *f, fl_acl_binding_t **removed,
                         size_t *n_removed) {
    size_t taken = 0, changed = s->count;
    for (size_t i = 0; i < s->count;) {
        fl_acl_resource_t *r = &s->res[i];
        size_t n = 0;
        if (fl_acl_filter_matches_resource(f, r->type, r->name))
            n = fl_acl_resource_take(r, f, removed, n_removed);
        if (n && i < changed) changed = i;
        taken += n;
        if (n && r->count == 0) fl_acl_erase_resource(s, i);
        else i++;
    }
    if (taken) fl_acl_renumber(s, changed);
    return taken;
}

size_t fl_acl_set_count(const fl_acl_set_t *s) { return s ? s->total : 0; }

const fl_acl_binding_t *fl_acl_set_at(const fl_acl_set_t *s, size_t i) {
    assert(i < fl_acl_set_count(s));
    /* the last resource whose first binding is at or before i */
    size_t lo = 0, hi = s->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->res[mid].first <= i) lo = mid;
        else hi = mid;
    }
    const fl_acl_resource_t *r = &s->res[lo];
    assert(i >= r->first && i - r->first < r->count);
    return &r->bindings[i - r->first];
}

size_t fl_acl_set_resource_count(const fl_acl_set_t *s) { return s ? s->count : 0; }

void fl_acl_set_resource_at(const fl_acl_set_t *s, size_t i, int32_t *type, const char **name) {
    assert(i < fl_acl_set_resource_count(s));
    *type = s->res[i].type;
    *name = s->res[i].name;
}

size_t fl_acl_set_resource_size(const fl_acl_set_t *s, int32_t type, const char *name) {
    const fl_acl_resource_t *r = fl_acl_lookup(s, type, name, strlen(name));
    return r ? r->count : 0;
}

/* ------------------------------------------------------------------ */
/* the ZooKeeper document of one resource                              */

static json_t *fl_acl_json_string(const char *s) {
    json_t *j = json_string(s);
    if (!j) {
        char *clean = fl_acl_utf8_clean(s);
        j = json_string(clean);
        fl_free(clean);
    }
    if (!j) abort(); /* out of memory: jansson has no other failure here */
    return j;
}

static json_t *fl_acl_entry_json(const fl_acl_binding_t *b) {
    json_t *o = json_object();
    /* ResourceAclJsonSerde's key order */
    json_object_set_new(o, "principal_type", fl_acl_json_string(b->principal_type));
    json_object_set_new(o, "principal_name", fl_acl_json_string(b->principal_name));
    json_object_set_new(o, "permission_type", json_string(fl_acl_permission_name(b->permission)));
    json_object_set_new(o, "host", fl_acl_json_string(b->host));
    json_object_set_new(o, "operation", json_string(fl_acl_operation_name(b->operation)));
    return o;
}

char *fl_acl_resource_json(const fl_acl_set_t *s, int32_t type, const char *name) {
    const fl_acl_resource_t *r = fl_acl_lookup(s, type, name, strlen(name));
    if (!r) return NULL;
    json_t *acls = json_array();
    for (size_t i = 0; i < r->count; i++)
        json_array_append_new(acls, fl_acl_entry_json(&r->bindings[i]));
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "acls", acls);
    char *text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text) abort();
    char *out = fl_strdup(text);
    free(text); /* jansson's own allocation */
    return out;
}

/* the decoded entries of one document, before they replace the resource */
typedef struct fl_acl_doc {
    int32_t type;
    const char *name;
    fl_acl_resource_t r; /* a detached resource: not in any set yet */
} fl_acl_doc_t;

static const char *const FL_ACL_ENTRY_KEYS[] = {"principal_type", "principal_name",
                                                "permission_type", "host", "operation"};
#define FL_ACL_ENTRY_KEY_COUNT (sizeof(FL_ACL_ENTRY_KEYS) / sizeof(FL_ACL_ENTRY_KEYS[0]))

static int fl_acl_doc_string(const json_t *o, size_t idx, const char *key, const char **out,
                             fl_error_t *err) {
    const json_t *v = json_object_get(o, key);
    if (!v) return fl_err_set(err, FLUSS_ERR__CORRUPT, "acls[%zu] has no \"%s\"", idx, key);
    if (!json_is_string(v))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "acls[%zu].%s is not a string", idx, key);
    if (json_string_length(v) > FL_ACL_STRING_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "acls[%zu].%s is %zu bytes, over %d", idx, key,
                          json_string_length(v), FL_ACL_STRING_MAX);
    *out = json_string_value(v);
    return 0;
}

static int fl_acl_doc_unknown_key(const json_t *o, const char *where, const char *const *keys,
                                  size_t n, fl_error_t *err) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        bool known = false;
        for (size_t i = 0; i < n; i++) known |= strcmp(key, keys[i]) == 0;
        if (!known)
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "%s has an unknown key \"%.64s\"", where,
                              key);
    }
    return 0;
}

/* one element of "acls" into b (b's strings borrowed from the document) */
static int fl_acl_doc_entry(const json_t *o, size_t idx, fl_acl_binding_t *b, fl_error_t *err) {
    if (!json_is_object(o))
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "acls[%zu] is not an object", idx);
    const char *v[FL_ACL_ENTRY_KEY_COUNT];
    for (size_t k = 0; k < FL_ACL_ENTRY_KEY_COUNT; k++) {
        int rc = fl_acl_doc_string(o, idx, FL_ACL_ENTRY_KEYS[k], &v[k], err);
        if (rc) return rc;
    }
    char where[32];
    snprintf(where, sizeof(where), "acls[%zu]", idx);
    int rc = fl_acl_doc_unknown_key(o, where, FL_ACL_ENTRY_KEYS, FL_ACL_ENTRY_KEY_COUNT, err);
    if (rc) return rc;
    const char *perm_name = v[2], *op_name = v[4];
    /* Enum.valueOf: exact names only */
    int32_t perm = fl_acl_code_of(FL_ACL_PERM_NAMES, FL_ACL_COUNT(FL_ACL_PERM_NAMES), perm_name,
                                  true);
    int32_t op = fl_acl_code_of(FL_ACL_OP_NAMES, FL_ACL_COUNT(FL_ACL_OP_NAMES), op_name, true);
    if (!perm)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "acls[%zu].permission_type \"%.64s\" is not a permission type "
                          "(ANY, ALLOW)", idx, perm_name);
    if (!op)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "acls[%zu].operation \"%.64s\" is not an operation type (ANY, ALL, "
                          "READ, WRITE, CREATE, DROP, ALTER, DESCRIBE)", idx, op_name);
    *b = (fl_acl_binding_t){
        .principal_type = (char *)v[0],
        .principal_name = (char *)v[1],
        .host = (char *)v[3],
        .operation = op,
        .permission = perm,
    };
    return 0;
}

static const char *const FL_ACL_DOC_KEYS[] = {"version", "acls"};

static int fl_acl_doc_root(const json_t *root, const json_t **acls, fl_error_t *err) {
    if (!json_is_object(root)) return fl_err_set(err, FLUSS_ERR__CORRUPT, "not a JSON object");
    const json_t *version = json_object_get(root, "version");
    if (!version) return fl_err_set(err, FLUSS_ERR__CORRUPT, "no \"version\"");
    if (!json_is_integer(version) || json_integer_value(version) != 1)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "\"version\" is not 1");
    *acls = json_object_get(root, "acls");
    if (!*acls) return fl_err_set(err, FLUSS_ERR__CORRUPT, "no \"acls\"");
    if (!json_is_array(*acls)) return fl_err_set(err, FLUSS_ERR__CORRUPT, "\"acls\" is not a list");
    return fl_acl_doc_unknown_key(root, "the document", FL_ACL_DOC_KEYS, 2, err);
}

/* root's entries into doc->r, duplicates collapsed (a HashSet in 0.9.1) */
static int fl_acl_doc_decode(const json_t *root, fl_acl_doc_t *doc, fl_error_t *err) {
    const json_t *acls = NULL;
    int rc = fl_acl_doc_root(root, &acls, err);
    if (rc) return rc;
    for (size_t i = 0; i < json_array_size(acls); i++) {
        fl_acl_binding_t b;
        rc = fl_acl_doc_entry(json_array_get(acls, i), i, &b, err);
        if (rc) return rc;
        if (!fl_acl_resource_holds(&doc->r, &b)) fl_acl_resource_push(&doc->r, &b);
    }
    return 0;
}

/* doc->r takes the place of the resource (dropping it when empty) */
static void fl_acl_doc_install(fl_acl_set_t *s, fl_acl_doc_t *doc) {
    size_t pos;
    bool found = fl_acl_find(s, doc->type, doc->name, strlen(doc->name), &pos);
    if (doc->r.count == 0) {
        if (found) fl_acl_erase_resource(s, pos);
    } else {
        if (!found) fl_acl_insert_resource(s, pos, doc->type, doc->name);
        fl_acl_resource_t *r = &s->res[pos];
        for (size_t i = 0; i < r->count; i++) fl_acl_binding_clear(&r->bindings[i]);
        fl_free(r->bindings);
        r->bindings = doc->r.bindings;
        r->count = doc->r.count;
        r->cap = doc->r.cap;
        doc->r.bindings = NULL;
        doc->r.count = doc->r.cap = 0;
    }
    fl_acl_renumber(s, pos);
}

static int fl_acl_load(fl_acl_set_t *s, int32_t type, const char *name, const char *json,
                       size_t len, fl_error_t *err) {
    if (len > FL_ACL_JSON_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "%zu bytes, over %u", len,
                          FL_ACL_JSON_BYTES_MAX);
    json_error_t je;
    json_t *root = json_loadb(json ? json : "", json ? len : 0, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "not JSON: %s (line %d, column %d)", je.text,
                          je.line, je.column);
    fl_acl_doc_t doc = {.type = type, .name = name, .r = {.type = type, .name = (char *)name}};
    int rc = fl_acl_doc_decode(root, &doc, err);
    if (rc == 0) fl_acl_doc_install(s, &doc);
    doc.r.name = NULL; /* borrowed: free only what is left of its bindings */
    fl_acl_resource_free(&doc.r);
    json_decref(root);
    return rc;
}

int fl_acl_set_load_resource(fl_acl_set_t *s, int32_t type, const char *name, const char *json,
                             size_t len, fl_error_t *err) {
    assert(s && name);
    int rc = fl_acl_load(s, type, name, json, len, err);
    if (rc) {
        const char *tn = fl_acl_resource_type_name(type);
        fl_err_prefix(err, "ACL document of %s '%.200s': ", tn ? tn : "UNKNOWN", name);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* super users                                                         */

typedef struct fl_acl_user {
    char *type;
    char *name;
} fl_acl_user_t;

struct fl_acl_super_users {
    fl_acl_user_t *users;
    size_t count;
};

/* String.trim: every byte up to ' ' */
static void fl_acl_trim(const char **start, const char **end) {
    while (*start < *end && (unsigned char)**start <= ' ') (*start)++;
    while (*end > *start && (unsigned char)(*end)[-1] <= ' ') (*end)--;
}

static int fl_acl_super_user_add(fl_acl_super_users_t *u, const char *start, const char *end,
                                 fl_error_t *err) {
    size_t n = (size_t)(end - start);
    const char *colon = memchr(start, ':', n);
    bool one_colon = colon && !memchr(colon + 1, ':', (size_t)(end - colon - 1));
    if (!one_colon || colon == start || colon + 1 == end)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "super.users: '%.*s' is not Type:name (e.g. User:admin)",
                          n > 200 ? 200 : (int)n, start);
    u->users = fl_realloc(u->users, (u->count + 1) * sizeof(*u->users));
    u->users[u->count++] = (fl_acl_user_t){
        .type = fl_strndup(start, (size_t)(colon - start)),
        .name = fl_strndup(colon + 1, (size_t)(end - colon - 1)),
    };
    return 0;
}

int fl_acl_super_users_parse(const char *text, fl_acl_super_users_t **out, fl_error_t *err) {
    fl_acl_super_users_t *u = fl_calloc(1, sizeof(*u));
    const char *p = text ? text : "";
    for (;;) {
        const char *semi = strchr(p, ';');
        const char *start = p, *end = semi ? semi : p + strlen(p);
        fl_acl_trim(&start, &end);
        if (start < end) {
            int rc = fl_acl_super_user_add(u, start, end, err);
            if (rc) {
                fl_acl_super_users_free(u);
                *out = NULL;
                return rc;
            }
        }
        if (!semi) break;
        p = semi + 1;
    }
    *out = u;
    return 0;
}

void fl_acl_super_users_free(fl_acl_super_users_t *u) {
    if (!u) return;
    for (size_t i = 0; i < u->count; i++) {
        fl_free(u->users[i].type);
        fl_free(u->users[i].name);
    }
    fl_free(u->users);
    fl_free(u);
}

size_t fl_acl_super_users_count(const fl_acl_super_users_t *u) { return u ? u->count : 0; }

bool fl_acl_is_super_user(const fl_acl_super_users_t *u, const fl_acl_principal_t *p) {
    for (size_t i = 0; u && i < u->count; i++)
        if (strcmp(u->users[i].type, p->type) == 0 && strcmp(u->users[i].name, p->name) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------ */
/* the decision                                                        */

/* OPS_MAPPING plus ALL: DESCRIBE is implied by READ..ALTER */
static bool fl_acl_op_implies(int32_t have, int32_t want) {
    if (have == FL_ACL_OP_ALL || have == want) return true;
    return want == FL_ACL_OP_DESCRIBE && have >= FL_ACL_OP_READ && have <= FL_ACL_OP_ALTER;
}

static bool fl_acl_entry_grants(const fl_acl_binding_t *b, const fl_acl_principal_t *p,
                                const char *host, int32_t op) {
    if (b->permission != FL_ACL_PERM_ALLOW) return false;
    bool wildcard = strcmp(b->principal_type, FL_ACL_WILDCARD) == 0 &&
                    strcmp(b->principal_name, FL_ACL_WILDCARD) == 0;
    if (!wildcard &&
        (strcmp(b->principal_type, p->type) != 0 || strcmp(b->principal_name, p->name) != 0))
        return false;
    if (strcmp(b->host, FL_ACL_WILDCARD) != 0 && !fl_acl_str_eq(b->host, host)) return false;
    return fl_acl_op_implies(b->operation, op);
}

/* who asks, from where, for what */
typedef struct fl_acl_query {
    const fl_acl_principal_t *p;
    const char *host;
    int32_t op;
} fl_acl_query_t;

static bool fl_acl_resource_grants(const fl_acl_set_t *s, int32_t type, const char *name,
                                   size_t len, const fl_acl_query_t *q) {
    const fl_acl_resource_t *r = fl_acl_lookup(s, type, name, len);
    for (size_t i = 0; r && i < r->count; i++)
        if (fl_acl_entry_grants(&r->bindings[i], q->p, q->host, q->op)) return true;
    return false;
}

/* RESOURCE_MAPPING: the resource and its parents */
static bool fl_acl_literal_grants(const fl_acl_set_t *s, int32_t type, const char *name,
                                  const fl_acl_query_t *q) {
    static const size_t cluster_len = sizeof(FL_ACL_CLUSTER_NAME) - 1;
    size_t len = strlen(name);
    switch (type) {
    case FL_ACL_RES_TABLE: {
        const char *dot = memchr(name, '.', len);
        size_t db_len = dot ? (size_t)(dot - name) : len;
        return fl_acl_resource_grants(s, FL_ACL_RES_TABLE, name, len, q) ||
               fl_acl_resource_grants(s, FL_ACL_RES_DATABASE, name, db_len, q) ||
               fl_acl_resource_grants(s, FL_ACL_RES_CLUSTER, FL_ACL_CLUSTER_NAME, cluster_len, q);
    }
    case FL_ACL_RES_DATABASE:
        return fl_acl_resource_grants(s, FL_ACL_RES_DATABASE, name, len, q) ||
               fl_acl_resource_grants(s, FL_ACL_RES_CLUSTER, FL_ACL_CLUSTER_NAME, cluster_len, q);
    case FL_ACL_RES_CLUSTER:
        return fl_acl_resource_grants(s, FL_ACL_RES_CLUSTER, name, len, q);
    default: /* ANY: no literal resources */
        return false;
    }
}

bool fl_acl_authorized(const fl_acl_set_t *s, const fl_acl_super_users_t *su,
                       const fl_acl_principal_t *p, const char *host, int32_t op,
                       int32_t resource_type, const char *resource_name) {
    assert(p && p->type && p->name && resource_name);
    if (fl_acl_is_super_user(su, p)) return true;
    fl_acl_query_t q = {.p = p, .host = host, .op = op};
    /* the same type's wildcard resource only: DATABASE "*" is no table's */
    return fl_acl_resource_grants(s, resource_type, FL_ACL_WILDCARD, 1, &q) ||
           fl_acl_literal_grants(s, resource_type, resource_name, &q);
}

void fl_acl_denial_message(char *buf, size_t cap, const fl_acl_principal_t *p, int32_t op,
                           int32_t resource_type, const char *resource_name) {
    const char *opn = fl_acl_operation_name(op), *tn = fl_acl_resource_type_name(resource_type);
    snprintf(buf, cap,
             "Principal FlussPrincipal{name='%s', type='%s'} have no authorization to operate %s "
             "on resource Resource{type=%s, name='%s'} ",
             p->name, p->type, opn ? opn : "UNKNOWN", tn ? tn : "UNKNOWN", resource_name);
}
