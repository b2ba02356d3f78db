/*
 * client_arrow_c.c — exports a decoded record batch through the Arrow C
 * Data Interface (fluss.h fluss_record_batch_to_arrow): a struct array
 * with one child per column, and its schema (Fluss type → Arrow type of
 * protocol.md §4.3). Every buffer is a 64-byte aligned copy owned by the
 * exported array and freed by its release callback, so the export is
 * independent of the batch. Thread rule: none (the batch is only read).
 *
 * | Fluss           | format     | buffers                     |
 * |-----------------|------------|-----------------------------|
 * | BOOLEAN         | b          | validity, bits              |
 * | TINYINT..BIGINT | c s i l    | validity, values            |
 * | FLOAT, DOUBLE   | f g        | validity, values            |
 * | DECIMAL(p,s)    | d:p,s      | validity, 16-byte values    |
 * | CHAR, STRING    | u          | validity, offsets, data     |
 * | BYTES           | z          | validity, offsets, data     |
 * | BINARY(n)       | w:n        | validity, values            |
 * | DATE            | tdD        | validity, int32 days        |
 * | TIME(p)         | tts ttm ttu ttn | validity, values       |
 * | TIMESTAMP(_LTZ) | tss: tsm: tsu: tsn: (no time zone) | validity, int64 |
 * | ARRAY           | +l (child "element") | validity, offsets |
 * | MAP             | +m (child "entries" +s {key, value}) | validity, offsets |
 * | ROW             | +s         | validity                    |
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_table.h"
#include "common_alloc.h"

/* ---- schema ---- */

typedef struct fl_cschema {
    char format[48];
    char *name;
    struct ArrowSchema **child_ptrs;
    struct ArrowSchema *children;
} fl_cschema_t;

static void fl_cschema_release(struct ArrowSchema *s) {
    if (!s->release) return;
    fl_cschema_t *p = s->private_data;
    for (int64_t i = 0; i < s->n_children; i++)
        if (p->children[i].release) p->children[i].release(&p->children[i]);
    fl_free(p->children);
    fl_free(p->child_ptrs);
    fl_free(p->name);
    fl_free(p);
    s->release = NULL;
}

static void fl_time_format(char *f, size_t cap, const char *prefix, int p, const char *suffix) {
    char unit = p == 0 ? 's' : p <= 3 ? 'm' : p <= 6 ? 'u' : 'n';
    snprintf(f, cap, "%s%c%s", prefix, unit, suffix);
}

static void fl_schema_init(struct ArrowSchema *s, const fl_datatype_t *t, int kind,
                           const char *name, bool nullable) {
    fl_cschema_t *p = fl_calloc(1, sizeof(*p));
    p->name = fl_strdup(name);
    size_t nc = 0;
    const fl_datatype_t *child_types[2] = {0};
    switch (kind) {
    case FL_TYPE_BOOLEAN: strcpy(p->format, "b"); break;
    case FL_TYPE_TINYINT: strcpy(p->format, "c"); break;
    case FL_TYPE_SMALLINT: strcpy(p->format, "s"); break;
    case FL_TYPE_INTEGER: strcpy(p->format, "i"); break;
    case FL_TYPE_BIGINT: strcpy(p->format, "l"); break;
    case FL_TYPE_FLOAT: strcpy(p->format, "f"); break;
    case FL_TYPE_DOUBLE: strcpy(p->format, "g"); break;
    case FL_TYPE_DECIMAL: snprintf(p->format, sizeof(p->format), "d:%d,%d", t->precision, t->scale); break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING: strcpy(p->format, "u"); break;
    case FL_TYPE_BYTES: strcpy(p->format, "z"); break;
    case FL_TYPE_BINARY: snprintf(p->format, sizeof(p->format), "w:%d", t->length); break;
    case FL_TYPE_DATE: strcpy(p->format, "tdD"); break;
    case FL_TYPE_TIME: fl_time_format(p->format, sizeof(p->format), "tt", t->precision, ""); break;
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
        fl_time_format(p->format, sizeof(p->format), "ts", t->precision, ":");
        break;
    case FL_TYPE_ARRAY: strcpy(p->format, "+l"); nc = 1; break;
    case FL_TYPE_MAP: strcpy(p->format, "+m"); nc = 1; break;
    case FL_ARROW_ARRAY_ENTRIES: strcpy(p->format, "+s"); nc = 2; child_types[0] = t->key; child_types[1] = t->value; break;
    case FL_TYPE_ROW: strcpy(p->format, "+s"); nc = t->field_count; break;
    default: strcpy(p->format, "n"); break;
    }
    p->children = fl_calloc(nc ? nc : 1, sizeof(struct ArrowSchema));
    p->child_ptrs = fl_calloc(nc ? nc : 1, sizeof(struct ArrowSchema *));
    for (size_t i = 0; i < nc; i++) {
        p->child_ptrs[i] = &p->children[i];
        if (kind == FL_TYPE_ARRAY)
            fl_schema_init(&p->children[i], t->element, (int)t->element->root, "element", t->element->nullable);
        else if (kind == FL_TYPE_MAP)
            fl_schema_init(&p->children[i], t, FL_ARROW_ARRAY_ENTRIES, "entries", false);
        else if (kind == FL_ARROW_ARRAY_ENTRIES)
            fl_schema_init(&p->children[i], child_types[i], (int)child_types[i]->root,
                           i ? "value" : "key", i ? child_types[i]->nullable : false);
        else
            fl_schema_init(&p->children[i], t->fields[i].type, (int)t->fields[i].type->root,
                           t->fields[i].name, t->fields[i].type->nullable);
    }
    memset(s, 0, sizeof(*s));
    s->format = p->format;
    s->name = p->name;
    s->metadata = NULL;
    s->flags = nullable ? ARROW_FLAG_NULLABLE : 0;
    s->n_children = (int64_t)nc;
    s->children = p->child_ptrs;
    s->dictionary = NULL;
    s->release = fl_cschema_release;
    s->private_data = p;
}

/* ---- array ---- */

typedef struct fl_carray {
    const void *buffers[3];
    struct ArrowArray **child_ptrs;
    struct ArrowArray *children;
} fl_carray_t;

static void fl_carray_release(struct ArrowArray *a) {
    if (!a->release) return;
    fl_carray_t *p = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++)
        if (p->children[i].release) p->children[i].release(&p->children[i]);
    for (int i = 0; i < 3; i++) free((void *)p->buffers[i]);
    fl_free(p->children);
    fl_free(p->child_ptrs);
    fl_free(p);
    a->release = NULL;
}

/* A 64-byte aligned copy of b padded with zeros to at least min bytes.
 * aligned_alloc/free bypass the allocation funnel on purpose: the Arrow
 * spec recommends 64-byte alignment and the release callback may run in
 * another library's code, far from any fl_ allocator state. */
static void *fl_copy_buffer(const fl_buf_t *b, size_t min) {
    size_t n = b->len > min ? b->len : min;
    size_t cap = (n + 63) / 64 * 64;
    if (cap == 0) cap = 64;
    void *p = aligned_alloc(64, cap);
    if (!p) abort();
    memset(p, 0, cap);
    if (b->len) memcpy(p, b->data, b->len);
    return p;
}

static int64_t fl_count_nulls(const fl_arrow_array_t *c, int64_t off, int64_t len) {
    if (c->validity.len == 0) return 0;
    int64_t n = 0;
    for (int64_t i = off; i < off + len; i++) n += fl_arrow_array_is_null(c, i);
    return n;
}

static void fl_array_init(struct ArrowArray *a, const fl_arrow_array_t *c, int64_t off, int64_t len) {
    fl_carray_t *p = fl_calloc(1, sizeof(*p));
    int64_t nb = 2;
    switch (c->kind) {
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES: nb = 3; break;
    case FL_TYPE_ROW:
    case FL_ARROW_ARRAY_ENTRIES: nb = 1; break;
    default: break;
    }
    int64_t nulls = fl_count_nulls(c, off, len);
    p->buffers[0] = nulls > 0 ? fl_copy_buffer(&c->validity, 0) : NULL;
    if (nb >= 2) {
        bool offsets = nb == 3 || c->kind == FL_TYPE_ARRAY || c->kind == FL_TYPE_MAP;
        p->buffers[1] = fl_copy_buffer(&c->values, offsets ? (size_t)(c->length + 1) * 4 : 0);
    }
    if (nb == 3) p->buffers[2] = fl_copy_buffer(&c->data, 0);
    size_t nc = c->child_count;
    p->children = fl_calloc(nc ? nc : 1, sizeof(struct ArrowArray));
    p->child_ptrs = fl_calloc(nc ? nc : 1, sizeof(struct ArrowArray *));
    for (size_t i = 0; i < nc; i++) {
        p->child_ptrs[i] = &p->children[i];
        fl_array_init(&p->children[i], &c->children[i], 0, c->children[i].length);
    }
    memset(a, 0, sizeof(*a));
    a->length = len;
    a->null_count = nulls;
    a->offset = off;
    a->n_buffers = nb;
    a->n_children = (int64_t)nc;
    a->buffers = p->buffers;
    a->children = p->child_ptrs;
    a->dictionary = NULL;
    a->release = fl_carray_release;
    a->private_data = p;
}

int fluss_record_batch_to_arrow(const fluss_record_batch_t *b, struct ArrowSchema *schema,
                                struct ArrowArray *array, fluss_error_t *e) {
    (void)e;
    size_t n = b->column_count;
    /* the top-level struct */
    fl_cschema_t *sp = fl_calloc(1, sizeof(*sp));
    strcpy(sp->format, "+s");
    sp->name = fl_strdup("");
    sp->children = fl_calloc(n ? n : 1, sizeof(struct ArrowSchema));
    sp->child_ptrs = fl_calloc(n ? n : 1, sizeof(struct ArrowSchema *));
    fl_carray_t *ap = fl_calloc(1, sizeof(*ap));
    ap->children = fl_calloc(n ? n : 1, sizeof(struct ArrowArray));
    ap->child_ptrs = fl_calloc(n ? n : 1, sizeof(struct ArrowArray *));
    for (size_t i = 0; i < n; i++) {
        const fl_arrow_array_t *c = &b->cols[i];
        sp->child_ptrs[i] = &sp->children[i];
        fl_schema_init(&sp->children[i], c->type, c->kind, b->names[i], c->type->nullable);
        ap->child_ptrs[i] = &ap->children[i];
        fl_array_init(&ap->children[i], c, (int64_t)b->skip, (int64_t)b->rows);
    }
    memset(schema, 0, sizeof(*schema));
    schema->format = sp->format;
    schema->name = sp->name;
    schema->n_children = (int64_t)n;
    schema->children = sp->child_ptrs;
    schema->release = fl_cschema_release;
    schema->private_data = sp;
    memset(array, 0, sizeof(*array));
    array->length = (int64_t)b->rows;
    array->null_count = 0;
    array->offset = 0;
    array->n_buffers = 1;
    array->n_children = (int64_t)n;
    array->buffers = ap->buffers; /* {NULL}: no validity */
    array->children = ap->child_ptrs;
    array->release = fl_carray_release;
    array->private_data = ap;
    return 0;
}
