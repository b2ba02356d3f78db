/*
 * lake_iceberg_manifest_read.c — reading Iceberg v2 manifests and
 * manifest lists back into lake_iceberg_manifest.h's description, for
 * manifest merging and snapshot expiry. Bytes from a file: every field is
 * found by its Iceberg field id in the file's own schema and its type
 * checked before use (lake_avro_file.h has already bounds-checked the
 * encoding); values are copied into the result's arena. Thread rule: none.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_avro_file.h"
#include "lake_iceberg_manifest.h"
#include "lake_iceberg_manifest_int.h"

typedef struct rd {
    fl_avro_arena_t *a;
    fl_error_t *err;
} rd_t;

static int corrupt(rd_t *r, const char *what, int32_t id) {
    return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "field %" PRId32 ": %s", id, what);
}

static void *alloc(rd_t *r, size_t n) { return fl_avro_arena_try_alloc(r->a, n ? n : 1); }

/* A NUL-terminated copy (never NULL on success, even for 0 bytes). */
static int copy(rd_t *r, const uint8_t *p, size_t n, fl_avro_bytes_t *out) {
    uint8_t *q = alloc(r, n + 1);
    if (!q) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    if (n) memcpy(q, p, n);
    *out = (fl_avro_bytes_t){q, n};
    return 0;
}

/* Room for one more of `size`-byte items in *arr (n used of *cap). */
static int grow(rd_t *r, void **arr, size_t n, size_t *cap, size_t size) {
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = alloc(r, c * size);
    if (!p) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    if (n) memcpy(p, *arr, n * size);
    *arr = p;
    *cap = c;
    return 0;
}

/* The field `id` of a record (schema rs, value rv): *v its value inside
 * the optional union and *vs its schema, or both NULL for a null or
 * absent field (CORRUPT if required); CORRUPT for another type. */
static int field(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                 fl_avro_type_t want, bool required, const fl_avro_value_t **v,
                 const fl_avro_schema_t **vs) {
    *v = NULL;
    if (vs) *vs = NULL;
    int i = fl_avro_schema_field_index_by_id(rs, id);
    if (i < 0) return required ? corrupt(r, "missing", id) : 0;
    const fl_avro_schema_t *s = rs->fields[i].type;
    const fl_avro_value_t *x = &rv->u.list.items[i];
    if (x->type == FL_AVRO_UNION) {
        s = s->branches[x->u.branch.index];
        x = x->u.branch.value;
    }
    if (x->type == FL_AVRO_NULL) return required ? corrupt(r, "null", id) : 0;
    if (x->type != want) return corrupt(r, "of another type", id);
    *v = x;
    if (vs) *vs = s;
    return 0;
}

/* An int or long field; `none` for a null optional one. Negative values
 * are refused (counts, ids, sequence numbers, sizes are never negative). */
static int get_long(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                    bool required, int64_t none, int64_t *out) {
    const fl_avro_value_t *v;
    if (field(r, rs, rv, id, FL_AVRO_LONG, required, &v, NULL)) return FLUSS_ERR__CORRUPT;
    *out = v ? v->u.l : none;
    return v && v->u.l < 0 ? corrupt(r, "negative", id) : 0;
}

static int get_int(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                   bool required, int32_t none, int32_t *out) {
    const fl_avro_value_t *v;
    if (field(r, rs, rv, id, FL_AVRO_INT, required, &v, NULL)) return FLUSS_ERR__CORRUPT;
    *out = v ? v->u.i : none;
    return v && v->u.i < 0 ? corrupt(r, "negative", id) : 0;
}

static int get_string(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                      const char **out) {
    const fl_avro_value_t *v;
    fl_avro_bytes_t b;
    if (field(r, rs, rv, id, FL_AVRO_STRING, true, &v, NULL)) return FLUSS_ERR__CORRUPT;
    if (memchr(v->u.bytes.p, 0, v->u.bytes.len)) return corrupt(r, "holds a NUL", id);
    if (copy(r, v->u.bytes.p, v->u.bytes.len, &b)) return FLUSS_ERR__NO_MEMORY;
    *out = (const char *)b.p;
    return 0;
}

/* An optional bytes field: a copy, or a NULL pointer for null. */
static int get_bytes(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                     fl_avro_bytes_t *out) {
    const fl_avro_value_t *v;
    *out = (fl_avro_bytes_t){0};
    if (field(r, rs, rv, id, FL_AVRO_BYTES, false, &v, NULL)) return FLUSS_ERR__CORRUPT;
    return v ? copy(r, v->u.bytes.p, v->u.bytes.len, out) : 0;
}

/* An optional array field of ints or longs, with at most FL_ICE_LIST_MAX
 * items: *items its array (a plain, non-optional element type) or NULL. */
static int get_list(rd_t *r, const fl_avro_schema_t *rs, const fl_avro_value_t *rv, int32_t id,
                    fl_avro_type_t elem, const fl_avro_value_t **items, size_t *n) {
    const fl_avro_value_t *v;
    const fl_avro_schema_t *vs;
    *items = NULL;
    *n = 0;
    if (field(r, rs, rv, id, FL_AVRO_ARRAY, false, &v, &vs)) return FLUSS_ERR__CORRUPT;
    if (!v) return 0;
    if (vs->items->type != elem) return corrupt(r, "elements of another type", id);
    if (v->u.list.n > FL_ICE_LIST_MAX) return corrupt(r, "too many elements", id);
    *items = v->u.list.items;
    *n = v->u.list.n;
    return 0;
}

/* ---- data files ---- */

/* The column of field id `fid` in the sorted columns, inserted (all stats
 * absent) if new. */
static fl_ice_column_stats_t *column(fl_ice_column_stats_t *cols, size_t *n, int32_t fid) {
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cols[mid].field_id < fid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *n && cols[lo].field_id == fid) return &cols[lo];
    memmove(&cols[lo + 1], &cols[lo], (*n - lo) * sizeof(*cols));
    (*n)++;
    cols[lo] = (fl_ice_column_stats_t){fid, FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE, FL_ICE_NONE,
                                       {0}, {0}};
    return &cols[lo];
}

static const struct stat_map {
    int32_t id, key_id, value_id;
    fl_avro_type_t value;
} STAT_MAPS[] = {
    {ICE_DF_COLUMN_SIZES, 117, 118, FL_AVRO_LONG}, {ICE_DF_VALUE_COUNTS, 119, 120, FL_AVRO_LONG},
    {ICE_DF_NULL_COUNTS, 121, 122, FL_AVRO_LONG},  {ICE_DF_NAN_COUNTS, 138, 139, FL_AVRO_LONG},
    {ICE_DF_LOWER, 126, 127, FL_AVRO_BYTES},       {ICE_DF_UPPER, 129, 130, FL_AVRO_BYTES},
};

/* One key/value item of stat map k into its column's stats. */
static int stat_item(rd_t *r, size_t k, const fl_avro_schema_t *kvs, const fl_avro_value_t *kv,
                     fl_ice_column_stats_t *cols, size_t *n) {
    const struct stat_map *m = &STAT_MAPS[k];
    int32_t key;
    const fl_avro_value_t *v;
    if (get_int(r, kvs, kv, m->key_id, true, 0, &key) ||
        field(r, kvs, kv, m->value_id, m->value, true, &v, NULL))
        return FLUSS_ERR__CORRUPT;
    fl_ice_column_stats_t *c = column(cols, n, key);
    int64_t *counts[] = {&c->column_size, &c->value_count, &c->null_count, &c->nan_count};
    if (k < 4) {
        if (*counts[k] != FL_ICE_NONE) return corrupt(r, "a column twice", m->id);
        if (v->u.l < 0) return corrupt(r, "a negative count", m->id);
        *counts[k] = v->u.l;
        return 0;
    }
    fl_avro_bytes_t *b = k == 4 ? &c->lower : &c->upper;
    if (b->p) return corrupt(r, "a column twice", m->id);
    return copy(r, v->u.bytes.p, v->u.bytes.len, b);
}

static int read_stats(rd_t *r, const fl_avro_schema_t *ds, const fl_avro_value_t *dv,
                      fl_ice_data_file_t *f) {
    const fl_avro_value_t *maps[6];
    const fl_avro_schema_t *schemas[6];
    size_t total = 0;
    for (size_t k = 0; k < 6; k++) {
        if (field(r, ds, dv, STAT_MAPS[k].id, FL_AVRO_ARRAY, false, &maps[k], &schemas[k]))
            return FLUSS_ERR__CORRUPT;
        if (!maps[k]) continue;
        if (schemas[k]->items->type != FL_AVRO_RECORD || maps[k]->u.list.n > FL_ICE_COLUMNS_MAX)
            return corrupt(r, "not a map of at most 4096 columns", STAT_MAPS[k].id);
        total += maps[k]->u.list.n;
    }
    fl_ice_column_stats_t *cols = alloc(r, total * sizeof(*cols));
    if (!cols) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    size_t n = 0;
    for (size_t k = 0; k < 6; k++)
        for (size_t i = 0; maps[k] && i < maps[k]->u.list.n; i++)
            if (stat_item(r, k, schemas[k]->items, &maps[k]->u.list.items[i], cols, &n))
                return r->err->code;
    f->columns = cols;
    f->n_columns = n;
    return 0;
}

static int read_lists(rd_t *r, const fl_avro_schema_t *ds, const fl_avro_value_t *dv,
                      fl_ice_data_file_t *f) {
    const fl_avro_value_t *items;
    size_t n;
    if (get_list(r, ds, dv, ICE_DF_SPLITS, FL_AVRO_LONG, &items, &n)) return FLUSS_ERR__CORRUPT;
    int64_t *splits = alloc(r, n * sizeof(*splits));
    if (!splits) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    for (size_t i = 0; i < n; i++) {
        splits[i] = items[i].u.l;
        if (i && splits[i] < splits[i - 1]) return corrupt(r, "not ascending", ICE_DF_SPLITS);
    }
    f->split_offsets = n ? splits : NULL;
    f->n_split_offsets = n;
    if (get_list(r, ds, dv, ICE_DF_EQUALITY_IDS, FL_AVRO_INT, &items, &n)) return FLUSS_ERR__CORRUPT;
    int32_t *ids = alloc(r, n * sizeof(*ids));
    if (!ids) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    for (size_t i = 0; i < n; i++) ids[i] = items[i].u.i;
    f->equality_ids = n ? ids : NULL;
    f->n_equality_ids = n;
    if ((n > 0) != (f->content == FL_ICE_EQUALITY_DELETES))
        return corrupt(r, "equality ids belong to equality deletes only", ICE_DF_EQUALITY_IDS);
    return get_int(r, ds, dv, ICE_DF_SORT_ORDER, false, FL_ICE_NO_ORDER, &f->sort_order_id);
}

static const fl_avro_type_t AVRO_OF[] = {
    [FL_ICE_INT] = FL_AVRO_INT, [FL_ICE_LONG] = FL_AVRO_LONG,
    [FL_ICE_STRING] = FL_AVRO_STRING, [FL_ICE_DATE] = FL_AVRO_INT};

static int read_partition(rd_t *r, const fl_ice_partition_spec_t *spec, const fl_avro_schema_t *ds,
                          const fl_avro_value_t *dv, fl_ice_data_file_t *f) {
    const fl_avro_value_t *pv;
    const fl_avro_schema_t *ps;
    if (field(r, ds, dv, ICE_DF_PARTITION, FL_AVRO_RECORD, true, &pv, &ps)) return FLUSS_ERR__CORRUPT;
    fl_ice_value_t *vals = alloc(r, spec->n_fields * sizeof(*vals));
    if (!vals) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    for (size_t i = 0; i < spec->n_fields; i++) {
        const fl_ice_partition_field_t *pf = &spec->fields[i];
        const fl_avro_value_t *v;
        if (field(r, ps, pv, pf->field_id, AVRO_OF[pf->type], false, &v, NULL))
            return FLUSS_ERR__CORRUPT;
        vals[i].null = !v;
        if (v && pf->type == FL_ICE_STRING) {
            if (copy(r, v->u.bytes.p, v->u.bytes.len, &vals[i].s)) return FLUSS_ERR__NO_MEMORY;
        } else if (v) {
            vals[i].i = pf->type == FL_ICE_LONG ? v->u.l : v->u.i;
        }
    }
    f->partition = vals;
    return 0;
}

static int read_data_file(rd_t *r, const fl_ice_manifest_t *m, const fl_avro_schema_t *es,
                          const fl_avro_value_t *ev, fl_ice_data_file_t *f) {
    const fl_avro_value_t *dv;
    const fl_avro_schema_t *ds;
    int32_t content;
    if (field(r, es, ev, ICE_ME_DATA_FILE, FL_AVRO_RECORD, true, &dv, &ds) ||
        get_int(r, ds, dv, ICE_DF_CONTENT, true, 0, &content))
        return FLUSS_ERR__CORRUPT;
    if (content > FL_ICE_EQUALITY_DELETES ||
        (content != FL_ICE_DATA) != (m->content == FL_ICE_MANIFEST_DELETES))
        return corrupt(r, "content against the manifest's", ICE_DF_CONTENT);
    f->content = (fl_ice_file_content_t)content;
    int rc = get_string(r, ds, dv, ICE_DF_PATH, &f->file_path);
    if (!rc) rc = get_string(r, ds, dv, ICE_DF_FORMAT, &f->file_format);
    if (!rc) rc = read_partition(r, &m->spec, ds, dv, f);
    if (!rc) rc = get_long(r, ds, dv, ICE_DF_RECORDS, true, 0, &f->record_count);
    if (!rc) rc = get_long(r, ds, dv, ICE_DF_SIZE, true, 0, &f->file_size_bytes);
    if (!rc) rc = read_stats(r, ds, dv, f);
    if (!rc) rc = read_lists(r, ds, dv, f);
    return rc;
}

static int read_entry(rd_t *r, const fl_ice_manifest_t *m, const fl_avro_schema_t *es,
                      const fl_avro_value_t *ev, fl_ice_manifest_entry_t *e) {
    int32_t status;
    if (get_int(r, es, ev, ICE_ME_STATUS, true, 0, &status) ||
        get_long(r, es, ev, ICE_ME_SNAPSHOT, false, FL_ICE_NONE, &e->snapshot_id) ||
        get_long(r, es, ev, ICE_ME_SEQ, false, FL_ICE_NONE, &e->sequence_number) ||
        get_long(r, es, ev, ICE_ME_FILE_SEQ, false, FL_ICE_NONE, &e->file_sequence_number))
        return FLUSS_ERR__CORRUPT;
    if (status > FL_ICE_DELETED) return corrupt(r, "status out of range", ICE_ME_STATUS);
    e->status = (fl_ice_status_t)status;
    if (status != FL_ICE_ADDED &&
        (e->sequence_number == FL_ICE_NONE || e->file_sequence_number == FL_ICE_NONE))
        return corrupt(r, "null in an entry not added", ICE_ME_SEQ);
    return read_data_file(r, m, es, ev, &e->file);
}

/* ---- headers ---- */

/* The header value of key as text in buf (NUL-terminated), or CORRUPT if
 * absent or longer than the buffer. */
static int meta_text(rd_t *r, const fl_avro_file_reader_t *f, const char *key, char *buf,
                     size_t size) {
    const fl_avro_meta_t *m = fl_avro_file_reader_meta(f, key);
    if (!m || m->len >= size || memchr(m->value, 0, m->len))
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "header %s missing or malformed", key);
    memcpy(buf, m->value, m->len);
    buf[m->len] = 0;
    return 0;
}

static int meta_long(rd_t *r, const fl_avro_file_reader_t *f, const char *key, int64_t min,
                     int64_t max, int64_t *out) {
    char buf[32], *end;
    if (meta_text(r, f, key, buf, sizeof(buf))) return FLUSS_ERR__CORRUPT;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (!*buf || *end || errno || v < min || v > max)
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "header %s: \"%s\" not a number in range", key, buf);
    *out = v;
    return 0;
}

static int check_version(rd_t *r, const fl_avro_file_reader_t *f) {
    char v[8];
    if (meta_text(r, f, "format-version", v, sizeof(v))) return FLUSS_ERR__CORRUPT;
    if (strcmp(v, "2"))
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG, "format-version \"%s\" not supported", v);
    return 0;
}

/* "bucket[N]", N > 0, nothing after. */
static bool parse_bucket(const char *t, int32_t *n) {
    if (strncmp(t, "bucket[", 7) || t[7] < '0' || t[7] > '9') return false;
    char *end;
    errno = 0;
    long long v = strtoll(t + 7, &end, 10);
    if (errno || end[0] != ']' || end[1] || v <= 0 || v > INT32_MAX) return false;
    *n = (int32_t)v;
    return true;
}

/* One partition field of the "partition-spec" JSON; its value type from
 * the Avro partition record ps. */
static int spec_field(rd_t *r, const json_t *o, const fl_avro_schema_t *ps,
                      fl_ice_partition_field_t *f) {
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *t = json_string_value(json_object_get(o, "transform"));
    json_t *src = json_object_get(o, "source-id"), *fid = json_object_get(o, "field-id");
    if (!name || !t || !json_is_integer(src) || !json_is_integer(fid) ||
        json_integer_value(src) < 0 || json_integer_value(src) > INT32_MAX ||
        json_integer_value(fid) < 0 || json_integer_value(fid) > INT32_MAX)
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "partition-spec: a field malformed");
    fl_avro_bytes_t copied;
    if (copy(r, (const uint8_t *)name, strlen(name), &copied)) return FLUSS_ERR__NO_MEMORY;
    f->name = (const char *)copied.p;
    f->source_id = (int32_t)json_integer_value(src);
    f->field_id = (int32_t)json_integer_value(fid);
    if (!strcmp(t, "identity")) {
        f->transform = FL_ICE_IDENTITY;
    } else if (parse_bucket(t, &f->buckets)) {
        f->transform = FL_ICE_BUCKET;
    } else {
        return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG, "partition-spec: transform %s not supported", t);
    }
    int i = fl_avro_schema_field_index_by_id(ps, f->field_id);
    if (i < 0) return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "partition field %s not in r102", name);
    const fl_avro_schema_t *s = ps->fields[i].type;
    if (s->type == FL_AVRO_UNION)
        s = s->n_branches == 2 && s->branches[0]->type == FL_AVRO_NULL ? s->branches[1] : NULL;
    bool date = s && s->logical_type && !strcmp(s->logical_type, "date");
    if (s && s->type == FL_AVRO_INT) f->type = date ? FL_ICE_DATE : FL_ICE_INT;
    else if (s && s->type == FL_AVRO_LONG) f->type = FL_ICE_LONG;
    else if (s && s->type == FL_AVRO_STRING) f->type = FL_ICE_STRING;
    else return fl_err_set(r->err, FLUSS_ERR__INVALID_ARG, "partition field %s: type not supported", name);
    if (f->transform == FL_ICE_BUCKET && f->type != FL_ICE_INT)
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "partition field %s: a bucket not an int", name);
    return 0;
}

/* The partition record r102 inside the file's manifest_entry schema. */
static const fl_avro_schema_t *partition_record(const fl_avro_schema_t *es) {
    if (es->type != FL_AVRO_RECORD) return NULL;
    int i = fl_avro_schema_field_index_by_id(es, ICE_ME_DATA_FILE);
    const fl_avro_schema_t *ds = i < 0 ? NULL : es->fields[i].type;
    if (!ds || ds->type != FL_AVRO_RECORD) return NULL;
    i = fl_avro_schema_field_index_by_id(ds, ICE_DF_PARTITION);
    const fl_avro_schema_t *ps = i < 0 ? NULL : ds->fields[i].type;
    return ps && ps->type == FL_AVRO_RECORD ? ps : NULL;
}

static int read_spec(rd_t *r, const fl_avro_file_reader_t *f, fl_ice_partition_spec_t *spec) {
    const fl_avro_meta_t *m = fl_avro_file_reader_meta(f, "partition-spec");
    const fl_avro_schema_t *ps = partition_record(fl_avro_file_reader_schema(f));
    if (!m || !ps) return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "partition-spec or r102 missing");
    json_t *a = json_loadb((const char *)m->value, m->len, JSON_REJECT_DUPLICATES, NULL);
    int rc = 0;
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n > FL_ICE_PARTITION_FIELDS_MAX || n != ps->n_fields)
        rc = fl_err_set(r->err, FLUSS_ERR__CORRUPT, "partition-spec not an array of r102's fields");
    fl_ice_partition_field_t *fields = rc ? NULL : alloc(r, n * sizeof(*fields));
    if (!rc && !fields) rc = fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest: out of memory");
    for (size_t i = 0; !rc && i < n; i++) rc = spec_field(r, json_array_get(a, i), ps, &fields[i]);
    json_decref(a);
    spec->fields = fields;
    spec->n_fields = n;
    return rc;
}

/* "schema-id" is required in v2, but pyiceberg (0.12) leaves it out of
 * its manifests: then the "schema-id" inside the schema JSON, else 0. */
static int schema_id_of(rd_t *r, const fl_avro_file_reader_t *f, const fl_avro_meta_t *schema,
                        int64_t *out) {
    if (fl_avro_file_reader_meta(f, "schema-id"))
        return meta_long(r, f, "schema-id", 0, INT32_MAX, out);
    json_t *j = json_loadb((const char *)schema->value, schema->len, 0, NULL);
    json_t *id = json_object_get(j, "schema-id");
    json_int_t v = json_is_integer(id) ? json_integer_value(id) : 0;
    json_decref(j);
    if (v < 0 || v > INT32_MAX)
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "schema-id %lld out of range", (long long)v);
    *out = v;
    return 0;
}

static int read_manifest_header(rd_t *r, const fl_avro_file_reader_t *f, fl_ice_manifest_t *m) {
    char content[16];
    int64_t schema_id, spec_id;
    const fl_avro_meta_t *schema = fl_avro_file_reader_meta(f, "schema");
    fl_avro_bytes_t copied;
    if (check_version(r, f)) return r->err->code;
    if (meta_text(r, f, "content", content, sizeof(content)) ||
        meta_long(r, f, "partition-spec-id", 0, INT32_MAX, &spec_id))
        return FLUSS_ERR__CORRUPT;
    if (strcmp(content, "data") && strcmp(content, "deletes"))
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "header content \"%s\"", content);
    if (!schema || memchr(schema->value, 0, schema->len))
        return fl_err_set(r->err, FLUSS_ERR__CORRUPT, "header schema missing");
    if (schema_id_of(r, f, schema, &schema_id)) return FLUSS_ERR__CORRUPT;
    if (copy(r, schema->value, schema->len, &copied)) return FLUSS_ERR__NO_MEMORY;
    m->content = strcmp(content, "data") ? FL_ICE_MANIFEST_DELETES : FL_ICE_MANIFEST_DATA;
    m->schema_json = (const char *)copied.p;
    m->schema_id = (int32_t)schema_id;
    m->spec.spec_id = (int32_t)spec_id;
    m->snapshot_id = FL_ICE_NONE;
    return read_spec(r, f, &m->spec);
}

/* ---- manifests ---- */

void fl_ice_manifest_read_init(fl_ice_manifest_read_t *r) {
    memset(r, 0, sizeof(*r));
    fl_avro_arena_init(&r->arena);
}

void fl_ice_manifest_read_reset(fl_ice_manifest_read_t *r) {
    fl_avro_arena_reset(&r->arena);
    fl_ice_manifest_read_init(r);
}

/* One record of a file into item (size bytes, zeroed), with ctx. */
typedef int (*rd_record_fn)(rd_t *r, const void *ctx, const fl_avro_schema_t *s,
                            const fl_avro_value_t *v, void *item);

/* Every record of f into a new array of size-byte items; an error names
 * the record ("<what> <index>: ..."). */
static int read_records(rd_t *r, fl_avro_file_reader_t *f, size_t size, rd_record_fn fn,
                        const void *ctx, const char *what, void **items, size_t *count) {
    const fl_avro_schema_t *s = fl_avro_file_reader_schema(f);
    void *arr = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        const fl_avro_value_t *v;
        int rc = fl_avro_file_reader_next(f, &v, r->err);
        if (rc) return rc;
        if (!v) break;
        if (grow(r, &arr, n, &cap, size)) return FLUSS_ERR__NO_MEMORY;
        void *item = (char *)arr + n * size;
        memset(item, 0, size);
        if ((rc = fn(r, ctx, s, v, item))) {
            fl_err_prefix(r->err, "%s %zu: ", what, n);
            return rc;
        }
        n++;
    }
    *items = arr;
    *count = n;
    return 0;
}

static int read_entry_record(rd_t *r, const void *m, const fl_avro_schema_t *s,
                             const fl_avro_value_t *v, void *item) {
    return read_entry(r, m, s, v, item);
}

static int read_entries(rd_t *r, fl_avro_file_reader_t *f, fl_ice_manifest_t *m) {
    void *entries = NULL;
    int rc = read_records(r, f, sizeof(fl_ice_manifest_entry_t), read_entry_record, m,
                          "manifest entry", &entries, &m->n_entries);
    m->entries = entries;
    return rc;
}

static int manifest_read(fl_avro_file_reader_t *f, fl_ice_manifest_read_t *out, fl_error_t *err) {
    rd_t r = {&out->arena, err};
    int rc = fl_avro_file_reader_schema(f)->type == FL_AVRO_RECORD
                 ? 0
                 : fl_err_set(err, FLUSS_ERR__CORRUPT, "manifest: schema not a record");
    if (!rc) rc = read_manifest_header(&r, f, &out->manifest);
    if (!rc) rc = read_entries(&r, f, &out->manifest);
    fl_avro_file_reader_destroy(f);
    if (rc) fl_ice_manifest_read_reset(out);
    return rc;
}

int fl_ice_manifest_decode(const void *p, size_t len, fl_ice_manifest_read_t *r, fl_error_t *err) {
    fl_avro_file_reader_t *f;
    fl_ice_manifest_read_reset(r);
    int rc = fl_avro_file_reader_open_bytes(p, len, &f, err);
    return rc ? rc : manifest_read(f, r, err);
}

int fl_ice_manifest_read(const char *path, fl_ice_manifest_read_t *r, fl_error_t *err) {
    fl_avro_file_reader_t *f;
    fl_ice_manifest_read_reset(r);
    int rc = fl_avro_file_reader_open(path, &f, err);
    return rc ? rc : manifest_read(f, r, err);
}

/* ---- manifest lists ---- */

void fl_ice_manifest_list_read_init(fl_ice_manifest_list_read_t *r) {
    memset(r, 0, sizeof(*r));
    fl_avro_arena_init(&r->arena);
}

void fl_ice_manifest_list_read_reset(fl_ice_manifest_list_read_t *r) {
    fl_avro_arena_reset(&r->arena);
    fl_ice_manifest_list_read_init(r);
}

static int read_summary(rd_t *r, const fl_avro_schema_t *s, const fl_avro_value_t *v,
                        fl_ice_field_summary_t *out) {
    const fl_avro_value_t *x;
    if (s->type != FL_AVRO_RECORD || v->type != FL_AVRO_RECORD)
        return corrupt(r, "not a record", 508);
    if (field(r, s, v, ICE_FS_CONTAINS_NULL, FL_AVRO_BOOLEAN, true, &x, NULL))
        return FLUSS_ERR__CORRUPT;
    out->contains_null = x->u.boolean;
    if (field(r, s, v, ICE_FS_CONTAINS_NAN, FL_AVRO_BOOLEAN, false, &x, NULL))
        return FLUSS_ERR__CORRUPT;
    out->contains_nan = x ? (int8_t)x->u.boolean : -1;
    if (get_bytes(r, s, v, ICE_FS_LOWER, &out->lower)) return r->err->code;
    return get_bytes(r, s, v, ICE_FS_UPPER, &out->upper);
}

static int read_summaries(rd_t *r, const fl_avro_schema_t *ms, const fl_avro_value_t *mv,
                          fl_ice_manifest_file_t *m) {
    const fl_avro_value_t *v;
    const fl_avro_schema_t *s;
    if (field(r, ms, mv, ICE_MF_PARTITIONS, FL_AVRO_ARRAY, false, &v, &s)) return FLUSS_ERR__CORRUPT;
    if (!v) return 0;
    if (v->u.list.n > FL_ICE_PARTITION_FIELDS_MAX) return corrupt(r, "too many", ICE_MF_PARTITIONS);
    fl_ice_field_summary_t *p = alloc(r, v->u.list.n * sizeof(*p));
    if (!p) return fl_err_set(r->err, FLUSS_ERR__NO_MEMORY, "manifest list: out of memory");
    for (size_t i = 0; i < v->u.list.n; i++)
        if (read_summary(r, s->items, &v->u.list.items[i], &p[i])) return r->err->code;
    m->partitions = p;
    m->n_partitions = v->u.list.n;
    return 0;
}

static int read_manifest_file(rd_t *r, const fl_avro_schema_t *ms, const fl_avro_value_t *mv,
                              fl_ice_manifest_file_t *m) {
    int32_t content = 0;
    int rc = get_string(r, ms, mv, ICE_MF_PATH, &m->manifest_path);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_LENGTH, true, 0, &m->manifest_length);
    if (!rc) rc = get_int(r, ms, mv, ICE_MF_SPEC_ID, true, 0, &m->partition_spec_id);
    if (!rc) rc = get_int(r, ms, mv, ICE_MF_CONTENT, true, 0, &content);
    if (!rc && content > FL_ICE_MANIFEST_DELETES) rc = corrupt(r, "out of range", ICE_MF_CONTENT);
    m->content = (fl_ice_manifest_content_t)content;
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_SEQ, true, 0, &m->sequence_number);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_MIN_SEQ, true, 0, &m->min_sequence_number);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_SNAPSHOT, true, 0, &m->added_snapshot_id);
    if (!rc) rc = get_int(r, ms, mv, ICE_MF_ADDED_FILES, true, 0, &m->added_files_count);
    if (!rc) rc = get_int(r, ms, mv, ICE_MF_EXISTING_FILES, true, 0, &m->existing_files_count);
    if (!rc) rc = get_int(r, ms, mv, ICE_MF_DELETED_FILES, true, 0, &m->deleted_files_count);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_ADDED_ROWS, true, 0, &m->added_rows_count);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_EXISTING_ROWS, true, 0, &m->existing_rows_count);
    if (!rc) rc = get_long(r, ms, mv, ICE_MF_DELETED_ROWS, true, 0, &m->deleted_rows_count);
    if (!rc) rc = read_summaries(r, ms, mv, m);
    if (!rc) rc = get_bytes(r, ms, mv, ICE_MF_KEY_METADATA, &m->key_metadata);
    return rc;
}

static int read_list_header(rd_t *r, const fl_avro_file_reader_t *f, fl_ice_manifest_list_t *l) {
    char parent[32];
    if (check_version(r, f)) return r->err->code;
    if (meta_long(r, f, "snapshot-id", 0, INT64_MAX, &l->snapshot_id) ||
        meta_long(r, f, "sequence-number", 0, INT64_MAX, &l->sequence_number) ||
        meta_text(r, f, "parent-snapshot-id", parent, sizeof(parent)))
        return FLUSS_ERR__CORRUPT;
    l->parent_snapshot_id = FL_ICE_NONE;
    if (strcmp(parent, "null"))
        return meta_long(r, f, "parent-snapshot-id", 0, INT64_MAX, &l->parent_snapshot_id);
    return 0;
}

static int read_manifest_file_record(rd_t *r, const void *ctx, const fl_avro_schema_t *s,
                                     const fl_avro_value_t *v, void *item) {
    (void)ctx;
    return read_manifest_file(r, s, v, item);
}

static int read_manifest_files(rd_t *r, fl_avro_file_reader_t *f, fl_ice_manifest_list_t *l) {
    void *files = NULL;
    int rc = read_records(r, f, sizeof(fl_ice_manifest_file_t), read_manifest_file_record, NULL,
                          "manifest list entry", &files, &l->n_manifests);
    l->manifests = files;
    return rc;
}

static int list_read(fl_avro_file_reader_t *f, fl_ice_manifest_list_read_t *out, fl_error_t *err) {
    rd_t r = {&out->arena, err};
    int rc = fl_avro_file_reader_schema(f)->type == FL_AVRO_RECORD
                 ? 0
                 : fl_err_set(err, FLUSS_ERR__CORRUPT, "manifest list: schema not a record");
    if (!rc) rc = read_list_header(&r, f, &out->list);
    if (!rc) rc = read_manifest_files(&r, f, &out->list);
    fl_avro_file_reader_destroy(f);
    if (rc) fl_ice_manifest_list_read_reset(out);
    return rc;
}

int fl_ice_manifest_list_decode(const void *p, size_t len, fl_ice_manifest_list_read_t *r,
                                fl_error_t *err) {
    fl_avro_file_reader_t *f;
    fl_ice_manifest_list_read_reset(r);
    int rc = fl_avro_file_reader_open_bytes(p, len, &f, err);
    return rc ? rc : list_read(f, r, err);
}

int fl_ice_manifest_list_read(const char *path, fl_ice_manifest_list_read_t *r, fl_error_t *err) {
    fl_avro_file_reader_t *f;
    fl_ice_manifest_list_read_reset(r);
    int rc = fl_avro_file_reader_open(path, &f, err);
    return rc ? rc : list_read(f, r, err);
}
