/*
 * client_filter.c — a log scanner's row filter (client_filter.h): the
 * parser of the filter text, its wire form (Fluss main's PbPredicate,
 * PredicateMessageUtils#toPbPredicate: literal types and value fields per
 * the column's type), and its evaluation over decoded Arrow columns.
 * Thread rule: none (a filter is read-only once parsed).
 */
#include "client_filter.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_table.h"
#include "common_alloc.h"
#include "types_row_field.h"

/* Fluss main's PbPredicate.type, PbCompoundPredicate.function and
 * PbLiteralValue.literal_type (DataTypeRootCode). */
#define FL_WIRE_LEAF 0
#define FL_WIRE_COMPOUND 1
#define FL_WIRE_AND 0

static int32_t fl_literal_type(fl_type_root_t r) {
    switch (r) {
    case FL_TYPE_BOOLEAN: return 0;
    case FL_TYPE_TINYINT: return 1;
    case FL_TYPE_SMALLINT: return 2;
    case FL_TYPE_INTEGER: return 3;
    case FL_TYPE_BIGINT: return 4;
    case FL_TYPE_FLOAT: return 5;
    case FL_TYPE_DOUBLE: return 6;
    case FL_TYPE_CHAR: return 7;
    case FL_TYPE_STRING: return 8;
    case FL_TYPE_DECIMAL: return 9;
    case FL_TYPE_DATE: return 10;
    case FL_TYPE_TIME: return 11;
    case FL_TYPE_TIMESTAMP: return 12;
    case FL_TYPE_TIMESTAMP_LTZ: return 13;
    case FL_TYPE_BINARY: return 14;
    case FL_TYPE_BYTES: return 15;
    default: return -1;
    }
}

/* ---- parsing ---- */

typedef struct fl_lexer {
    const char *text;
    const char *p;
} fl_lexer_t;

static void fl_skip_space(fl_lexer_t *lx) {
    while (isspace((unsigned char)*lx->p)) lx->p++;
}

static int fl_syntax(fl_lexer_t *lx, fl_error_t *err, const char *what) {
    return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: %s at position %zu of '%.200s'", what,
                      (size_t)(lx->p - lx->text) + 1, lx->text);
}

/* A keyword (letters only) at p, case-insensitive, not followed by a name
 * character. */
static bool fl_keyword(fl_lexer_t *lx, const char *kw) {
    fl_skip_space(lx);
    size_t n = strlen(kw);
    if (strncasecmp(lx->p, kw, n) != 0) return false;
    char next = lx->p[n];
    if (isalnum((unsigned char)next) || next == '_') return false;
    lx->p += n;
    return true;
}

/* A column name: letters, digits, '_' and '-' (Fluss's name rules), or
 * `anything but a backquote`. */
static char *fl_lex_name(fl_lexer_t *lx) {
    fl_skip_space(lx);
    const char *s = lx->p;
    if (*s == '`') {
        const char *e = strchr(s + 1, '`');
        if (!e) return NULL;
        lx->p = e + 1;
        return fl_strndup(s + 1, (size_t)(e - s - 1));
    }
    while (isalnum((unsigned char)*lx->p) || *lx->p == '_' || *lx->p == '-') lx->p++;
    return lx->p > s ? fl_strndup(s, (size_t)(lx->p - s)) : NULL;
}

static bool fl_lex_op(fl_lexer_t *lx, fl_filter_fn_t *fn) {
    fl_skip_space(lx);
    static const struct {
        const char *text;
        fl_filter_fn_t fn;
    } ops[] = {{"==", FL_FILTER_EQUAL},        {"!=", FL_FILTER_NOT_EQUAL},
               {"<>", FL_FILTER_NOT_EQUAL},    {"<=", FL_FILTER_LESS_OR_EQUAL},
               {">=", FL_FILTER_GREATER_OR_EQUAL}, {"=", FL_FILTER_EQUAL},
               {"<", FL_FILTER_LESS_THAN},     {">", FL_FILTER_GREATER_THAN}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(lx->p, ops[i].text, n) == 0) {
            lx->p += n;
            *fn = ops[i].fn;
            return true;
        }
    }
    return false;
}

/* A literal's text: 'quoted' ('' is a quote) or a bare word up to space. */
static char *fl_lex_literal(fl_lexer_t *lx, fl_error_t *err) {
    fl_skip_space(lx);
    if (*lx->p == '\'') {
        const char *p = lx->p + 1;
        fl_buf_t b;
        fl_buf_init(&b);
        for (;;) {
            if (!*p) {
                fl_buf_free(&b);
                fl_syntax(lx, err, "an unclosed quote");
                return NULL;
            }
            if (*p == '\'' && p[1] == '\'') {
                fl_buf_put_u8(&b, '\'');
                p += 2;
            } else if (*p == '\'') {
                p++;
                break;
            } else {
                fl_buf_put_u8(&b, (uint8_t)*p++);
            }
        }
        lx->p = p;
        fl_buf_put_u8(&b, '\0');
        return (char *)b.data;
    }
    const char *s = lx->p;
    while (*lx->p && !isspace((unsigned char)*lx->p) && *lx->p != '\'') lx->p++;
    if (lx->p == s) {
        fl_syntax(lx, err, "a value expected");
        return NULL;
    }
    return fl_strndup(s, (size_t)(lx->p - s));
}

static bool fl_filterable(fl_type_root_t r) { return fl_literal_type(r) >= 0; }

static int fl_parse_predicate(const fluss_table_t *t, fl_lexer_t *lx, fl_cpred_t *out,
                              fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    char *name = fl_lex_name(lx);
    if (!name) return fl_syntax(lx, err, "a column name expected");
    int col = fl_schema_column_index(&t->desc.schema, name);
    int rc = 0;
    if (col < 0)
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: unknown column '%s'", name);
    else if (!fl_filterable(fl_table_type(t, (size_t)col)->root))
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: column '%s' (%s) cannot be filtered",
                        name, t->type_text[col]);
    fl_free(name);
    if (rc) return rc;
    out->column = col;
    if (fl_keyword(lx, "IS")) {
        bool not = fl_keyword(lx, "NOT");
        if (!fl_keyword(lx, "NULL")) return fl_syntax(lx, err, "NULL expected after IS");
        out->fn = not ? FL_FILTER_IS_NOT_NULL : FL_FILTER_IS_NULL;
        return 0;
    }
    if (!fl_lex_op(lx, &out->fn)) return fl_syntax(lx, err, "an operator expected");
    char *lit = fl_lex_literal(lx, err);
    if (!lit) return err->code;
    out->lit = fluss_row_new(t);
    fluss_error_t e;
    if (fluss_row_set_text(out->lit, (size_t)col, lit, &e)) {
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: %s", e.message);
        fluss_row_destroy(out->lit);
        out->lit = NULL;
    }
    fl_free(lit);
    return rc;
}

int fl_cfilter_parse(const fluss_table_t *t, const char *text, fl_cfilter_t *out,
                     fl_error_t *err) {
    out->count = 0;
    if (strlen(text) > FL_FILTER_TEXT_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: longer than %d bytes",
                          FL_FILTER_TEXT_MAX);
    fl_lexer_t lx = {text, text};
    int rc = 0;
    for (;;) {
        if (out->count == FL_FILTER_PREDICATES_MAX) {
            rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "filter: more than %d predicates",
                            FL_FILTER_PREDICATES_MAX);
            break;
        }
        if ((rc = fl_parse_predicate(t, &lx, &out->preds[out->count], err))) break;
        out->count++;
        fl_skip_space(&lx);
        if (!*lx.p) break;
        if (!fl_keyword(&lx, "AND")) {
            rc = fl_syntax(&lx, err, "AND or the end expected");
            break;
        }
    }
    if (rc) fl_cfilter_free(out);
    return rc;
}

int fl_cfilter_parse_opt(const fluss_table_t *t, const char *text, fl_cfilter_t *out,
                         fl_error_t *err) {
    memset(out, 0, sizeof(*out));
    return text && *text ? fl_cfilter_parse(t, text, out, err) : 0;
}

void fl_cfilter_free(fl_cfilter_t *f) {
    for (size_t i = 0; i < f->count; i++) fluss_row_destroy(f->preds[i].lit);
    f->count = 0;
}

/* ---- wire ---- */

static void fl_wire_literal(const fl_cpred_t *p, const fluss_table_t *t, fl_cfilter_wire_t *w,
                            size_t k) {
    Fluss__PbLiteralValue *l = &w->literals[k];
    fluss__pb_literal_value__init(l);
    const fl_datatype_t *type = fl_table_type(t, (size_t)p->column);
    const fl_cell_t *c = &p->lit->row.cells[p->column];
    l->literal_type = fl_literal_type(type->root);
    l->is_null = false;
    switch (type->root) {
    case FL_TYPE_BOOLEAN: l->has_boolean_value = 1, l->boolean_value = c->i != 0; break;
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_TIME: l->has_int_value = 1, l->int_value = (int32_t)c->i; break;
    case FL_TYPE_BIGINT:
    case FL_TYPE_DATE: l->has_bigint_value = 1, l->bigint_value = c->i; break;
    case FL_TYPE_FLOAT: l->has_float_value = 1, l->float_value = (float)c->d; break;
    case FL_TYPE_DOUBLE: l->has_double_value = 1, l->double_value = c->d; break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
        w->strings[k] = fl_strndup((const char *)fl_row_cell_bytes(&p->lit->row, c), c->len);
        l->string_value = w->strings[k];
        break;
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES:
        l->has_binary_value = 1;
        l->binary_value.data = (uint8_t *)fl_row_cell_bytes(&p->lit->row, c);
        l->binary_value.len = c->len;
        break;
    case FL_TYPE_DECIMAL:
        if (fl_row_decimal_compact(type)) {
            l->has_decimal_value = 1;
            l->decimal_value = (int64_t)c->dec;
        } else {
            l->has_decimal_bytes = 1;
            l->decimal_bytes.len = fl_row_decimal_to_bytes(c->dec, w->decimal_bytes[k]);
            l->decimal_bytes.data = w->decimal_bytes[k];
        }
        break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        l->has_timestamp_millis_value = 1;
        l->timestamp_millis_value = c->i;
        l->has_timestamp_nano_of_millis_value = 1;
        l->timestamp_nano_of_millis_value = c->nanos;
        break;
    default: break;
    }
    w->literal_ptrs[k] = l;
}

void fl_cfilter_to_wire(const fl_cfilter_t *f, const fluss_table_t *t, fl_cfilter_wire_t *w) {
    memset(w, 0, sizeof(*w));
    for (size_t k = 0; k < f->count; k++) {
        const fl_cpred_t *p = &f->preds[k];
        Fluss__PbLeafPredicate *leaf = &w->leaves[k];
        fluss__pb_leaf_predicate__init(leaf);
        leaf->function = (int32_t)p->fn;
        leaf->field_id = t->desc.schema.columns[p->column].id;
        if (p->lit) {
            fl_wire_literal(p, t, w, k);
            leaf->n_literals = 1;
            leaf->literals = &w->literal_ptrs[k];
        }
        fluss__pb_predicate__init(&w->nodes[k]);
        w->nodes[k].type = FL_WIRE_LEAF;
        w->nodes[k].leaf = leaf;
        w->children[k] = &w->nodes[k];
    }
    if (f->count == 1) {
        w->root = w->nodes[0];
        return;
    }
    fluss__pb_compound_predicate__init(&w->and_node);
    w->and_node.function = FL_WIRE_AND;
    w->and_node.n_children = f->count;
    w->and_node.children = w->children;
    fluss__pb_predicate__init(&w->root);
    w->root.type = FL_WIRE_COMPOUND;
    w->root.compound = &w->and_node;
}

void fl_cfilter_wire_free(fl_cfilter_wire_t *w) {
    for (size_t k = 0; k < FL_FILTER_PREDICATES_MAX; k++) fl_free(w->strings[k]);
}

/* ---- evaluation ---- */

static int fl_cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* Java's Double.compare: -0.0 < 0.0, NaN greatest and equal to itself. */
static int fl_cmp_double(double a, double b) {
    if (a < b) return -1;
    if (a > b) return 1;
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return na == nb ? 0 : na ? 1 : -1;
    return (signbit(b) != 0) - (signbit(a) != 0);
}

static int fl_cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c < 0 ? -1 : 1;
    return (an > bn) - (an < bn);
}

/* A TIME/TIMESTAMP value of column unit (precision p) as (ms, nanos). */
static int64_t fl_to_millis(int64_t v, int p, int32_t *nanos) {
    int64_t per_ms = p == 0 ? 0 : p <= 3 ? 1 : p <= 6 ? 1000 : 1000000;
    *nanos = 0;
    if (per_ms == 0) return v * 1000;
    int64_t ms = v / per_ms, rem = v % per_ms;
    if (rem < 0) rem += per_ms, ms--;
    *nanos = (int32_t)(rem * (1000000 / per_ms));
    return ms;
}

/* Compares value i of column a with the literal cell c (of row lit). */
static int fl_cmp_value(const fl_arrow_array_t *a, int64_t i, const fluss_row_t *lit,
                        const fl_cell_t *c) {
    const fl_datatype_t *t = a->type;
    switch (t->root) {
    case FL_TYPE_BOOLEAN: return fl_cmp_i64(fl_arrow_array_bool(a, i), c->i != 0);
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT:
    case FL_TYPE_DATE: return fl_cmp_i64(fl_arrow_array_int(a, i), c->i);
    case FL_TYPE_TIME: {
        int32_t ns;
        return fl_cmp_i64(fl_to_millis(fl_arrow_array_int(a, i), t->precision, &ns), c->i);
    }
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: {
        int32_t ns;
        int64_t ms = fl_to_millis(fl_arrow_array_int(a, i), t->precision, &ns);
        int r = fl_cmp_i64(ms, c->i);
        return r ? r : fl_cmp_i64(ns, c->nanos);
    }
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE: return fl_cmp_double(fl_arrow_array_double(a, i), c->d);
    case FL_TYPE_DECIMAL: {
        __int128 v = fl_arrow_array_decimal(a, i);
        return (v > c->dec) - (v < c->dec);
    }
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: {
        size_t n;
        const uint8_t *p = fl_arrow_array_bytes(a, i, &n);
        return fl_cmp_bytes(p, n, fl_row_cell_bytes(&lit->row, c), c->len);
    }
    default: return 0;
    }
}

static bool fl_pred_match(const fl_cpred_t *p, const fl_arrow_array_t *a, int64_t i) {
    bool null = fl_arrow_array_is_null(a, i);
    if (p->fn == FL_FILTER_IS_NULL) return null;
    if (p->fn == FL_FILTER_IS_NOT_NULL) return !null;
    if (null) return false;
    int c = fl_cmp_value(a, i, p->lit, &p->lit->row.cells[p->column]);
    switch (p->fn) {
    case FL_FILTER_EQUAL: return c == 0;
    case FL_FILTER_NOT_EQUAL: return c != 0;
    case FL_FILTER_LESS_THAN: return c < 0;
    case FL_FILTER_LESS_OR_EQUAL: return c <= 0;
    case FL_FILTER_GREATER_THAN: return c > 0;
    case FL_FILTER_GREATER_OR_EQUAL: return c >= 0;
    default: return true;
    }
}

bool fl_cfilter_match(const fl_cfilter_t *f, const fl_arrow_array_t *const *cols_by_pos,
                      int64_t i) {
    for (size_t k = 0; k < f->count; k++)
        if (!fl_pred_match(&f->preds[k], cols_by_pos[f->preds[k].column], i)) return false;
    return true;
}
