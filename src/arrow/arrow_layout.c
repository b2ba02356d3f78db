/*
 * arrow_layout.c — how many Arrow field nodes and buffers a Fluss column
 * flattens to in a RecordBatch (Arrow TypeLayout over Fluss's type mapping,
 * ArrowUtils.toArrowSchema; protocol.md §3.7 and §4.3). Thread rule: none.
 *
 * | Fluss root                                   | Arrow type      | nodes | buffers                 |
 * |----------------------------------------------|-----------------|-------|-------------------------|
 * | BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE,     | Bool, Int,      | 1     | 2 validity, values      |
 * | DECIMAL, DATE, TIME, TIMESTAMP(_LTZ), BINARY | FloatingPoint,  |       |                         |
 * |                                              | Decimal, Date,  |       |                         |
 * |                                              | Time, Timestamp,|       |                         |
 * |                                              | FixedSizeBinary |       |                         |
 * | CHAR, STRING, BYTES                          | Utf8, Binary    | 1     | 3 validity, offsets, data |
 * | ARRAY<e>                                     | List            | 1 + e | 2 validity, offsets + e |
 * | ROW<f...>                                    | Struct          | 1 + Σf| 1 validity + Σf         |
 * | MAP<k, v>                                    | Map → Struct "entries"{k, v} | 2 + k + v | 2 + 1 + k + v |
 */
#include "arrow_ipc.h"

static int fl_arrow_shape_depth(const fl_datatype_t *t, int depth, uint32_t *nodes,
                                uint32_t *buffers) {
    if (!t || depth > FL_TYPE_DEPTH_MAX) return -1;
    uint32_t n = 1, b = 0;
    switch (t->root) {
    case FL_TYPE_BOOLEAN:
    case FL_TYPE_TINYINT:
    case FL_TYPE_SMALLINT:
    case FL_TYPE_INTEGER:
    case FL_TYPE_BIGINT:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DOUBLE:
    case FL_TYPE_DECIMAL:
    case FL_TYPE_DATE:
    case FL_TYPE_TIME:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ:
    case FL_TYPE_BINARY:
        b = 2;
        break;
    case FL_TYPE_CHAR:
    case FL_TYPE_STRING:
    case FL_TYPE_BYTES:
        b = 3;
        break;
    case FL_TYPE_ARRAY: {
        uint32_t cn, cb;
        if (fl_arrow_shape_depth(t->element, depth + 1, &cn, &cb)) return -1;
        n += cn;
        b = 2 + cb;
        break;
    }
    case FL_TYPE_MAP: {
        uint32_t kn, kb, vn, vb;
        if (fl_arrow_shape_depth(t->key, depth + 1, &kn, &kb) ||
            fl_arrow_shape_depth(t->value, depth + 1, &vn, &vb))
            return -1;
        n += 1 + kn + vn; /* + the "entries" struct */
        b = 2 + 1 + kb + vb;
        break;
    }
    case FL_TYPE_ROW:
        b = 1;
        if (t->field_count > FL_ROW_FIELDS_MAX || (t->field_count && !t->fields)) return -1;
        for (size_t i = 0; i < t->field_count; i++) {
            uint32_t fn, fb;
            if (fl_arrow_shape_depth(t->fields[i].type, depth + 1, &fn, &fb)) return -1;
            n += fn;
            b += fb;
            if (n > FL_ARROW_SHAPE_MAX || b > FL_ARROW_SHAPE_MAX) return -1;
        }
        break;
    default:
        return -1;
    }
    if (n > FL_ARROW_SHAPE_MAX || b > FL_ARROW_SHAPE_MAX) return -1;
    *nodes = n;
    *buffers = b;
    return 0;
}

int fl_arrow_column_shape(const fl_datatype_t *t, uint32_t *nodes, uint32_t *buffers) {
    return fl_arrow_shape_depth(t, 0, nodes, buffers);
}

size_t fl_arrow_value_width(const fl_datatype_t *t) {
    switch (t->root) {
    case FL_TYPE_TINYINT: return 1;
    case FL_TYPE_SMALLINT: return 2;
    case FL_TYPE_INTEGER:
    case FL_TYPE_FLOAT:
    case FL_TYPE_DATE: return 4;
    case FL_TYPE_BIGINT:
    case FL_TYPE_DOUBLE:
    case FL_TYPE_TIMESTAMP:
    case FL_TYPE_TIMESTAMP_LTZ: return 8;
    case FL_TYPE_TIME: return t->precision > 3 ? 8 : 4;
    case FL_TYPE_DECIMAL: return 16;
    case FL_TYPE_BINARY: return (size_t)(t->length > 0 ? t->length : 1);
    default: return 0;
    }
}
