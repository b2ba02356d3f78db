/*
 * client_nested_text.c — ARRAY, MAP and ROW values of libfluss rows as
 * text, both ways, in the JSON form a scan prints them in
 * (client_value_text.c prints Arrow columns the same way):
 *
 *   ARRAY<INT>            [1, 2, null]
 *   MAP<STRING, INT>      {"a": 1, "b": null}      keys: their plain text, quoted
 *   ROW<x INT, s STRING>  {"x": 1, "s": "hi"}      fields by name; [1, "hi"] by position
 *
 * Scalars inside are JSON: numbers and true/false bare; strings, dates,
 * times, timestamps, bytes (hex) and decimals may be quoted — a quoted
 * element is read as fluss_row_set_text reads that type, so
 * "2024-01-31" is a DATE and "0a0b" BYTES. Values are encoded as Fluss
 * keeps them inside rows (types_row_nested.h: BinaryArray, BinaryMap,
 * nested rows in the table's kv format) and decoded from there, checked.
 * Thread rule: none.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"
#include "types_row_field.h"
#include "types_row_nested.h"

#define FL_NESTED_TEXT_MAX (64u * 1024 * 1024)

typedef struct fl_nparse {
    const char *text;
    const char *p;
    const char *name; /* the column, for messages */
    fl_row_format_t fmt;
    fl_error_t *err;
} fl_nparse_t;

static int fl_np_fail(fl_nparse_t *x, const char *what) {
    return fl_err_set(x->err, FLUSS_ERR__INVALID_ARG, "column %s: %s at position %zu of '%.200s'",
                      x->name, what, (size_t)(x->p - x->text) + 1, x->text);
}

static void fl_np_space(fl_nparse_t *x) {
    while (isspace((unsigned char)*x->p)) x->p++;
}

static bool fl_np_eat(fl_nparse_t *x, char c) {
    fl_np_space(x);
    if (*x->p != c) return false;
    x->p++;
    return true;
}

static bool fl_np_null(fl_nparse_t *x) {
    fl_np_space(x);
    if (strncmp(x->p, "null", 4) != 0 || isalnum((unsigned char)x->p[4]) || x->p[4] == '_')
        return false;
    x->p += 4;
    return true;
}

/* Appends the UTF-8 of code point cp. */
static void fl_np_utf8(fl_buf_t *b, uint32_t cp) {
    if (cp < 0x80) {
        fl_buf_put_u8(b, (uint8_t)cp);
    } else if (cp < 0x800) {
        fl_buf_put_u8(b, (uint8_t)(0xc0 | cp >> 6));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        fl_buf_put_u8(b, (uint8_t)(0xe0 | cp >> 12));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp >> 6 & 0x3f)));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
    } else {
        fl_buf_put_u8(b, (uint8_t)(0xf0 | cp >> 18));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp >> 12 & 0x3f)));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp >> 6 & 0x3f)));
        fl_buf_put_u8(b, (uint8_t)(0x80 | (cp & 0x3f)));
    }
}

static int fl_np_hex4(const char *p, uint32_t *v) {
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d = isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                              : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

/* A scalar's text into out (NUL-terminated): a JSON string unescaped, or
 * a bare token up to a delimiter. */
static int fl_np_scalar(fl_nparse_t *x, fl_buf_t *out) {
    fl_np_space(x);
    out->len = 0;
    if (*x->p != '"') {
        const char *s = x->p;
        while (*x->p && !isspace((unsigned char)*x->p) && !strchr(",]}:[{\"", *x->p)) x->p++;
        if (x->p == s) return fl_np_fail(x, "a value expected");
        fl_buf_append(out, s, (size_t)(x->p - s));
        fl_buf_put_u8(out, '\0');
        return 0;
    }
    x->p++;
    for (;;) {
        char c = *x->p++;
        if (!c) return x->p--, fl_np_fail(x, "an unclosed string");
        if (c == '"') break;
        if (c != '\\') {
            fl_buf_put_u8(out, (uint8_t)c);
            continue;
        }
        char e = *x->p++;
        switch (e) {
        case '"': case '\\': case '/': fl_buf_put_u8(out, (uint8_t)e); break;
        case 'b': fl_buf_put_u8(out, '\b'); break;
        case 'f': fl_buf_put_u8(out, '\f'); break;
        case 'n': fl_buf_put_u8(out, '\n'); break;
        case 'r': fl_buf_put_u8(out, '\r'); break;
        case 't': fl_buf_put_u8(out, '\t'); break;
        case 'u': {
            uint32_t cp, lo;
            if (fl_np_hex4(x->p, &cp)) return fl_np_fail(x, "a bad \\u escape");
            x->p += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && x->p[0] == '\\' && x->p[1] == 'u' &&
                !fl_np_hex4(x->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                x->p += 6;
            }
            if (cp == 0) return fl_np_fail(x, "a NUL character");
            fl_np_utf8(out, cp);
            break;
        }
        default: return x->p--, fl_np_fail(x, "a bad escape");
        }
    }
    fl_buf_put_u8(out, '\0');
    return 0;
}

static int fl_np_value(fl_nparse_t *x, const fl_datatype_t *t, fl_row_t *row, size_t col,
                       int depth);

/* Grows a row of element cells by one (NULL) cell; returns its index. */
static size_t fl_np_grow(fl_row_t *r, size_t *cap) {
    if (r->column_count == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        r->cells = fl_realloc(r->cells, *cap * sizeof(fl_cell_t));
    }
    memset(&r->cells[r->column_count], 0, sizeof(fl_cell_t));
    r->cells[r->column_count].is_null = true;
    return r->column_count++;
}

static int fl_np_array(fl_nparse_t *x, const fl_datatype_t *t, fl_buf_t *out, int depth) {
    fl_row_t elems;
    fl_row_init(&elems, 0);
    size_t cap = 0;
    int rc = 0;
    if (!fl_np_eat(x, ']')) {
        do {
            if (elems.column_count >= FL_NESTED_ELEMENTS_MAX) {
                rc = fl_np_fail(x, "too many elements");
                break;
            }
            rc = fl_np_value(x, t->element, &elems, fl_np_grow(&elems, &cap), depth + 1);
        } while (!rc && fl_np_eat(x, ','));
        if (!rc && !fl_np_eat(x, ']')) rc = fl_np_fail(x, "',' or ']' expected");
    }
    if (!rc) fl_nested_array_encode(&elems, elems.column_count, t->element, out);
    fl_row_free(&elems);
    return rc;
}

static int fl_np_map(fl_nparse_t *x, const fl_datatype_t *t, fl_buf_t *out, int depth) {
    fl_row_t keys, vals;
    fl_row_init(&keys, 0);
    fl_row_init(&vals, 0);
    size_t kcap = 0, vcap = 0;
    fl_buf_t text;
    fl_buf_init(&text);
    int rc = 0;
    if (!fl_np_eat(x, '}')) {
        do {
            if (keys.column_count >= FL_NESTED_ELEMENTS_MAX) {
                rc = fl_np_fail(x, "too many entries");
                break;
            }
            size_t k = fl_np_grow(&keys, &kcap);
            fl_np_grow(&vals, &vcap);
            if (fl_row_type_nested(t->key->root)) rc = fl_np_value(x, t->key, &keys, k, depth + 1);
            else if (!(rc = fl_np_scalar(x, &text))) {
                fl_cell_target_t tg = {&keys, k, t->key, x->name, "a map key", x->fmt};
                rc = fl_cell_set_text(&tg, (const char *)text.data, x->err);
            }
            if (!rc && !fl_np_eat(x, ':')) rc = fl_np_fail(x, "':' expected");
            if (!rc) rc = fl_np_value(x, t->value, &vals, k, depth + 1);
        } while (!rc && fl_np_eat(x, ','));
        if (!rc && !fl_np_eat(x, '}')) rc = fl_np_fail(x, "',' or '}' expected");
    }
    if (!rc) fl_nested_map_encode(&keys, &vals, keys.column_count, t, out);
    fl_buf_free(&text);
    fl_row_free(&keys);
    fl_row_free(&vals);
    return rc;
}

/* A ROW: {"field": value, ...} (any order, missing fields NULL) or
 * [value, ...] by position. */
static int fl_np_row(fl_nparse_t *x, const fl_datatype_t *t, bool positional, fl_buf_t *out,
                     int depth) {
    size_t n = t->field_count;
    fl_row_t fields;
    fl_row_init(&fields, n);
    const fl_datatype_t **types = fl_calloc(n ? n : 1, sizeof(*types));
    for (size_t k = 0; k < n; k++) types[k] = t->fields[k].type;
    fl_buf_t name;
    fl_buf_init(&name);
    int rc = 0;
    size_t next = 0;
    if (!fl_np_eat(x, positional ? ']' : '}')) {
        do {
            size_t k = next++;
            if (!positional) {
                if ((rc = fl_np_scalar(x, &name))) break;
                for (k = 0; k < n && strcmp(t->fields[k].name, (const char *)name.data) != 0; k++) {}
                if (k == n) {
                    rc = fl_np_fail(x, "an unknown field");
                    break;
                }
                if (!fl_np_eat(x, ':')) {
                    rc = fl_np_fail(x, "':' expected");
                    break;
                }
            } else if (k >= n) {
                rc = fl_np_fail(x, "more values than fields");
                break;
            }
            rc = fl_np_value(x, types[k], &fields, k, depth + 1);
        } while (!rc && fl_np_eat(x, ','));
        if (!rc && !fl_np_eat(x, positional ? ']' : '}'))
            rc = fl_np_fail(x, positional ? "',' or ']' expected" : "',' or '}' expected");
    }
    for (size_t k = 0; !rc && k < n; k++)
        if (fields.cells[k].is_null && !types[k]->nullable)
            rc = fl_np_fail(x, "a NOT NULL field without a value");
    if (!rc) rc = fl_row_encode(x->fmt, &fields, types, n, out, x->err);
    fl_buf_free(&name);
    fl_free(types);
    fl_row_free(&fields);
    return rc;
}

/* One value of type t into cell col of row. */
static int fl_np_value(fl_nparse_t *x, const fl_datatype_t *t, fl_row_t *row, size_t col,
                       int depth) {
    if (depth > FL_TYPE_DEPTH_MAX) return fl_np_fail(x, "nested too deep");
    if (fl_np_null(x)) {
        if (!t->nullable) return fl_np_fail(x, "null for a NOT NULL element");
        row->cells[col].is_null = true;
        return 0;
    }
    if (!fl_row_type_nested(t->root)) {
        fl_buf_t text;
        fl_buf_init(&text);
        int rc = fl_np_scalar(x, &text);
        if (!rc) {
            fl_cell_target_t tg = {row, col, t, x->name, "an element", x->fmt};
            rc = fl_cell_set_text(&tg, (const char *)text.data, x->err);
        }
        fl_buf_free(&text);
        return rc;
    }
    fl_buf_t enc;
    fl_buf_init(&enc);
    int rc;
    if (t->root == FL_TYPE_ARRAY) {
        rc = fl_np_eat(x, '[') ? fl_np_array(x, t, &enc, depth) : fl_np_fail(x, "'[' expected");
    } else if (t->root == FL_TYPE_MAP) {
        rc = fl_np_eat(x, '{') ? fl_np_map(x, t, &enc, depth) : fl_np_fail(x, "'{' expected");
    } else {
        bool obj = fl_np_eat(x, '{');
        rc = obj || fl_np_eat(x, '[') ? fl_np_row(x, t, !obj, &enc, depth)
                                      : fl_np_fail(x, "'{' or '[' expected");
    }
    if (!rc) fl_row_set_bytes(row, col, enc.data, enc.len);
    fl_buf_free(&enc);
    return rc;
}

int fl_nested_set_text(const fl_cell_target_t *tg, const char *text, fl_error_t *err) {
    if (strlen(text) > FL_NESTED_TEXT_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s: a value over %u bytes",
                          tg->name, FL_NESTED_TEXT_MAX);
    fl_nparse_t x = {text, text, tg->name, tg->nested_format, err};
    fl_datatype_t top = *tg->type;
    top.nullable = true; /* a NULL column is the caller's NULL text, not "null" */
    int rc = fl_np_value(&x, &top, tg->row, tg->col, 0);
    if (!rc) {
        fl_np_space(&x);
        if (*x.p) rc = fl_np_fail(&x, "text after the value");
    }
    if (!rc && tg->row->cells[tg->col].is_null && !tg->type->nullable)
        rc = fl_err_set(err, FLUSS_ERR__INVALID_ARG, "column %s is NOT NULL", tg->name);
    return rc;
}

/* ---- printing ---- */

static void fl_nt_quote(fl_buf_t *o, const uint8_t *p, size_t n) {
    fl_buf_put_u8(o, '"');
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            fl_buf_put_u8(o, '\\');
            fl_buf_put_u8(o, c);
        } else if (c < 0x20) {
            char tmp[8];
            snprintf(tmp, sizeof(tmp), "\\u%04x", c);
            fl_buf_append(o, tmp, 6);
        } else {
            fl_buf_put_u8(o, c);
        }
    }
    fl_buf_put_u8(o, '"');
}

static int fl_nt_value(const fl_datatype_t *t, fl_row_format_t fmt, const fl_row_t *row,
                       size_t col, int flags, int depth, fl_buf_t *o, fl_error_t *err);

static int fl_nt_elements(const fl_nested_array_t *a, fl_row_format_t fmt, int32_t i,
                          fl_row_t *scratch, int flags, int depth, fl_buf_t *o, fl_error_t *err) {
    fl_row_clear(scratch);
    int rc = fl_nested_array_get(a, i, scratch, 0, err);
    if (!rc) rc = fl_nt_value(a->elem, fmt, scratch, 0, flags, depth, o, err);
    return rc;
}

static int fl_nt_nested(const fl_datatype_t *t, fl_row_format_t fmt, const uint8_t *p, size_t len,
                        int depth, fl_buf_t *o, fl_error_t *err) {
    if (depth > FL_TYPE_DEPTH_MAX)
        return fl_err_set(err, FLUSS_ERR_CORRUPT_RECORD_EXCEPTION, "a value nested too deep");
    fl_row_t scratch;
    fl_row_init(&scratch, t->root == FL_TYPE_ROW ? t->field_count : 1);
    int rc = 0;
    if (t->root == FL_TYPE_ARRAY) {
        fl_nested_array_t a;
        rc = fl_nested_array_view(p, len, t->element, &a, err);
        fl_buf_put_u8(o, '[');
        for (int32_t i = 0; !rc && i < a.count; i++) {
            if (i) fl_buf_append(o, ", ", 2);
            rc = fl_nt_elements(&a, fmt, i, &scratch, FLUSS_TEXT_JSON, depth + 1, o, err);
        }
        fl_buf_put_u8(o, ']');
    } else if (t->root == FL_TYPE_MAP) {
        fl_nested_map_t m;
        rc = fl_nested_map_view(p, len, t, &m, err);
        fl_buf_t key;
        fl_buf_init(&key);
        fl_buf_put_u8(o, '{');
        for (int32_t i = 0; !rc && i < m.keys.count; i++) {
            if (i) fl_buf_append(o, ", ", 2);
            key.len = 0;
            rc = fl_nt_elements(&m.keys, fmt, i, &scratch, 0, depth + 1, &key, err);
            fl_nt_quote(o, key.data ? key.data : (const uint8_t *)"", key.len);
            fl_buf_append(o, ": ", 2);
            if (!rc) rc = fl_nt_elements(&m.values, fmt, i, &scratch, FLUSS_TEXT_JSON, depth + 1, o, err);
        }
        fl_buf_put_u8(o, '}');
        fl_buf_free(&key);
    } else {
        const fl_datatype_t **types = fl_calloc(t->field_count ? t->field_count : 1, sizeof(*types));
        for (size_t k = 0; k < t->field_count; k++) types[k] = t->fields[k].type;
        rc = fl_row_decode(fmt, p, len, types, t->field_count, &scratch, err);
        fl_buf_put_u8(o, '{');
        for (size_t k = 0; !rc && k < t->field_count; k++) {
            if (k) fl_buf_append(o, ", ", 2);
            fl_nt_quote(o, (const uint8_t *)t->fields[k].name, strlen(t->fields[k].name));
            fl_buf_append(o, ": ", 2);
            rc = fl_nt_value(types[k], fmt, &scratch, k, FLUSS_TEXT_JSON, depth + 1, o, err);
        }
        fl_buf_put_u8(o, '}');
        fl_free(types);
    }
    fl_row_free(&scratch);
    return rc;
}

static int fl_nt_value(const fl_datatype_t *t, fl_row_format_t fmt, const fl_row_t *row,
                       size_t col, int flags, int depth, fl_buf_t *o, fl_error_t *err) {
    const fl_cell_t *c = &row->cells[col];
    if (c->is_null) {
        if (flags & FLUSS_TEXT_JSON) fl_buf_append(o, "null", 4);
        return 0;
    }
    if (!fl_row_type_nested(t->root)) {
        fl_client_cell_text(t, fmt, row, col, flags, o);
        return 0;
    }
    return fl_nt_nested(t, fmt, fl_row_cell_bytes(row, c), c->len, depth, o, err);
}

int fl_nested_text(const fl_datatype_t *t, fl_row_format_t fmt, const uint8_t *p, size_t len,
                   fl_buf_t *out, fl_error_t *err) {
    return fl_nt_nested(t, fmt, p, len, 0, out, err);
}
