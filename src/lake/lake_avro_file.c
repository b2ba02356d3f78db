/*
 * lake_avro_file.c — the Avro object container writer and reader
 * (lake_avro_file.h has the layout). The writer encodes records into the
 * open block and writes a block at a time; the reader reads a whole file
 * into memory (manifests are small) and decodes the header's metadata map
 * with the value decoder, so its blocks follow the same rules as any map.
 */
#include "lake_avro_file.h"

#include <fcntl.h>
#include <string.h>

#include <zlib.h>

#include "common_alloc.h"
#include "common_fs.h"
#include "common_uuid.h"
#include "common_vfs.h"
#include "lake_avro.h"

static const uint8_t MAGIC[4] = {'O', 'b', 'j', 1};

fl_avro_meta_t fl_avro_meta_str(const char *key, const char *value) {
    return (fl_avro_meta_t){key, (const uint8_t *)value, strlen(value)};
}

void fl_avro_file_options_init(fl_avro_file_options_t *o) {
    memset(o, 0, sizeof(*o));
    o->block_bytes_max = 64 * 1024;
}

/* ---- writer ---- */

struct fl_avro_file_writer {
    const fl_avro_schema_t *schema;
    fl_avro_file_options_t opts;
    uint8_t sync[FL_AVRO_SYNC_BYTES];
    int fd; /* -1: in memory */
    bool failed; /* an I/O error, or finished */
    uint64_t pos;
    fl_buf_t mem;
    fl_buf_t block; /* the open block's records */
    size_t block_records;
    fl_buf_t scratch;
};

static int emit(fl_avro_file_writer_t *w, const void *p, size_t n, fl_error_t *err) {
    if (w->fd < 0) {
        fl_buf_append(&w->mem, p, n);
    } else if (fl_vfs_pwrite_full(w->fd, p, n, (off_t)w->pos)) {
        w->failed = true;
        return fl_err_set(err, FLUSS_ERR__IO, "avro: write at %llu: %m",
                          (unsigned long long)w->pos);
    }
    w->pos += n;
    return 0;
}

static int check_meta(const fl_avro_meta_t *meta, size_t n, fl_error_t *err) {
    if (n > FL_AVRO_META_MAX - 2)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: %zu metadata entries (max %d)", n,
                          FL_AVRO_META_MAX - 2);
    for (size_t i = 0; i < n; i++) {
        const char *k = meta[i].key;
        if (!k || !*k || strncmp(k, "avro.", 5) == 0)
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: metadata key \"%s\" is reserved",
                              k ? k : "(null)");
        for (size_t j = 0; j < i; j++)
            if (strcmp(meta[j].key, k) == 0)
                return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: metadata key %s twice", k);
    }
    return 0;
}

/* magic, metadata map (one block), sync */
static void header(fl_avro_file_writer_t *w, const fl_avro_meta_t *meta, size_t n, fl_buf_t *b) {
    fl_buf_append(b, MAGIC, sizeof(MAGIC));
    fl_avro_put_block(b, (int64_t)n + 2);
    fl_avro_put_string(b, "avro.schema");
    fl_buf_t json;
    fl_buf_init(&json);
    fl_avro_schema_write_json(w->schema, &json);
    fl_avro_put_bytes(b, json.data, json.len);
    fl_buf_free(&json);
    fl_avro_put_string(b, "avro.codec");
    fl_avro_put_bytes(b, "null", 4);
    for (size_t i = 0; i < n; i++) {
        fl_avro_put_string(b, meta[i].key);
        fl_avro_put_bytes(b, meta[i].value, meta[i].len);
    }
    fl_avro_put_block(b, 0);
    fl_buf_append(b, w->sync, sizeof(w->sync));
}

int fl_avro_file_writer_open(const char *path, const fl_avro_schema_t *schema,
                             const fl_avro_meta_t *meta, size_t n_meta,
                             const fl_avro_file_options_t *opts, fl_avro_file_writer_t **out,
                             fl_error_t *err) {
    *out = NULL;
    if (check_meta(meta, n_meta, err)) return FLUSS_ERR__INVALID_ARG;
    if (opts->block_bytes_max == 0)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "avro: block_bytes_max 0");
    fl_avro_file_writer_t *w = fl_calloc(1, sizeof(*w));
    w->schema = schema;
    w->opts = *opts;
    w->opts.sync = NULL;
    w->fd = -1;
    if (opts->sync)
        memcpy(w->sync, opts->sync, sizeof(w->sync));
    else
        fl_uuid_random_bytes(w->sync, sizeof(w->sync));
    if (path) {
        w->fd = fl_vfs_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (w->fd < 0) {
            fl_err_set(err, FLUSS_ERR__IO, "avro: create %s: %m", path);
            fl_avro_file_writer_destroy(w);
            return FLUSS_ERR__IO;
        }
    }
    header(w, meta, n_meta, &w->scratch);
    if (emit(w, w->scratch.data, w->scratch.len, err)) {
        fl_avro_file_writer_destroy(w);
        return FLUSS_ERR__IO;
    }
    *out = w;
    return 0;
}

int fl_avro_file_writer_flush_block(fl_avro_file_writer_t *w, fl_error_t *err) {
    if (w->failed) return fl_err_set(err, FLUSS_ERR__STATE, "avro: writer failed or finished");
    if (w->block_records == 0) return 0;
    fl_buf_reset(&w->scratch);
    fl_avro_put_long(&w->scratch, (int64_t)w->block_records);
    fl_avro_put_long(&w->scratch, (int64_t)w->block.len);
    if (emit(w, w->scratch.data, w->scratch.len, err) ||
        emit(w, w->block.data, w->block.len, err) || emit(w, w->sync, sizeof(w->sync), err))
        return FLUSS_ERR__IO;
    fl_buf_reset(&w->block);
    w->block_records = 0;
    return 0;
}

int fl_avro_file_writer_append(fl_avro_file_writer_t *w, const fl_avro_value_t *record,
                               fl_error_t *err) {
    if (w->failed) return fl_err_set(err, FLUSS_ERR__STATE, "avro: writer failed or finished");
    if (fl_avro_value_encode(w->schema, record, &w->block, err)) return FLUSS_ERR__INVALID_ARG;
    w->block_records++;
    if (w->block.len >= w->opts.block_bytes_max ||
        (w->opts.block_records_max && w->block_records >= w->opts.block_records_max))
        return fl_avro_file_writer_flush_block(w, err);
    return 0;
}

int fl_avro_file_writer_finish(fl_avro_file_writer_t *w, fl_error_t *err) {
    if (fl_avro_file_writer_flush_block(w, err)) return err ? err->code : FLUSS_ERR__IO;
    w->failed = true; /* finished: no more appends */
    if (w->fd < 0) return 0;
    int fd = w->fd;
    w->fd = -1;
    if (fl_vfs_fsync(fd)) {
        fl_err_set(err, FLUSS_ERR__IO, "avro: fsync: %m");
        fl_vfs_close(fd);
        return FLUSS_ERR__IO;
    }
    if (fl_vfs_close(fd)) return fl_err_set(err, FLUSS_ERR__IO, "avro: close: %m");
    return 0;
}

uint64_t fl_avro_file_writer_position(const fl_avro_file_writer_t *w) { return w->pos; }

const fl_buf_t *fl_avro_file_writer_bytes(const fl_avro_file_writer_t *w) { return &w->mem; }

void fl_avro_file_writer_destroy(fl_avro_file_writer_t *w) {
    if (!w) return;
    if (w->fd >= 0) fl_vfs_close(w->fd);
    fl_buf_free(&w->mem);
    fl_buf_free(&w->block);
    fl_buf_free(&w->scratch);
    fl_free(w);
}

/* ---- reader ---- */

struct fl_avro_file_reader {
    fl_buf_t owned; /* the file's bytes, when read from a path */
    fl_avro_schema_t *schema;
    fl_avro_meta_t *meta;
    size_t n_meta;
    uint8_t sync[FL_AVRO_SYNC_BYTES];
    fl_avro_reader_t file; /* after the header: the blocks */
    fl_avro_reader_t block; /* the current block's records */
    int64_t block_left; /* records left in it */
    fl_avro_arena_t arena; /* the last record's nodes */
    fl_avro_value_t value;
    bool deflate;        /* avro.codec "deflate": blocks are raw RFC 1951 */
    fl_buf_t inflated;   /* the current block, inflated */
    bool failed;
};

static int meta_copy(fl_avro_file_reader_t *r, const fl_avro_value_t *map, fl_error_t *err) {
    size_t n = map->u.list.n;
    if (n > FL_AVRO_META_MAX)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: %zu metadata entries (max %d)", n,
                          FL_AVRO_META_MAX);
    r->meta = fl_calloc(n ? n : 1, sizeof(*r->meta));
    for (size_t i = 0; i < n; i++) {
        const fl_avro_bytes_t *k = &map->u.list.keys[i];
        if (k->len == 0 || memchr(k->p, 0, k->len))
            return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: metadata key empty or with a NUL");
        char *key = fl_strndup((const char *)k->p, k->len);
        if (fl_avro_file_reader_meta(r, key)) {
            fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: metadata key %.64s twice", key);
            fl_free(key);
            return FLUSS_ERR__CORRUPT;
        }
        r->meta[i].key = key;
        r->meta[i].value = map->u.list.items[i].u.bytes.p;
        r->meta[i].len = map->u.list.items[i].u.bytes.len;
        r->n_meta++;
    }
    return 0;
}

/* The metadata map (map<bytes>), decoded as any map is. */
static int read_meta(fl_avro_file_reader_t *r, fl_error_t *err) {
    fl_avro_schema_t *s = fl_avro_schema_map_new(fl_avro_schema_new(FL_AVRO_BYTES), FL_AVRO_NO_ID,
                                                 FL_AVRO_NO_ID);
    fl_avro_arena_t a;
    fl_avro_arena_init(&a);
    fl_avro_value_t map;
    int rc = fl_avro_value_decode(s, &r->file, &a, &map, err);
    if (rc)
        fl_err_prefix(err, "metadata: ");
    else
        rc = meta_copy(r, &map, err);
    fl_avro_arena_reset(&a);
    fl_avro_schema_destroy(s);
    return rc;
}

static int read_schema_and_codec(fl_avro_file_reader_t *r, fl_error_t *err) {
    const fl_avro_meta_t *codec = fl_avro_file_reader_meta(r, "avro.codec");
    r->deflate = codec && codec->len == 7 && memcmp(codec->value, "deflate", 7) == 0;
    if (codec && !r->deflate && !(codec->len == 4 && memcmp(codec->value, "null", 4) == 0))
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG,
                          "avro: codec \"%.*s\" not supported (\"null\" and \"deflate\" are)",
                          codec->len > 32 ? 32 : (int)codec->len, (const char *)codec->value);
    const fl_avro_meta_t *schema = fl_avro_file_reader_meta(r, "avro.schema");
    if (!schema) return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: no avro.schema in the header");
    return fl_avro_schema_parse((const char *)schema->value, schema->len, &r->schema, err);
}

static int read_header(fl_avro_file_reader_t *r, fl_error_t *err) {
    const uint8_t *magic;
    if (fl_avro_read_fixed(&r->file, sizeof(MAGIC), &magic, err) ||
        memcmp(magic, MAGIC, sizeof(MAGIC)) != 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: not an object container (bad magic)");
    int rc = read_meta(r, err);
    if (!rc) rc = read_schema_and_codec(r, err);
    if (rc) return rc;
    const uint8_t *sync;
    if (fl_avro_read_fixed(&r->file, FL_AVRO_SYNC_BYTES, &sync, err)) {
        fl_err_prefix(err, "sync marker: ");
        return FLUSS_ERR__CORRUPT;
    }
    memcpy(r->sync, sync, FL_AVRO_SYNC_BYTES);
    return 0;
}

int fl_avro_file_reader_open_bytes(const void *p, size_t len, fl_avro_file_reader_t **out,
                                   fl_error_t *err) {
    *out = NULL;
    fl_avro_file_reader_t *r = fl_calloc(1, sizeof(*r));
    fl_avro_reader_init(&r->file, p, len);
    fl_avro_reader_init(&r->block, NULL, 0);
    fl_avro_arena_init(&r->arena);
    int rc = read_header(r, err);
    if (rc) {
        fl_avro_file_reader_destroy(r);
        return rc;
    }
    *out = r;
    return 0;
}

int fl_avro_file_reader_open(const char *path, fl_avro_file_reader_t **out, fl_error_t *err) {
    *out = NULL;
    fl_buf_t b;
    fl_buf_init(&b);
    if (fl_fs_read_all(path, FL_AVRO_FILE_BYTES_MAX, &b, NULL, err)) {
        fl_buf_free(&b);
        return err ? err->code : FLUSS_ERR__IO;
    }
    int rc = fl_avro_file_reader_open_bytes(b.data, b.len, out, err);
    if (rc) {
        fl_buf_free(&b);
        return rc;
    }
    (*out)->owned = b;
    return 0;
}

const fl_avro_schema_t *fl_avro_file_reader_schema(const fl_avro_file_reader_t *r) {
    return r->schema;
}

size_t fl_avro_file_reader_meta_count(const fl_avro_file_reader_t *r) { return r->n_meta; }

const fl_avro_meta_t *fl_avro_file_reader_meta_at(const fl_avro_file_reader_t *r, size_t i) {
    return i < r->n_meta ? &r->meta[i] : NULL;
}

const fl_avro_meta_t *fl_avro_file_reader_meta(const fl_avro_file_reader_t *r, const char *key) {
    for (size_t i = 0; i < r->n_meta; i++)
        if (strcmp(r->meta[i].key, key) == 0) return &r->meta[i];
    return NULL;
}

/* A deflate block (raw RFC 1951, as Avro's Java DeflateCodec writes it)
 * into r->inflated, at most FL_AVRO_FILE_BYTES_MAX bytes. */
static int inflate_block(fl_avro_file_reader_t *r, const uint8_t *p, size_t n, size_t at,
                         fl_error_t *err) {
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, -15) != Z_OK)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "avro: cannot start inflating");
    r->inflated.len = 0;
    z.next_in = (Bytef *)p;
    z.avail_in = (uInt)n;
    int zr = Z_OK, rc = 0;
    while (zr != Z_STREAM_END && !rc) {
        size_t room = n * 4 > 65536 ? n * 4 : 65536;
        if (r->inflated.len + room > FL_AVRO_FILE_BYTES_MAX) room = FL_AVRO_FILE_BYTES_MAX - r->inflated.len;
        if (room == 0) {
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT,
                            "avro: block at byte %zu inflates past %u bytes", at,
                            FL_AVRO_FILE_BYTES_MAX);
            break;
        }
        if (room > UINT32_MAX) room = UINT32_MAX;
        z.next_out = fl_buf_reserve(&r->inflated, room);
        z.avail_out = (uInt)room;
        zr = inflate(&z, Z_NO_FLUSH);
        r->inflated.len += room - z.avail_out;
        if (zr == Z_OK && z.avail_in == 0 && z.avail_out != 0) zr = Z_DATA_ERROR; /* cut short */
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: block at byte %zu does not inflate: %s",
                            at, z.msg ? z.msg : "bad deflate data");
        else if (zr == Z_BUF_ERROR && z.avail_in == 0)
            rc = fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: block at byte %zu: deflate data cut short",
                            at);
    }
    /* bytes after the end of the deflate stream are left alone, as Java's
     * Inflater leaves them: Python's Avro writers (fastavro) keep three
     * bytes of zlib's checksum there */
    inflateEnd(&z);
    return rc;
}

/* The next block's header, bytes and sync marker. */
static int next_block(fl_avro_file_reader_t *r, fl_error_t *err) {
    size_t at = r->file.pos;
    int64_t count, size;
    if (fl_avro_read_long(&r->file, &count, err) || fl_avro_read_long(&r->file, &size, err)) {
        fl_err_prefix(err, "block at byte %zu: ", at);
        return FLUSS_ERR__CORRUPT;
    }
    size_t left = fl_avro_reader_left(&r->file);
    if (count <= 0 || size < 0 || (uint64_t)size > left || left - (size_t)size < FL_AVRO_SYNC_BYTES)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: block at byte %zu: %lld records in %lld bytes, %zu bytes left", at,
                          (long long)count, (long long)size, left);
    const uint8_t *data, *sync;
    fl_avro_read_fixed(&r->file, (size_t)size, &data, err);
    fl_avro_read_fixed(&r->file, FL_AVRO_SYNC_BYTES, &sync, err);
    if (memcmp(sync, r->sync, FL_AVRO_SYNC_BYTES) != 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: block at byte %zu: sync marker differs from the header's", at);
    if (r->deflate) {
        int rc = inflate_block(r, data, (size_t)size, at, err);
        if (rc) return rc;
        data = r->inflated.data;
        size = (int64_t)r->inflated.len;
    }
    /* the records' bytes bound their count (after inflating) */
    size_t least = r->schema->min_bytes;
    if ((least && (uint64_t)count > (uint64_t)size / least) ||
        (!least && count > FL_AVRO_BLOCK_EMPTY_RECORDS_MAX))
        return fl_err_set(err, FLUSS_ERR__CORRUPT,
                          "avro: block at byte %zu: %lld records cannot fit in %lld bytes", at,
                          (long long)count, (long long)size);
    fl_avro_reader_init(&r->block, data, (size_t)size);
    r->block_left = count;
    return 0;
}

static int next_record(fl_avro_file_reader_t *r, const fl_avro_value_t **out, fl_error_t *err) {
    if (r->block_left == 0) {
        if (fl_avro_reader_left(&r->file) == 0) return 0;
        if (next_block(r, err)) return FLUSS_ERR__CORRUPT;
    }
    fl_avro_arena_reset(&r->arena);
    size_t at = r->block.pos;
    int rc = fl_avro_value_decode(r->schema, &r->block, &r->arena, &r->value, err);
    if (rc) {
        fl_err_prefix(err, "record at byte %zu of its block: ", at);
        return rc;
    }
    if (--r->block_left == 0 && fl_avro_reader_left(&r->block) != 0)
        return fl_err_set(err, FLUSS_ERR__CORRUPT, "avro: %zu bytes in a block after its records",
                          fl_avro_reader_left(&r->block));
    *out = &r->value;
    return 0;
}

int fl_avro_file_reader_next(fl_avro_file_reader_t *r, const fl_avro_value_t **out,
                             fl_error_t *err) {
    *out = NULL;
    if (r->failed) return fl_err_set(err, FLUSS_ERR__STATE, "avro: reader failed earlier");
    int rc = next_record(r, out, err);
    if (rc) {
        r->failed = true;
        *out = NULL;
    }
    return rc;
}

void fl_avro_file_reader_destroy(fl_avro_file_reader_t *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_meta; i++) fl_free((char *)r->meta[i].key);
    fl_free(r->meta);
    fl_avro_schema_destroy(r->schema);
    fl_avro_arena_reset(&r->arena);
    fl_buf_free(&r->owned);
    fl_buf_free(&r->inflated);
    fl_free(r);
}
