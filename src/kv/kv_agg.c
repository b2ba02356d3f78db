/*
 * kv_agg.c — the aggregation merge engine: per-column functions from the
 * schema, and the fold of an incoming row into the stored one (kv_agg.h).
 * Values are folded the way Fluss's FieldAggregator subclasses fold Java
 * values: integer arithmetic wraps at the column's width, FLOAT stays
 * single precision, DECIMAL keeps the column's scale and becomes NULL when
 * it no longer fits, comparisons follow Java's compare methods.
 */
#include "kv_agg.h"

#include <assert.h>
#include <string.h>

#include "common_alloc.h"
#include "kv_agg_rbm.h"

/* ---- spec --------------------------------------------------------------- */

/* Fluss's factory refusals (and max/min on types its compare rejects). */
static const char *fl_kv_agg_refusal(fl_aggfn_type_t fn, fl_type_root_t root) {
    bool numeric = root == FL_TYPE_TINYINT || root == FL_TYPE_SMALLINT ||
                   root == FL_TYPE_INTEGER || root == FL_TYPE_BIGINT || root == FL_TYPE_FLOAT ||
                   root == FL_TYPE_DOUBLE || root == FL_TYPE_DECIMAL;
    switch (fn) {
    case FL_AGGFN_SUM: return numeric ? NULL : "Data type for sum column must be 'NumericType'";
    case FL_AGGFN_PRODUCT:
        return numeric ? NULL : "Data type for product column must be 'NumericType'";
    case FL_AGGFN_BOOL_AND:
        return root == FL_TYPE_BOOLEAN ? NULL : "Data type for bool_and column must be 'BooleanType'";
    case FL_AGGFN_BOOL_OR:
        return root == FL_TYPE_BOOLEAN ? NULL : "Data type for bool_or column must be 'BooleanType'";
    case FL_AGGFN_LISTAGG:
        return root == FL_TYPE_STRING ? NULL : "Data type for listagg column must be 'StringType'";
    case FL_AGGFN_STRING_AGG:
        return root == FL_TYPE_STRING ? NULL : "Data type for string_agg column must be 'StringType'";
    case FL_AGGFN_RBM32:
        return root == FL_TYPE_BYTES ? NULL : "Data type for rbm32 column must be 'BytesType'";
    case FL_AGGFN_RBM64:
        return root == FL_TYPE_BYTES ? NULL : "Data type for rbm64 column must be 'BytesType'";
    case FL_AGGFN_MAX:
    case FL_AGGFN_MIN:
        return root == FL_TYPE_BOOLEAN || root == FL_TYPE_ARRAY || root == FL_TYPE_MAP ||
                       root == FL_TYPE_ROW
                   ? "Incomparable type"
                   : NULL;
    default: return NULL;
    }
}

int fl_kv_agg_spec_init(fl_kv_agg_spec_t *s, const fl_schema_t *schema, fl_error_t *err) {
    s->column_count = schema->column_count;
    s->columns = fl_calloc(s->column_count ? s->column_count : 1, sizeof(*s->columns));
    for (size_t i = 0; i < s->column_count; i++) {
        const fl_column_t *c = &schema->columns[i];
        fl_kv_agg_column_t *a = &s->columns[i];
        a->name = fl_strdup(c->name);
        a->nullable = c->type->nullable;
        a->root = c->type->root;
        a->is_primary_key = fl_strlist_index(&schema->primary_key, c->name) >= 0;
        if (a->is_primary_key) {
            a->fn = FL_AGGFN_LAST_VALUE;
            continue;
        }
        a->fn = c->agg_function ? fl_aggfn_json_type(c->agg_function) : FL_AGGFN_NONE;
        if (a->fn == FL_AGGFN_NONE) a->fn = FL_AGGFN_LAST_VALUE_IGNORE_NULLS;
        const char *why = fl_kv_agg_refusal(a->fn, c->type->root);
        if (why) {
            fl_buf_t ty;
            fl_buf_init(&ty);
            fl_datatype_format(c->type, &ty);
            fl_buf_put_u8(&ty, '\0');
            fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR, "%s but was '%s' (column '%s').", why,
                       (const char *)ty.data, c->name);
            fl_buf_free(&ty);
            fl_kv_agg_spec_reset(s);
            return FLUSS_ERR_UNKNOWN_SERVER_ERROR;
        }
        if (a->fn == FL_AGGFN_LISTAGG || a->fn == FL_AGGFN_STRING_AGG) {
            const char *d = fl_aggfn_json_param(c->agg_function, FL_AGGFN_PARAM_DELIMITER);
            if (!d) d = FL_AGGFN_DEFAULT_DELIMITER;
            a->delimiter = fl_strdup(d);
            a->delimiter_len = strlen(d);
        }
    }
    return 0;
}

void fl_kv_agg_spec_reset(fl_kv_agg_spec_t *s) {
    for (size_t i = 0; i < s->column_count; i++) {
        fl_free(s->columns[i].name);
        fl_free(s->columns[i].delimiter);
    }
    fl_free(s->columns);
    memset(s, 0, sizeof(*s));
}

int fl_kv_agg_check_target(const fl_kv_agg_spec_t *s, const bool *target, fl_error_t *err) {
    if (!target) return 0;
    for (size_t i = 0; i < s->column_count; i++) {
        if (!s->columns[i].is_primary_key || target[i]) continue;
        char keys[FL_ERROR_MSG_MAX / 2];
        size_t n = 0;
        keys[n++] = '[';
        for (size_t k = 0; k < s->column_count; k++) {
            if (!s->columns[k].is_primary_key) continue;
            n += (size_t)snprintf(keys + n, sizeof(keys) - n, "%s%s", n > 1 ? ", " : "",
                                  s->columns[k].name);
            if (n >= sizeof(keys) - 2) n = sizeof(keys) - 2;
        }
        keys[n++] = ']';
        keys[n] = '\0';
        return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                          "The target write columns must contain the primary key columns %s.",
                          keys);
    }
    for (size_t i = 0; i < s->column_count; i++)
        if (!s->columns[i].is_primary_key && !s->columns[i].nullable)
            return fl_err_set(err, FLUSS_ERR_INVALID_TARGET_COLUMN,
                              "Partial aggregate requires all columns except primary key to be "
                              "nullable, but column %s is NOT NULL.",
                              s->columns[i].name);
    return 0;
}

bool fl_kv_agg_supports_retract(const fl_kv_agg_spec_t *s) { return false; }

/* ---- values ------------------------------------------------------------- */

static bool fl_is_bytes_root(fl_type_root_t r) {
    return r == FL_TYPE_CHAR || r == FL_TYPE_STRING || r == FL_TYPE_BINARY || r == FL_TYPE_BYTES;
}

/* Copies cell c of row src into column col of out. */
static void fl_cell_copy(fl_row_t *out, size_t col, const fl_row_t *src, const fl_cell_t *c,
                         fl_type_root_t root) {
    if (c->is_null) {
        out->cells[col].is_null = true;
        return;
    }
    if (fl_is_bytes_root(root)) {
        fl_row_set_bytes(out, col, fl_row_cell_bytes(src, c), c->len);
        return;
    }
    out->cells[col] = *c;
    out->cells[col].off = out->cells[col].len = 0;
}

/* Java's Float.compare / Double.compare: -0.0 below 0.0, every NaN equal
 * to every NaN and above +infinity. */
static int fl_java_compare_double(double a, double b) {
    if (a < b) return -1;
    if (a > b) return 1;
    bool an = a != a, bn = b != b;
    if (an || bn) return an == bn ? 0 : an ? 1 : -1;
    bool as = __builtin_signbit(a), bs = __builtin_signbit(b); /* equal: only ±0 differ */
    return as == bs ? 0 : as ? -1 : 1;
}

static int fl_cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* InternalRowUtils.compare for the roots max/min take. */
static int fl_cell_compare(fl_type_root_t root, const fl_row_t *ra, const fl_cell_t *a,
                           const fl_row_t *rb, const fl_cell_t *b) {
    switch (root) {
    case FL_TYPE_FLOAT: return fl_java_compare_double((float)a->d, (float)b->d);
    case FL_TYPE_DOUBLE: return fl_java_compare_double(a->d, b->d);
    case FL_TYPE_DECIMAL: return (a->dec > b->dec) - (a->dec < b->dec);
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: {
        int c = fl_cmp_i64(a->i, b->i);
        return c ? c : fl_cmp_i64(a->nanos, b->nanos);
    }
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BINARY:
    case FL_TYPE_BYTES: {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = n ? memcmp(fl_row_cell_bytes(ra, a), fl_row_cell_bytes(rb, b), n) : 0;
        if (c) return c;
        return (a->len > b->len) - (a->len < b->len);
    }
    default: return fl_cmp_i64(a->i, b->i); /* integers, DATE, TIME */
    }
}

/* Integer results wrap at the column width, as Java's (byte)/(short)/int/
 * long arithmetic does. */
static int64_t fl_wrap(fl_type_root_t root, uint64_t v) {
    switch (root) {
    case FL_TYPE_TINYINT: return (int8_t)(uint8_t)v;
    case FL_TYPE_SMALLINT: return (int16_t)(uint16_t)v;
    case FL_TYPE_INTEGER: return (int32_t)(uint32_t)v;
    default: return (int64_t)v;
    }
}

static unsigned __int128 fl_pow10_u128(int n) {
    unsigned __int128 p = 1;
    while (n-- > 0) p *= 10;
    return p;
}

static bool fl_decimal_fits(__int128 v, int precision) {
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    return m < fl_pow10_u128(precision);
}

/* DecimalUtils.add: for precision <= 18 the unscaled longs add exactly and
 * are not checked against the precision (only a long overflow falls back to
 * BigDecimal, whose result then exceeds it: NULL); above 18 the exact sum
 * must fit the precision or the result is NULL. */
static bool fl_decimal_add(const fl_datatype_t *t, __int128 a, __int128 b, __int128 *out) {
    if (t->precision <= 18 && a >= INT64_MIN && a <= INT64_MAX && b >= INT64_MIN && b <= INT64_MAX) {
        int64_t r;
        if (__builtin_add_overflow((int64_t)a, (int64_t)b, &r)) return false;
        *out = r;
        return true;
    }
    __int128 r;
    if (__builtin_add_overflow(a, b, &r)) return false;
    if (!fl_decimal_fits(r, t->precision)) return false;
    *out = r;
    return true;
}

/* 256-bit magnitude as 4 little-endian limbs. */
typedef struct fl_u256 {
    uint64_t w[4];
} fl_u256_t;

static fl_u256_t fl_u256_mul(unsigned __int128 a, unsigned __int128 b) {
    uint64_t x[2] = {(uint64_t)a, (uint64_t)(a >> 64)}, y[2] = {(uint64_t)b, (uint64_t)(b >> 64)};
    fl_u256_t r = {{0, 0, 0, 0}};
    for (int i = 0; i < 2; i++) {
        unsigned __int128 carry = 0;
        for (int j = 0; j < 2; j++) {
            unsigned __int128 cur = (unsigned __int128)x[i] * y[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint64_t)cur;
            carry = cur >> 64;
        }
        r.w[i + 2] = (uint64_t)carry;
    }
    return r;
}

/* Divides by 10 in place and returns the remainder. */
static unsigned fl_u256_div10(fl_u256_t *v) {
    unsigned __int128 rem = 0;
    for (int i = 3; i >= 0; i--) {
        unsigned __int128 cur = rem << 64 | v->w[i];
        v->w[i] = (uint64_t)(cur / 10);
        rem = cur % 10;
    }
    return (unsigned)rem;
}

/* FieldProductAgg on DECIMAL: the exact product (scale 2s) rounded
 * HALF_UP back to scale s, NULL when it exceeds the precision. */
static bool fl_decimal_mul(const fl_datatype_t *t, __int128 a, __int128 b, __int128 *out) {
    bool neg = (a < 0) != (b < 0);
    unsigned __int128 ma = a < 0 ? -(unsigned __int128)a : (unsigned __int128)a;
    unsigned __int128 mb = b < 0 ? -(unsigned __int128)b : (unsigned __int128)b;
    fl_u256_t p = fl_u256_mul(ma, mb);
    unsigned last = 0;
    for (int i = 0; i < t->scale; i++) last = fl_u256_div10(&p);
    if (last >= 5) { /* HALF_UP: the highest dropped digit decides */
        for (int i = 0; i < 4 && ++p.w[i] == 0; i++) {
        }
    }
    if (p.w[2] || p.w[3]) return false;
    unsigned __int128 m = (unsigned __int128)p.w[1] << 64 | p.w[0];
    if (m >= fl_pow10_u128(t->precision)) return false;
    *out = neg ? -(__int128)m : (__int128)m;
    return true;
}

/* ---- the fold of one column --------------------------------------------- */

typedef struct fl_fold {
    const fl_kv_agg_column_t *col;
    const fl_datatype_t *type;
    const fl_row_t *old_row, *new_row;
    const fl_cell_t *acc, *in;
    fl_row_t *out;
    size_t idx;
} fl_fold_t;

static int fl_fold_bitmap(const fl_fold_t *f, fl_error_t *err) {
    fl_buf_t buf;
    fl_buf_init(&buf);
    const uint8_t *a = fl_row_cell_bytes(f->old_row, f->acc), *b = fl_row_cell_bytes(f->new_row, f->in);
    fl_error_t why;
    fl_err_clear(&why);
    int rc = f->col->fn == FL_AGGFN_RBM32
                 ? fl_kv_rbm32_union(a, f->acc->len, b, f->in->len, &buf, &why)
                 : fl_kv_rbm64_union(a, f->acc->len, b, f->in->len, &buf, &why);
    if (rc) {
        fl_buf_free(&buf);
        return fl_err_set(err, FLUSS_ERR_UNKNOWN_SERVER_ERROR,
                          "Unable to se/deserialize roaring bitmap (column '%s'): %s", f->col->name,
                          why.msg);
    }
    fl_row_set_bytes(f->out, f->idx, buf.data, buf.len);
    fl_buf_free(&buf);
    return 0;
}

static void fl_fold_listagg(const fl_fold_t *f) {
    size_t n = f->acc->len + f->col->delimiter_len + f->in->len;
    uint8_t *tmp = fl_malloc(n ? n : 1);
    memcpy(tmp, fl_row_cell_bytes(f->old_row, f->acc), f->acc->len);
    memcpy(tmp + f->acc->len, f->col->delimiter, f->col->delimiter_len);
    memcpy(tmp + f->acc->len + f->col->delimiter_len, fl_row_cell_bytes(f->new_row, f->in),
           f->in->len);
    fl_row_set_bytes(f->out, f->idx, tmp, n);
    fl_free(tmp);
}

/* sum / product of two non-NULL values. */
static void fl_fold_arith(const fl_fold_t *f, bool product) {
    fl_cell_t *o = &f->out->cells[f->idx];
    fl_type_root_t root = f->type->root;
    *o = (fl_cell_t){.is_null = false};
    if (root == FL_TYPE_FLOAT) {
        float a = (float)f->acc->d, b = (float)f->in->d;
        o->d = product ? (float)(a * b) : (float)(a + b);
    } else if (root == FL_TYPE_DOUBLE) {
        o->d = product ? f->acc->d * f->in->d : f->acc->d + f->in->d;
    } else if (root == FL_TYPE_DECIMAL) {
        bool ok = product ? fl_decimal_mul(f->type, f->acc->dec, f->in->dec, &o->dec)
                          : fl_decimal_add(f->type, f->acc->dec, f->in->dec, &o->dec);
        if (!ok) o->is_null = true;
    } else {
        uint64_t a = (uint64_t)f->acc->i, b = (uint64_t)f->in->i;
        o->i = fl_wrap(root, product ? a * b : a + b);
    }
}

static int fl_fold_column(const fl_fold_t *f, fl_error_t *err) {
    fl_type_root_t root = f->type->root;
    const fl_cell_t *acc = f->acc, *in = f->in;
    switch (f->col->fn) {
    case FL_AGGFN_LAST_VALUE: fl_cell_copy(f->out, f->idx, f->new_row, in, root); return 0;
    case FL_AGGFN_LAST_VALUE_IGNORE_NULLS:
        if (in->is_null) fl_cell_copy(f->out, f->idx, f->old_row, acc, root);
        else fl_cell_copy(f->out, f->idx, f->new_row, in, root);
        return 0;
    case FL_AGGFN_FIRST_VALUE: /* 0.9.1: a NULL first value is replaced, like _ignore_nulls */
    case FL_AGGFN_FIRST_VALUE_IGNORE_NULLS:
        if (!acc->is_null) fl_cell_copy(f->out, f->idx, f->old_row, acc, root);
        else fl_cell_copy(f->out, f->idx, f->new_row, in, root);
        return 0;
    default: break;
    }
    /* every other function: one NULL side yields the other side */
    if (acc->is_null || in->is_null) {
        if (acc->is_null) fl_cell_copy(f->out, f->idx, f->new_row, in, root);
        else fl_cell_copy(f->out, f->idx, f->old_row, acc, root);
        return 0;
    }
    switch (f->col->fn) {
    case FL_AGGFN_SUM: fl_fold_arith(f, false); return 0;
    case FL_AGGFN_PRODUCT: fl_fold_arith(f, true); return 0;
    case FL_AGGFN_MAX: {
        bool take_in = fl_cell_compare(root, f->old_row, acc, f->new_row, in) < 0;
        fl_cell_copy(f->out, f->idx, take_in ? f->new_row : f->old_row, take_in ? in : acc, root);
        return 0;
    }
    case FL_AGGFN_MIN: {
        bool keep = fl_cell_compare(root, f->old_row, acc, f->new_row, in) < 0;
        fl_cell_copy(f->out, f->idx, keep ? f->old_row : f->new_row, keep ? acc : in, root);
        return 0;
    }
    case FL_AGGFN_BOOL_AND:
    case FL_AGGFN_BOOL_OR: {
        fl_cell_t *o = &f->out->cells[f->idx];
        *o = (fl_cell_t){.is_null = false};
        o->i = f->col->fn == FL_AGGFN_BOOL_AND ? (acc->i && in->i) : (acc->i || in->i);
        return 0;
    }
    case FL_AGGFN_LISTAGG:
    case FL_AGGFN_STRING_AGG: fl_fold_listagg(f); return 0;
    case FL_AGGFN_RBM32:
    case FL_AGGFN_RBM64: return fl_fold_bitmap(f, err);
    default: assert(!"aggregate function without a fold"); return 0;
    }
}

int fl_kv_agg_merge(const fl_kv_agg_spec_t *s, const fl_datatype_t *const *types, size_t n,
                    const fl_row_t *old_row, const fl_row_t *new_row, const bool *target,
                    fl_row_t *out, fl_error_t *err) {
    assert(n == s->column_count && out->column_count == n && new_row->column_count == n);
    assert(out != old_row && out != new_row);
    fl_row_clear(out);
    if (!old_row) { /* first write of the key: the new row as it is */
        for (size_t i = 0; i < n; i++)
            fl_cell_copy(out, i, new_row, &new_row->cells[i], types[i]->root);
        return 0;
    }
    assert(old_row->column_count == n);
    for (size_t i = 0; i < n; i++) {
        if (target && !target[i]) {
            fl_cell_copy(out, i, old_row, &old_row->cells[i], types[i]->root);
            continue;
        }
        fl_fold_t f = {&s->columns[i], types[i], old_row, new_row,
                       &old_row->cells[i], &new_row->cells[i], out, i};
        int rc = fl_fold_column(&f, err);
        if (rc) return rc;
    }
    return 0;
}

fl_kv_agg_delete_outcome_t fl_kv_agg_delete(const fl_kv_agg_spec_t *s, const fl_row_t *old_row,
                                            const bool *target, fl_row_t *out) {
    if (!target) return FL_KV_AGG_DELETE_ROW;
    bool other_values = false;
    for (size_t i = 0; i < s->column_count && !other_values; i++)
        other_values = !target[i] && !old_row->cells[i].is_null;
    if (!other_values) return FL_KV_AGG_DELETE_ROW;
    fl_row_clear(out);
    for (size_t i = 0; i < s->column_count; i++) {
        if (target[i] && !s->columns[i].is_primary_key) continue; /* stays NULL */
        fl_cell_copy(out, i, old_row, &old_row->cells[i], s->columns[i].root);
    }
    return FL_KV_AGG_DELETE_UPDATE;
}
