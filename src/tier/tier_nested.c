/*
 * tier_nested.c — nested columns into Parquet leaves with levels
 * (tier_nested.h). The Fluss type tree is kept in pre-order (tn_node_t,
 * a node's children right after it); each row walks it once, pushing a
 * (definition, repetition, value) entry onto every leaf it reaches.
 */
#include "tier_nested.h"

#include <string.h>

#include "arrow_rows.h"
#include "common_alloc.h"
#include "common_buf.h"
#include "tier_convert.h"
#include "types_row_nested.h"

#define TN_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

typedef struct tn_node {
    const fl_datatype_t *type;
    const char *name; /* for messages: the field, "element", "key", "value" */
    bool optional;
    int rep;          /* ARRAY, MAP: the repetition level of its elements */
    size_t next;      /* the node after this subtree */
    size_t leaf;      /* a primitive node: its leaf */
    size_t leaf_first, leaf_end;
    const fl_datatype_t **field_types; /* ROW: its fields' types, to decode it */
} tn_node_t;

typedef struct tn_leaf {
    fl_pq_column_spec_t spec;
    const fl_datatype_t *type;
    int max_def, max_rep;
    bool bounds;
    fl_buf_t def, rep; /* a byte per entry */
    fl_buf_t vals;     /* fl_tier_value_t per entry (zero for a null) */
    fl_buf_t offs;     /* BYTE_ARRAY: size_t offset into data per entry */
    fl_buf_t data;
    fl_buf_t out;      /* the writer's values, one slot per entry */
} tn_leaf_t;

/* Where each leaf stood before a row, so that a refused row leaves no
 * entry behind. */
typedef struct tn_mark {
    size_t entries, data;
} tn_mark_t;

struct fl_tier_nested {
    char *name;
    tn_node_t *nodes;
    size_t n_nodes;
    fl_pq_node_t *pq;
    size_t n_pq;
    tn_leaf_t *leaves;
    size_t n_leaves;
    tn_mark_t *marks; /* one per leaf */
    fl_row_t rows[FL_TYPE_DEPTH_MAX + 2]; /* a decoded level of an encoded value each */
    fl_row_t cell;                        /* one Arrow leaf slot as a cell */
    fl_buf_t scratch;
};

static bool is_nested(const fl_datatype_t *t) {
    return t->root == FL_TYPE_ARRAY || t->root == FL_TYPE_MAP || t->root == FL_TYPE_ROW;
}

static void shape_add(const fl_datatype_t *t, int depth, fl_tier_shape_t *s) {
    s->nodes++;
    if (depth > s->depth) s->depth = depth;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        s->repeated++;
        shape_add(t->element, depth + 1, s);
        return;
    case FL_TYPE_MAP:
        s->repeated++;
        shape_add(t->key, depth + 1, s);
        shape_add(t->value, depth + 1, s);
        return;
    case FL_TYPE_ROW:
        for (size_t i = 0; i < t->field_count; i++) shape_add(t->fields[i].type, depth + 1, s);
        return;
    default: s->leaves++; return;
    }
}

void fl_tier_nested_shape(const fl_datatype_t *t, fl_tier_shape_t *out) {
    memset(out, 0, sizeof(*out));
    shape_add(t, 0, out);
}

size_t fl_tier_nested_ids(const fl_datatype_t *t) {
    fl_tier_shape_t s;
    fl_tier_nested_shape(t, &s);
    return s.nodes;
}

typedef struct tn_build {
    fl_tier_nested_t *n;
    const int32_t *ids;
    size_t next_id;
    fl_error_t *err;
} tn_build_t;

static fl_pq_node_t *pq_group(tn_build_t *b, const char *name, int32_t id, int32_t repetition,
                              int32_t group, int32_t children) {
    fl_pq_node_t *p = &b->n->pq[b->n->n_pq++];
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->field_id = id;
    p->repetition = repetition;
    p->n_children = children;
    p->group = group;
    return p;
}

/* The subtree of t named name: its tn node, its Parquet nodes, its
 * leaves. def and rep are the parent's levels when present; required
 * forces REQUIRED (a map key). */
static int build(tn_build_t *b, const fl_datatype_t *t, const char *name, int def, int rep,
                 bool required, bool under_repeated) {
    fl_tier_nested_t *n = b->n;
    size_t me = n->n_nodes++;
    tn_node_t *node = &n->nodes[me];
    int32_t id = b->ids[b->next_id++];
    if (id <= 0)
        return fl_err_set(b->err, FLUSS_ERR__INVALID_ARG, "column %s: field id %d of %s", n->name,
                          id, name);
    node->type = t;
    node->name = name;
    node->optional = t->nullable && !required;
    node->leaf_first = n->n_leaves;
    int d = def + node->optional;
    int32_t repetition = node->optional ? FL_PQ_OPTIONAL : FL_PQ_REQUIRED;
    int rc = 0;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        node->rep = rep + 1;
        pq_group(b, name, id, repetition, FL_PQ_GROUP_LIST, 1);
        pq_group(b, "list", -1, FL_PQ_REPEATED, FL_PQ_GROUP_PLAIN, 1);
        rc = build(b, t->element, "element", d + 1, rep + 1, false, true);
        break;
    case FL_TYPE_MAP:
        node->rep = rep + 1;
        pq_group(b, name, id, repetition, FL_PQ_GROUP_MAP, 1);
        pq_group(b, "key_value", -1, FL_PQ_REPEATED, FL_PQ_GROUP_PLAIN, 2);
        rc = build(b, t->key, "key", d + 1, rep + 1, true, true);
        if (!rc) rc = build(b, t->value, "value", d + 1, rep + 1, false, true);
        break;
    case FL_TYPE_ROW:
        if (t->field_count == 0)
            return fl_err_set(b->err, FLUSS_ERR__INVALID_ARG, "column %s: a ROW without fields",
                              n->name);
        pq_group(b, name, id, repetition, FL_PQ_GROUP_PLAIN, (int32_t)t->field_count);
        node->field_types = fl_calloc(t->field_count, sizeof(*node->field_types));
        for (size_t i = 0; i < t->field_count; i++) node->field_types[i] = t->fields[i].type;
        for (size_t i = 0; i < t->field_count && !rc; i++)
            rc = build(b, t->fields[i].type, t->fields[i].name, d, rep, false, under_repeated);
        break;
    default: {
        tn_leaf_t *l = &n->leaves[n->n_leaves];
        rc = fl_tier_column_spec(name, t, id, &l->spec, b->err);
        if (rc) {
            fl_err_prefix(b->err, "column %s: ", n->name);
            return rc;
        }
        l->spec.optional = node->optional;
        l->type = t;
        l->max_def = d;
        l->max_rep = rep;
        l->bounds = !under_repeated;
        node->leaf = n->n_leaves++;
        fl_pq_node_t *p = pq_group(b, name, id, repetition, FL_PQ_GROUP_PLAIN, 0);
        p->type = l->spec.type;
        p->logical = l->spec.logical;
        p->type_length = l->spec.type_length;
        break;
    }
    }
    node = &n->nodes[me]; /* the array does not move; the pointer is re-read for clarity */
    node->next = n->n_nodes;
    node->leaf_end = n->n_leaves;
    return rc;
}

int fl_tier_nested_open(const char *name, const fl_datatype_t *t, const int32_t *ids,
                        fl_tier_nested_t **out, fl_error_t *err) {
    *out = NULL;
    fl_tier_shape_t sh;
    if (!is_nested(t))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s: not a nested type", name);
    fl_tier_nested_shape(t, &sh);
    if (sh.depth > FL_TYPE_DEPTH_MAX || sh.nodes + sh.repeated > 1 << 16)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s: its type nests too deep",
                          name);
    fl_tier_nested_t *n = fl_calloc(1, sizeof(*n));
    n->name = fl_strdup(name);
    n->nodes = fl_calloc(sh.nodes, sizeof(*n->nodes));
    n->pq = fl_calloc(sh.nodes + sh.repeated, sizeof(*n->pq));
    n->leaves = fl_calloc(sh.leaves ? sh.leaves : 1, sizeof(*n->leaves));
    n->marks = fl_calloc(sh.leaves ? sh.leaves : 1, sizeof(*n->marks));
    for (size_t i = 0; i < sizeof(n->rows) / sizeof(n->rows[0]); i++) fl_row_init(&n->rows[i], 1);
    fl_row_init(&n->cell, 1);
    fl_buf_init(&n->scratch);
    tn_build_t b = {.n = n, .ids = ids, .err = err};
    int rc = build(&b, t, n->name, 0, 0, false, false);
    if (rc) {
        fl_tier_nested_destroy(n);
        return rc;
    }
    *out = n;
    return 0;
}

void fl_tier_nested_destroy(fl_tier_nested_t *n) {
    if (!n) return;
    for (size_t i = 0; i < n->n_nodes; i++) fl_free(n->nodes[i].field_types);
    for (size_t i = 0; i < n->n_leaves; i++) {
        tn_leaf_t *l = &n->leaves[i];
        fl_buf_free(&l->def);
        fl_buf_free(&l->rep);
        fl_buf_free(&l->vals);
        fl_buf_free(&l->offs);
        fl_buf_free(&l->data);
        fl_buf_free(&l->out);
    }
    for (size_t i = 0; i < sizeof(n->rows) / sizeof(n->rows[0]); i++) fl_row_free(&n->rows[i]);
    fl_row_free(&n->cell);
    fl_buf_free(&n->scratch);
    fl_free(n->nodes);
    fl_free(n->pq);
    fl_free(n->leaves);
    fl_free(n->marks);
    fl_free(n->name);
    fl_free(n);
}

const fl_pq_node_t *fl_tier_nested_nodes(const fl_tier_nested_t *n, size_t *count) {
    *count = n->n_pq;
    return n->pq;
}

size_t fl_tier_nested_leaves(const fl_tier_nested_t *n) { return n->n_leaves; }

const fl_pq_column_spec_t *fl_tier_nested_leaf(const fl_tier_nested_t *n, size_t i,
                                               bool *bounds) {
    if (bounds) *bounds = n->leaves[i].bounds;
    return &n->leaves[i].spec;
}

void fl_tier_nested_reset(fl_tier_nested_t *n) {
    for (size_t i = 0; i < n->n_leaves; i++) {
        tn_leaf_t *l = &n->leaves[i];
        fl_buf_reset(&l->def);
        fl_buf_reset(&l->rep);
        fl_buf_reset(&l->vals);
        fl_buf_reset(&l->offs);
        fl_buf_reset(&l->data);
    }
}

/* ---- shredding ---- */

/* One entry of leaf l: the value of cell col of row when def is the
 * leaf's full definition (row NULL otherwise). */
static int push(fl_tier_nested_t *n, tn_leaf_t *l, int def, int rep, fl_row_t *row, size_t col,
                fl_error_t *err) {
    fl_tier_value_t v;
    memset(&v, 0, sizeof(v));
    size_t off = l->data.len;
    if (def == l->max_def) {
        fl_tier_pad_binary(row, col, l->type, &n->scratch);
        int rc = fl_tier_value_of(l->type, row, &row->cells[col], &v, err);
        if (rc) {
            fl_err_prefix(err, "column %s, field %s: ", n->name, l->spec.name);
            return TN_CORRUPT;
        }
        if (l->spec.type == FL_PQ_BYTE_ARRAY) {
            fl_buf_append(&l->data, v.bytes.p, v.bytes.len);
            v.bytes.p = NULL; /* fixed in fl_tier_nested_columns, once data stops moving */
        }
    }
    fl_buf_put_u8(&l->def, (uint8_t)def);
    fl_buf_put_u8(&l->rep, (uint8_t)rep);
    fl_buf_append(&l->vals, &v, sizeof(v));
    if (l->spec.type == FL_PQ_BYTE_ARRAY) fl_buf_append(&l->offs, &off, sizeof(off));
    return 0;
}

/* Every leaf below node ni reached only down to def (a NULL or empty
 * value there). */
static void absent(fl_tier_nested_t *n, size_t ni, int def, int rep) {
    const tn_node_t *node = &n->nodes[ni];
    for (size_t i = node->leaf_first; i < node->leaf_end; i++)
        (void)push(n, &n->leaves[i], def, rep, NULL, 0, NULL);
}

static int null_value(fl_tier_nested_t *n, size_t ni, int def, int rep, fl_error_t *err) {
    const tn_node_t *node = &n->nodes[ni];
    if (!node->optional)
        return fl_err_set(err, TN_CORRUPT, "column %s: a NULL %s where the type is NOT NULL",
                          n->name, ni == 0 ? "value" : node->name);
    absent(n, ni, def, rep);
    return 0;
}

static int shred_arrow(fl_tier_nested_t *n, size_t ni, const fl_arrow_array_t *a, int64_t i,
                       int def, int rep, fl_error_t *err) {
    const tn_node_t *node = &n->nodes[ni];
    if (!a || fl_arrow_array_is_null(a, i)) return null_value(n, ni, def, rep, err);
    int d = def + node->optional, rc = 0;
    int64_t s, e;
    switch (node->type->root) {
    case FL_TYPE_ARRAY:
        fl_arrow_array_child_range(a, i, &s, &e);
        if (s == e) absent(n, ni, d, rep);
        for (int64_t k = s; k < e && !rc; k++)
            rc = shred_arrow(n, ni + 1, &a->children[0], k, d + 1, k == s ? rep : node->rep, err);
        return rc;
    case FL_TYPE_MAP: {
        fl_arrow_array_child_range(a, i, &s, &e);
        if (s == e) absent(n, ni, d, rep);
        const fl_arrow_array_t *entries = &a->children[0];
        size_t key = ni + 1, value = n->nodes[key].next;
        for (int64_t k = s; k < e && !rc; k++) {
            int r = k == s ? rep : node->rep;
            rc = shred_arrow(n, key, &entries->children[0], k, d + 1, r, err);
            if (!rc) rc = shred_arrow(n, value, &entries->children[1], k, d + 1, r, err);
        }
        return rc;
    }
    case FL_TYPE_ROW: {
        size_t child = ni + 1;
        for (size_t f = 0; f < node->type->field_count && !rc; f++) {
            rc = shred_arrow(n, child, &a->children[f], i, d, rep, err);
            child = n->nodes[child].next;
        }
        return rc;
    }
    default:
        if ((rc = fl_arrow_row_read(a, 1, &node->type, i, &n->cell, err))) return rc;
        return push(n, &n->leaves[node->leaf], d, rep, &n->cell, 0, err);
    }
}

static int shred_encoded(fl_tier_nested_t *n, size_t ni, fl_row_format_t fmt, const uint8_t *p,
                         size_t len, int def, int rep, int depth, fl_error_t *err);

/* Cell col of row (a decoded element, entry or field) at node ni. */
static int shred_cell(fl_tier_nested_t *n, size_t ni, fl_row_format_t fmt, fl_row_t *row,
                      size_t col, int def, int rep, int depth, fl_error_t *err) {
    const tn_node_t *node = &n->nodes[ni];
    const fl_cell_t *c = &row->cells[col];
    if (c->is_null) return null_value(n, ni, def, rep, err);
    if (is_nested(node->type))
        return shred_encoded(n, ni, fmt, fl_row_cell_bytes(row, c), c->len, def, rep, depth + 1,
                             err);
    return push(n, &n->leaves[node->leaf], def + node->optional, rep, row, col, err);
}

/* Element k of array a at node ni, decoded into the row of this depth. */
static int shred_element(fl_tier_nested_t *n, size_t ni, fl_row_format_t fmt,
                         const fl_nested_array_t *a, int32_t k, int def, int rep, int depth,
                         fl_error_t *err) {
    fl_row_t *row = &n->rows[depth];
    fl_row_reset(row, 1);
    int rc = fl_nested_array_get(a, k, row, 0, err);
    if (rc) return rc;
    return shred_cell(n, ni, fmt, row, 0, def, rep, depth, err);
}

static int shred_encoded(fl_tier_nested_t *n, size_t ni, fl_row_format_t fmt, const uint8_t *p,
                         size_t len, int def, int rep, int depth, fl_error_t *err) {
    const tn_node_t *node = &n->nodes[ni];
    if (!p) return null_value(n, ni, def, rep, err);
    if (depth > FL_TYPE_DEPTH_MAX)
        return fl_err_set(err, TN_CORRUPT, "column %s: nested too deep", n->name);
    int d = def + node->optional, rc = 0;
    switch (node->type->root) {
    case FL_TYPE_ARRAY: {
        fl_nested_array_t a;
        if ((rc = fl_nested_array_view(p, len, node->type->element, &a, err))) return rc;
        if (a.count == 0) absent(n, ni, d, rep);
        for (int32_t k = 0; k < a.count && !rc; k++)
            rc = shred_element(n, ni + 1, fmt, &a, k, d + 1, k == 0 ? rep : node->rep, depth,
                               err);
        return rc;
    }
    case FL_TYPE_MAP: {
        fl_nested_map_t m;
        if ((rc = fl_nested_map_view(p, len, node->type, &m, err))) return rc;
        if (m.keys.count == 0) absent(n, ni, d, rep);
        size_t key = ni + 1, value = n->nodes[key].next;
        for (int32_t k = 0; k < m.keys.count && !rc; k++) {
            int r = k == 0 ? rep : node->rep;
            rc = shred_element(n, key, fmt, &m.keys, k, d + 1, r, depth, err);
            if (!rc) rc = shred_element(n, value, fmt, &m.values, k, d + 1, r, depth, err);
        }
        return rc;
    }
    case FL_TYPE_ROW: {
        fl_row_t *row = &n->rows[depth];
        size_t fields = node->type->field_count;
        if ((rc = fl_row_decode(fmt, p, len, node->field_types, fields, row, err))) return rc;
        size_t child = ni + 1;
        for (size_t f = 0; f < fields && !rc; f++) {
            rc = shred_cell(n, child, fmt, row, f, d, rep, depth, err);
            child = n->nodes[child].next;
        }
        return rc;
    }
    default: return fl_err_set(err, FLUSS_ERR__STATE, "column %s: not nested", n->name);
    }
}

/* A failed row leaves no entry behind: the leaves go back to where the
 * row began. */
static void mark(fl_tier_nested_t *n) {
    for (size_t i = 0; i < n->n_leaves; i++) {
        n->marks[i].entries = n->leaves[i].def.len;
        n->marks[i].data = n->leaves[i].data.len;
    }
}

static void rewind_to_mark(fl_tier_nested_t *n) {
    const tn_mark_t *m = n->marks;
    for (size_t i = 0; i < n->n_leaves; i++) {
        tn_leaf_t *l = &n->leaves[i];
        l->def.len = l->rep.len = m[i].entries;
        l->vals.len = m[i].entries * sizeof(fl_tier_value_t);
        if (l->spec.type == FL_PQ_BYTE_ARRAY) l->offs.len = m[i].entries * sizeof(size_t);
        l->data.len = m[i].data;
    }
}

int fl_tier_nested_add_arrow(fl_tier_nested_t *n, const fl_arrow_array_t *a, int64_t i,
                             fl_error_t *err) {
    mark(n);
    int rc = shred_arrow(n, 0, a, i, 0, 0, err);
    if (rc) rewind_to_mark(n);
    return rc;
}

int fl_tier_nested_add_encoded(fl_tier_nested_t *n, fl_row_format_t fmt, const uint8_t *p,
                               size_t len, fl_error_t *err) {
    mark(n);
    int rc = shred_encoded(n, 0, fmt, p, len, 0, 0, 0, err);
    if (rc) rewind_to_mark(n);
    return rc;
}

/* ---- out ---- */

static size_t slot_width(const fl_pq_column_spec_t *s) {
    switch (s->type) {
    case FL_PQ_BYTE_ARRAY: return sizeof(fl_pq_bytes_t);
    case FL_PQ_FLBA: return (size_t)s->type_length;
    default: return fl_pq_fixed_width(s->type);
    }
}

void fl_tier_nested_columns(fl_tier_nested_t *n, fl_pq_column_data_t *out) {
    for (size_t i = 0; i < n->n_leaves; i++) {
        tn_leaf_t *l = &n->leaves[i];
        size_t entries = l->def.len, width = slot_width(&l->spec);
        fl_tier_value_t *vals = (fl_tier_value_t *)l->vals.data;
        const size_t *offs = (const size_t *)l->offs.data;
        fl_buf_reset(&l->out);
        uint8_t *x = fl_buf_reserve(&l->out, entries * width + 1);
        memset(x, 0, entries * width);
        l->out.len = entries * width;
        for (size_t k = 0; k < entries; k++) {
            bool present = l->def.data[k] == l->max_def;
            fl_tier_value_t *v = &vals[k];
            if (present && l->spec.type == FL_PQ_BYTE_ARRAY)
                v->bytes.p = l->data.data ? l->data.data + offs[k] : (const uint8_t *)"";
            if (!present) continue;
            uint8_t *slot = x + k * width;
            switch (l->spec.type) {
            case FL_PQ_BOOLEAN: *slot = v->b; break;
            case FL_PQ_INT32: memcpy(slot, &v->i32, 4); break;
            case FL_PQ_INT64: memcpy(slot, &v->i64, 8); break;
            case FL_PQ_FLOAT: memcpy(slot, &v->f, 4); break;
            case FL_PQ_DOUBLE: memcpy(slot, &v->d, 8); break;
            case FL_PQ_BYTE_ARRAY: memcpy(slot, &v->bytes, sizeof(v->bytes)); break;
            default: memcpy(slot, v->fixed, width); break;
            }
        }
        memset(&out[i], 0, sizeof(out[i]));
        out[i].values = x;
        out[i].def = l->def.data;
        out[i].rep = l->max_rep ? l->rep.data : NULL;
        out[i].levels = entries;
    }
}

void fl_tier_nested_count(const fl_tier_nested_t *n, size_t i, fl_tier_metrics_t *m) {
    const tn_leaf_t *l = &n->leaves[i];
    const fl_tier_value_t *vals = (const fl_tier_value_t *)l->vals.data;
    for (size_t k = 0; k < l->def.len; k++)
        fl_tier_metrics_add(m, l->def.data[k] == l->max_def ? &vals[k] : NULL);
}
