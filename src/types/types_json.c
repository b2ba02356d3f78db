/*
 * types_json.c — JSON values read as Jackson's JsonNode accessors read
 * them (types_json.h).
 */
#include "types_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common_alloc.h"

/* Java's (int) of a double: NaN is 0, out of range saturates. */
static int32_t fl_java_d2i(double d) {
    if (isnan(d)) return 0;
    if (d >= 2147483647.0) return INT32_MAX;
    if (d <= -2147483648.0) return INT32_MIN;
    return (int32_t)d;
}

/* String.trim(): every char <= ' ' off both ends. */
static void fl_java_trim(const char *s, size_t len, size_t *start, size_t *end) {
    size_t a = 0, b = len;
    while (a < b && (unsigned char)s[a] <= ' ') a++;
    while (b > a && (unsigned char)s[b - 1] <= ' ') b--;
    *start = a;
    *end = b;
}

/* NumberInput.parseAsInt(s, 0): trimmed, one leading '+' dropped; an
 * optional '-' and digits are Integer.parseInt (0 when out of range),
 * anything else a double cast to int (0 when it does not parse). Longer
 * texts than any int or plain double are 0. */
static int32_t fl_parse_as_int(const char *s, size_t len) {
    size_t a, b;
    fl_java_trim(s, len, &a, &b);
    if (a < b && s[a] == '+') a++;
    char buf[64];
    size_t n = b - a;
    if (n == 0 || n >= sizeof(buf)) return 0;
    memcpy(buf, s + a, n);
    buf[n] = '\0';
    bool digits = true;
    for (size_t i = buf[0] == '-' ? 1 : 0; i < n; i++)
        if (buf[i] < '0' || buf[i] > '9') digits = false;
    char *end = NULL;
    errno = 0;
    if (digits) {
        long long v = strtoll(buf, &end, 10);
        if (errno || end == buf || *end != '\0' || v < INT32_MIN || v > INT32_MAX) return 0;
        return (int32_t)v;
    }
    double d = strtod(buf, &end);
    if (end == buf || *end != '\0') return 0;
    return fl_java_d2i(d);
}

int32_t fl_json_as_int(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return (int32_t)(uint32_t)(uint64_t)json_integer_value(v); /* Java's (int) long */
    case JSON_REAL:
        return fl_java_d2i(json_real_value(v));
    case JSON_STRING:
        return fl_parse_as_int(json_string_value(v), json_string_length(v));
    case JSON_TRUE:
        return 1;
    default:
        return 0;
    }
}

bool fl_json_as_bool(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_TRUE:
        return true;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    case JSON_STRING: {
        size_t a, b;
        const char *s = json_string_value(v);
        fl_java_trim(s, json_string_length(v), &a, &b);
        return b - a == 4 && memcmp(s + a, "true", 4) == 0;
    }
    default:
        return false;
    }
}

void fl_json_java_double(double d, char *out, size_t cap) {
    if (isnan(d)) {
        snprintf(out, cap, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(out, cap, "%sInfinity", d < 0 ? "-" : "");
        return;
    }
    if (d == 0) {
        snprintf(out, cap, "%s0.0", signbit(d) ? "-" : "");
        return;
    }
    /* the shortest %e form that reads back as d */
    char sci[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof(sci), "%.*e", p - 1, d);
        if (strtod(sci, NULL) == d) break;
    }
    const char *s = sci;
    bool neg = *s == '-';
    if (neg) s++;
    char digits[24];
    size_t nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && nd < sizeof(digits) - 1) digits[nd++] = *s;
    digits[nd] = '\0';
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = '\0';
    double mag = fabs(d);
    size_t n = (size_t)snprintf(out, cap, "%s", neg ? "-" : "");
    if (mag >= 1e-3 && mag < 1e7) {
        if (exp10 >= 0) {
            for (int i = 0; i <= exp10; i++)
                n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%c",
                                      (size_t)i < nd ? digits[i] : '0');
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, ".%s",
                                  (size_t)exp10 + 1 < nd ? digits + exp10 + 1 : "0");
        } else {
            n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "0.");
            for (int i = 0; i < -exp10 - 1; i++)
                n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "0");
            snprintf(out + n, n < cap ? cap - n : 0, "%s", digits);
        }
        return;
    }
    snprintf(out + n, n < cap ? cap - n : 0, "%c.%sE%d", digits[0], nd > 1 ? digits + 1 : "0",
             exp10);
}

char *fl_json_text(const json_t *v) {
    char num[48];
    switch (json_typeof(v)) {
    case JSON_STRING:
        return fl_strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return fl_strdup(num);
    case JSON_REAL:
        fl_json_java_double(json_real_value(v), num, sizeof(num));
        return fl_strdup(num);
    case JSON_TRUE:
        return fl_strdup("true");
    case JSON_FALSE:
        return fl_strdup("false");
    case JSON_NULL:
        return fl_strdup("null");
    default: /* containers: ContainerNode.asText() is "" */
        return fl_strdup("");
    }
}

fl_json_iter_t fl_json_iter(const json_t *v) {
    fl_json_iter_t it = {.v = (json_t *)v};
    if (json_is_object(v)) it.member = json_object_iter(it.v);
    return it;
}

const json_t *fl_json_next(fl_json_iter_t *it) {
    if (json_is_array(it->v)) {
        if (it->index >= json_array_size(it->v)) return NULL;
        return json_array_get(it->v, it->index++);
    }
    if (json_is_object(it->v) && it->member) {
        const json_t *e = json_object_iter_value(it->member);
        it->member = json_object_iter_next(it->v, it->member);
        return e;
    }
    return NULL;
}

bool fl_json_has_non_null(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v);
}

void fl_json_text_list(const json_t *v, fl_strlist_t *out) {
    fl_json_iter_t it = fl_json_iter(v);
    for (const json_t *e; (e = fl_json_next(&it));) {
        char *t = fl_json_text(e);
        fl_strlist_add(out, t);
        fl_free(t);
    }
}
