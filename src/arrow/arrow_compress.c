/*
 * arrow_compress.c — Arrow IPC buffer-level body compression
 * (BodyCompression method BUFFER) with the two codecs Fluss uses
 * (table.log.arrow.compression.type: LZ4_FRAME, ZSTD; protocol.md §4.3).
 * Thread rule: none; ZSTD compression reuses one context per thread (a
 * new context per call costs its allocation and table setup again).
 *
 * One compressed buffer (empty buffers stay empty):
 *
 * | off | size | field                                                   |
 * |-----|------|---------------------------------------------------------|
 * | 0   | 8    | int64 LE uncompressed length U (−1: stored raw)         |
 * | 8   | n−8  | LZ4 frame or ZSTD frame(s) of U bytes, or the raw bytes |
 *
 * LZ4 frames we write: 64 KB independent blocks, no block or content
 * checksum, no content size (Fluss's Java FlussLZ4BlockInputStream reads
 * only that subset). Reading, we accept any standard frame(s) but require
 * them to inflate to exactly U bytes, U bounded by the caller's cap, so a
 * peer's header never decides how much we allocate beyond that cap.
 */
#include <lz4frame.h>
#include <pthread.h>
#include <string.h>
#include <zstd.h>

#include "arrow_flatbuf.h"
#include "arrow_int.h"

#define CZ_CORRUPT FLUSS_ERR_CORRUPT_RECORD_EXCEPTION

static const char *fl_arrow_codec_name(fl_arrow_codec_t c) {
    return c == FL_ARROW_CODEC_LZ4_FRAME ? "LZ4_FRAME" : c == FL_ARROW_CODEC_ZSTD ? "ZSTD" : "NONE";
}

static int fl_arrow_append_raw(fl_buf_t *out, const uint8_t *p, size_t n, fl_error_t *err) {
    if (!n) return 0;
    uint8_t *d = fl_buf_try_reserve(out, n);
    if (!d) return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory for a %zu-byte buffer", n);
    memcpy(d, p, n);
    out->len += n;
    return 0;
}

static pthread_key_t fl_arrow_zstd_key;
static pthread_once_t fl_arrow_zstd_once = PTHREAD_ONCE_INIT;

static void fl_arrow_zstd_free(void *c) {
    ZSTD_freeCCtx(c);
}

static void fl_arrow_zstd_key_init(void) {
    pthread_key_create(&fl_arrow_zstd_key, fl_arrow_zstd_free);
}

/* This thread's ZSTD context (freed when the thread exits); NULL: no memory. */
static ZSTD_CCtx *fl_arrow_zstd_cctx(void) {
    pthread_once(&fl_arrow_zstd_once, fl_arrow_zstd_key_init);
    ZSTD_CCtx *c = pthread_getspecific(fl_arrow_zstd_key);
    if (!c && (c = ZSTD_createCCtx()) != NULL) pthread_setspecific(fl_arrow_zstd_key, c);
    return c;
}

int fl_arrow_compress(fl_arrow_codec_t codec, int level, const uint8_t *p, size_t n,
                      fl_buf_t *out, fl_error_t *err) {
    if (n == 0) return 0;
    if (n > FL_ARROW_BUFFER_BYTES_MAX)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: %zu-byte buffer is too large", n);
    size_t bound;
    LZ4F_preferences_t prefs;
    if (codec == FL_ARROW_CODEC_LZ4_FRAME) {
        memset(&prefs, 0, sizeof(prefs));
        prefs.frameInfo.blockSizeID = LZ4F_max64KB;
        prefs.frameInfo.blockMode = LZ4F_blockIndependent;
        prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
        prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
        bound = LZ4F_compressFrameBound(n, &prefs);
    } else if (codec == FL_ARROW_CODEC_ZSTD) {
        bound = ZSTD_compressBound(n);
    } else {
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: cannot compress with codec %d",
                          (int)codec);
    }
    size_t start = out->len;
    uint8_t *d = fl_buf_try_reserve(out, FL_ARROW_LENGTH_PREFIX + bound);
    if (!d)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory to compress %zu bytes", n);
    size_t got;
    if (codec == FL_ARROW_CODEC_LZ4_FRAME) {
        got = LZ4F_compressFrame(d + FL_ARROW_LENGTH_PREFIX, bound, p, n, &prefs);
        if (LZ4F_isError(got))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: LZ4F_compressFrame: %s",
                              LZ4F_getErrorName(got));
    } else {
        ZSTD_CCtx *cctx = fl_arrow_zstd_cctx();
        if (!cctx)
            return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory for a ZSTD context");
        got = ZSTD_compressCCtx(cctx, d + FL_ARROW_LENGTH_PREFIX, bound, p, n, level);
        if (ZSTD_isError(got))
            return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: ZSTD_compress: %s",
                              ZSTD_getErrorName(got));
    }
    if (got >= n) { /* no gain: store raw, as the Arrow writers do */
        fl_arrow_put_le64(d, (uint64_t)(int64_t)FL_ARROW_RAW_LENGTH);
        memcpy(d + FL_ARROW_LENGTH_PREFIX, p, n);
        out->len = start + FL_ARROW_LENGTH_PREFIX + n;
        return 0;
    }
    fl_arrow_put_le64(d, (uint64_t)n);
    out->len = start + FL_ARROW_LENGTH_PREFIX + got;
    return 0;
}

static int fl_arrow_lz4_inflate(const uint8_t *src, size_t n, uint8_t *dst, size_t want,
                                fl_error_t *err) {
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory for an LZ4 context");
    size_t in = 0, outpos = 0, hint = 1;
    int rc = 0;
    while (in < n) {
        size_t src_sz = n - in, dst_sz = want - outpos;
        hint = LZ4F_decompress(dctx, dst ? dst + outpos : NULL, &dst_sz, src + in, &src_sz,
                               NULL);
        if (LZ4F_isError(hint)) {
            rc = fl_err_set(err, CZ_CORRUPT, "arrow: bad LZ4 frame: %s", LZ4F_getErrorName(hint));
            goto out;
        }
        in += src_sz;
        outpos += dst_sz;
        if (src_sz == 0 && dst_sz == 0) { /* no progress: the output is full */
            rc = fl_err_set(err, CZ_CORRUPT,
                            "arrow: LZ4 buffer inflates beyond its declared %zu bytes", want);
            goto out;
        }
    }
    if (hint != 0)
        rc = fl_err_set(err, CZ_CORRUPT, "arrow: truncated LZ4 frame (%zu of %zu bytes out)",
                        outpos, want);
    else if (outpos != want)
        rc = fl_err_set(err, CZ_CORRUPT, "arrow: LZ4 buffer inflates to %zu bytes, declared %zu",
                        outpos, want);
out:
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

static int fl_arrow_zstd_inflate(const uint8_t *src, size_t n, uint8_t *dst, size_t want,
                                 fl_error_t *err) {
    size_t got = ZSTD_decompress(dst, want, src, n);
    if (ZSTD_isError(got))
        return fl_err_set(err, CZ_CORRUPT, "arrow: bad ZSTD buffer: %s", ZSTD_getErrorName(got));
    if (got != want)
        return fl_err_set(err, CZ_CORRUPT, "arrow: ZSTD buffer inflates to %zu bytes, declared %zu",
                          got, want);
    return 0;
}

int fl_arrow_decompress(fl_arrow_codec_t codec, const uint8_t *p, size_t n, size_t max_bytes,
                        fl_buf_t *out, fl_error_t *err) {
    if (n == 0) return 0;
    if (codec != FL_ARROW_CODEC_LZ4_FRAME && codec != FL_ARROW_CODEC_ZSTD)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: cannot decompress codec %d",
                          (int)codec);
    if (n < FL_ARROW_LENGTH_PREFIX)
        return fl_err_set(err, CZ_CORRUPT,
                          "arrow: %zu-byte compressed buffer has no 8-byte length prefix", n);
    int64_t ulen = (int64_t)fl_arrow_le64(p);
    p += FL_ARROW_LENGTH_PREFIX;
    n -= FL_ARROW_LENGTH_PREFIX;
    size_t cap = max_bytes < FL_ARROW_BUFFER_BYTES_MAX ? max_bytes : FL_ARROW_BUFFER_BYTES_MAX;
    if (ulen == FL_ARROW_RAW_LENGTH) {
        if (n > cap)
            return fl_err_set(err, CZ_CORRUPT, "arrow: %zu-byte raw buffer exceeds the limit %zu",
                              n, cap);
        return fl_arrow_append_raw(out, p, n, err);
    }
    if (ulen < 0 || (uint64_t)ulen > cap)
        return fl_err_set(err, CZ_CORRUPT,
                          "arrow: %s buffer declares %lld uncompressed bytes (limit %zu)",
                          fl_arrow_codec_name(codec), (long long)ulen, cap);
    if (ulen == 0) return 0; /* Java writes a bare 0 prefix for empty buffers */
    size_t want = (size_t)ulen;
    uint8_t *d = fl_buf_try_reserve(out, want);
    if (!d)
        return fl_err_set(err, FLUSS_ERR__NO_MEMORY, "arrow: no memory to inflate %zu bytes", want);
    int rc = codec == FL_ARROW_CODEC_LZ4_FRAME ? fl_arrow_lz4_inflate(p, n, d, want, err)
                                               : fl_arrow_zstd_inflate(p, n, d, want, err);
    if (rc) return rc;
    out->len += want;
    return 0;
}

int fl_arrow_buffer_get(const fl_arrow_batch_view_t *v, size_t i, size_t max_bytes,
                        fl_buf_t *out, fl_error_t *err) {
    if (i >= v->buffer_count)
        return fl_err_set(err, FLUSS_ERR__INVALID_ARG, "arrow: buffer %zu of %zu", i,
                          v->buffer_count);
    fl_arrow_buffer_t b = fl_arrow_batch_buffer(v, i); /* within the body: parse checked */
    const uint8_t *p = v->body + b.offset;
    size_t n = (size_t)b.length;
    if (v->codec == FL_ARROW_CODEC_NONE) {
        if (n > max_bytes || n > FL_ARROW_BUFFER_BYTES_MAX)
            return fl_err_set(err, CZ_CORRUPT, "arrow: %zu-byte buffer exceeds the limit %zu", n,
                              max_bytes);
        return fl_arrow_append_raw(out, p, n, err);
    }
    return fl_arrow_decompress(v->codec, p, n, max_bytes, out, err);
}
