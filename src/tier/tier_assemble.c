/*
 * tier_assemble.c — Parquet leaves with levels back into nested Arrow
 * columns (tier_assemble.h). The Fluss type tree is walked once per row,
 * as tier_nested.c walks it to shred: each node looks at the next entry
 * of its first leaf to tell NULL, empty and present apart, and a list
 * takes elements while that leaf's next entry repeats at its level. A
 * leaf's Arrow slots are gathered as entry numbers first and converted
 * at the end (fl_tier_arrow_column).
 */
#include "tier_assemble.h"

#include <stdint.h>
#include <string.h>

#include "common_alloc.h"
#include "common_buf.h"
#include "tier_convert.h"
#include "tier_nested.h"

#define TA_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION
#define TA_PARENT_NULL SIZE_MAX /* a slot under a NULL ROW */

typedef struct ta_leaf {
    const fl_pq_values_t *v;
    const fl_datatype_t *type;
    const char *name;
    size_t cur, entries;
    int max_def, max_rep;
    fl_buf_t slots; /* size_t entry number per Arrow slot, or TA_PARENT_NULL */
    fl_arrow_array_t *arr;
} ta_leaf_t;

typedef struct ta_node {
    const fl_datatype_t *type;
    const char *name;
    bool optional;
    int def; /* its definition level when present */
    int rep; /* ARRAY, MAP: its elements' repetition level */
    size_t next, leaf_first, leaf_end;
    fl_arrow_array_t *arr;
} ta_node_t;

typedef struct ta {
    ta_node_t *nodes;
    size_t n_nodes;
    ta_leaf_t *leaves;
    size_t n_leaves;
    const char *column;
    fl_error_t *err;
} ta_t;

static void arr_init(fl_arrow_array_t *a, const fl_datatype_t *t, int kind, size_t children) {
    fl_arrow_array_init(a, t, kind);
    a->child_count = children;
    a->children = children ? fl_calloc(children, sizeof(*a->children)) : NULL;
    if (kind == FL_TYPE_ARRAY || kind == FL_TYPE_MAP) {
        int32_t zero = 0;
        fl_buf_append(&a->values, &zero, 4);
    }
}

/* Builds node and array trees of t at arr; def and rep are the parent's. */
static void build(ta_t *a, const fl_datatype_t *t, const char *name, bool key, int def, int rep,
                  fl_arrow_array_t *arr, const fl_pq_values_t *vals) {
    size_t me = a->n_nodes++;
    ta_node_t *n = &a->nodes[me];
    n->type = t;
    n->name = name;
    n->optional = t->nullable && !key;
    n->def = def + n->optional;
    n->leaf_first = a->n_leaves;
    n->arr = arr;
    switch (t->root) {
    case FL_TYPE_ARRAY:
        n->rep = rep + 1;
        arr_init(arr, t, FL_TYPE_ARRAY, 1);
        build(a, t->element, "element", false, n->def + 1, rep + 1, &arr->children[0], vals);
        break;
    case FL_TYPE_MAP: {
        n->rep = rep + 1;
        arr_init(arr, t, FL_TYPE_MAP, 1);
        fl_arrow_array_t *entries = &arr->children[0];
        arr_init(entries, t, FL_ARROW_ARRAY_ENTRIES, 2);
        build(a, t->key, "key", true, n->def + 1, rep + 1, &entries->children[0], vals);
        build(a, t->value, "value", false, n->def + 1, rep + 1, &entries->children[1], vals);
        break;
    }
    case FL_TYPE_ROW:
        arr_init(arr, t, FL_TYPE_ROW, t->field_count);
        for (size_t i = 0; i < t->field_count; i++)
            build(a, t->fields[i].type, t->fields[i].name, false, n->def, rep, &arr->children[i],
                  vals);
        break;
    default: {
        ta_leaf_t *l = &a->leaves[a->n_leaves++];
        l->v = &vals[l - a->leaves];
        l->type = t;
        l->name = name;
        l->max_def = n->def;
        l->max_rep = rep;
        l->entries = l->v->def ? l->v->levels : l->v->rows;
        fl_buf_init(&l->slots);
        l->arr = arr;
        memset(arr, 0, sizeof(*arr)); /* filled by the gather */
        break;
    }
    }
    n = &a->nodes[me];
    n->next = a->n_nodes;
    n->leaf_end = a->n_leaves;
}

static int def_at(const ta_leaf_t *l, size_t i) {
    if (l->v->def) return l->v->def[i];
    return l->v->valid[i] ? l->max_def : l->max_def - 1;
}

static int rep_at(const ta_leaf_t *l, size_t i) { return l->v->rep ? l->v->rep[i] : 0; }

static void bit_append(fl_arrow_array_t *a, bool valid) {
    size_t i = (size_t)a->length;
    if (i % 8 == 0) fl_buf_put_u8(&a->validity, 0);
    if (valid) a->validity.data[i / 8] |= (uint8_t)(1u << (i % 8));
    else a->null_count++;
    a->length++;
}

static void offset_append(fl_arrow_array_t *a, int32_t end) { fl_buf_append(&a->values, &end, 4); }

static int32_t child_length(const fl_arrow_array_t *a) {
    int32_t end;
    memcpy(&end, a->values.data + a->values.len - 4, 4);
    return end;
}

/* Every leaf below node ni moves past one entry (a NULL or empty value). */
static int skip(ta_t *a, size_t ni) {
    for (size_t i = a->nodes[ni].leaf_first; i < a->nodes[ni].leaf_end; i++) {
        ta_leaf_t *l = &a->leaves[i];
        if (l->cur >= l->entries)
            return fl_err_set(a->err, TA_CORRUPT, "lake column %s: its levels end early",
                              a->column);
        l->cur++;
    }
    return 0;
}

/* A NULL slot at node ni (no entry consumed): a ROW's fields get one each. */
static void null_slot(ta_t *a, size_t ni) {
    ta_node_t *n = &a->nodes[ni];
    switch (n->type->root) {
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP:
        bit_append(n->arr, false);
        offset_append(n->arr, child_length(n->arr));
        return;
    case FL_TYPE_ROW: {
        bit_append(n->arr, false);
        size_t child = ni + 1;
        for (size_t f = 0; f < n->type->field_count; f++) {
            null_slot(a, child);
            child = a->nodes[child].next;
        }
        return;
    }
    default: {
        size_t marker = TA_PARENT_NULL;
        fl_buf_append(&a->leaves[n->leaf_first].slots, &marker, sizeof(marker));
        return;
    }
    }
}

static int read_value(ta_t *a, size_t ni, int depth) {
    ta_node_t *n = &a->nodes[ni];
    ta_leaf_t *first = &a->leaves[n->leaf_first];
    if (first->cur >= first->entries)
        return fl_err_set(a->err, TA_CORRUPT, "lake column %s: its levels end early", a->column);
    int d = def_at(first, first->cur);
    if (d < n->def) {
        if (!n->optional)
            return fl_err_set(a->err, TA_CORRUPT, "lake column %s: a NULL %s where the type is "
                                                  "NOT NULL",
                              a->column, n->name);
        if (n->type->root == FL_TYPE_ROW || n->type->root == FL_TYPE_ARRAY ||
            n->type->root == FL_TYPE_MAP) {
            null_slot(a, ni);
        } else {
            size_t e = first->cur; /* valid is 0 there: a NULL leaf */
            fl_buf_append(&first->slots, &e, sizeof(e));
        }
        return skip(a, ni);
    }
    int rc = 0;
    switch (n->type->root) {
    case FL_TYPE_ROW: {
        bit_append(n->arr, true);
        size_t child = ni + 1;
        for (size_t f = 0; f < n->type->field_count && !rc; f++) {
            rc = read_value(a, child, depth + 1);
            child = a->nodes[child].next;
        }
        return rc;
    }
    case FL_TYPE_ARRAY:
    case FL_TYPE_MAP: {
        bit_append(n->arr, true);
        int32_t count = 0;
        if (d == n->def) { /* present and empty */
            offset_append(n->arr, child_length(n->arr));
            return skip(a, ni);
        }
        bool map = n->type->root == FL_TYPE_MAP;
        size_t key = ni + 1, value = a->nodes[key].next;
        do {
            rc = read_value(a, key, depth + 1);
            if (!rc && map) rc = read_value(a, value, depth + 1);
            count++;
        } while (!rc && first->cur < first->entries && rep_at(first, first->cur) == n->rep);
        if (rc) return rc;
        if (map) n->arr->children[0].length += count;
        if (child_length(n->arr) > INT32_MAX - count)
            return fl_err_set(a->err, TA_CORRUPT, "lake column %s: over 2^31 elements",
                              a->column);
        offset_append(n->arr, child_length(n->arr) + count);
        return 0;
    }
    default: {
        size_t e = first->cur++;
        fl_buf_append(&first->slots, &e, sizeof(e));
        return 0;
    }
    }
}

/* Leaf l's slots as a flat column, converted into its Arrow array. */
static int gather(ta_t *a, ta_leaf_t *l) {
    const fl_pq_values_t *v = l->v;
    size_t n = l->slots.len / sizeof(size_t);
    const size_t *slot = (const size_t *)l->slots.data;
    fl_pq_values_t g;
    memset(&g, 0, sizeof(g));
    g.type = v->type;
    g.rows = n;
    g.width = v->width;
    size_t width = v->type == FL_PQ_BYTE_ARRAY ? 0 : v->width;
    g.valid = fl_calloc(n ? n : 1, 1);
    fl_buf_t bytes;
    fl_buf_init(&bytes);
    if (width) {
        g.values = fl_calloc(n ? n : 1, width);
    } else {
        g.offsets = fl_calloc(n + 1, sizeof(uint64_t));
    }
    for (size_t i = 0; i < n; i++) {
        size_t e = slot[i];
        bool parent_null = e == TA_PARENT_NULL;
        bool present = !parent_null && v->valid[e];
        /* a NOT NULL field under a NULL ROW: a zero of its type */
        g.valid[i] = present || (parent_null && !l->type->nullable);
        if (width) {
            if (present)
                memcpy((uint8_t *)g.values + i * width, (const uint8_t *)v->values + e * width,
                       width);
        } else {
            if (present) {
                fl_buf_append(&bytes, v->bytes + v->offsets[e],
                              (size_t)(v->offsets[e + 1] - v->offsets[e]));
            } else if (g.valid[i] && l->type->root == FL_TYPE_BINARY && l->type->length > 0) {
                memset(fl_buf_reserve(&bytes, (size_t)l->type->length), 0, (size_t)l->type->length);
                bytes.len += (size_t)l->type->length;
            }
            g.offsets[i + 1] = bytes.len;
        }
    }
    g.bytes = bytes.data ? bytes.data : (uint8_t *)"";
    int rc = fl_tier_arrow_column(l->type, l->name, &g, 0, n, l->arr, a->err);
    if (rc) fl_err_prefix(a->err, "lake column %s: ", a->column);
    fl_free(g.valid);
    fl_free(g.values);
    fl_free(g.offsets);
    fl_buf_free(&bytes);
    return rc;
}

int fl_tier_assemble(const fl_datatype_t *t, const char *name, const fl_pq_values_t *leaves,
                     size_t rows, fl_arrow_array_t *out, fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    fl_tier_shape_t sh;
    fl_tier_nested_shape(t, &sh);
    if (sh.depth > FL_TYPE_DEPTH_MAX || sh.nodes > (1u << 16))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "lake column %s: its type nests too deep",
                          name);
    ta_t a = {.column = name, .err = err};
    a.nodes = fl_calloc(sh.nodes, sizeof(*a.nodes));
    a.leaves = fl_calloc(sh.leaves ? sh.leaves : 1, sizeof(*a.leaves));
    build(&a, t, name, false, 0, 0, out, leaves);
    int rc = 0;
    for (size_t i = 0; i < a.n_leaves && !rc; i++) {
        const ta_leaf_t *l = &a.leaves[i];
        int max_def = l->v->max_def, max_rep = l->v->max_rep;
        if (max_def != l->max_def || max_rep != l->max_rep)
            rc = fl_err_set(err, TA_CORRUPT,
                            "lake column %s: field %s has levels %d/%d in the file, %d/%d by "
                            "its type",
                            name, l->name, max_def, max_rep, l->max_def, l->max_rep);
    }
    for (size_t r = 0; r < rows && !rc; r++) {
        for (size_t i = 0; i < a.n_leaves && !rc; i++) {
            const ta_leaf_t *l = &a.leaves[i];
            if (l->cur >= l->entries || rep_at(l, l->cur) != 0)
                rc = fl_err_set(err, TA_CORRUPT, "lake column %s: row %zu does not start a "
                                                 "record",
                                name, r);
        }
        if (!rc) rc = read_value(&a, 0, 0);
    }
    for (size_t i = 0; i < a.n_leaves && !rc; i++)
        if (a.leaves[i].cur != a.leaves[i].entries)
            rc = fl_err_set(err, TA_CORRUPT, "lake column %s: levels past its %zu rows", name,
                            rows);
    for (size_t i = 0; i < a.n_leaves && !rc; i++) rc = gather(&a, &a.leaves[i]);
    for (size_t i = 0; i < a.n_leaves; i++) fl_buf_free(&a.leaves[i].slots);
    fl_free(a.nodes);
    fl_free(a.leaves);
    if (rc) fl_arrow_array_free(out);
    return rc;
}
