/*
 * fuzz_tz_tzif.c — TZif files (common_tz.h) are read from the zoneinfo
 * directory whenever a table's auto-partition time zone is looked up:
 * arbitrary bytes as such a file, and the same bytes as a POSIX TZ rule
 * (common_tz_rule.h, the file's footer). Either they are refused, or
 * every query on the zone answers an offset within the format's bounds.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common_tz.h"
#include "common_tz_rule.h"
#include "fuzz_common.h"

static void fuzz_queries(const fl_tz_t *tz) {
    static const int64_t instants[] = {INT64_MIN / 4, -2208988800, -1, 0, 1000000000,
                                       2147483647, 4102444800, 32503680000, INT64_MAX / 4};
    for (size_t i = 0; i < sizeof(instants) / sizeof(instants[0]); i++) {
        int32_t off = fl_tz_offset_at(tz, instants[i]);
        FUZZ_CHECK(off >= -FL_TZ_OFFSET_MAX_S && off <= FL_TZ_OFFSET_MAX_S);
        int32_t got;
        (void)fl_tz_local_to_utc(tz, instants[i], off, &got);
        FUZZ_CHECK(got >= -FL_TZ_OFFSET_MAX_S && got <= FL_TZ_OFFSET_MAX_S);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fl_tz_t *tz = NULL;
    fl_error_t err;
    if (fl_tz_parse_tzif(data, size, "fuzz", &tz, &err) == 0) {
        FUZZ_CHECK(tz != NULL);
        fuzz_queries(tz);
        fl_tz_free(tz);
    } else {
        FUZZ_CHECK(tz == NULL && err.code == FLUSS_ERR__CORRUPT);
    }
    fl_tz_rule_t rule;
    if (fl_tz_rule_parse((const char *)data, size, &rule, &err) == 0) {
        FUZZ_CHECK(size <= FL_TZ_RULE_TEXT_MAX);
        for (int64_t t = -4102444800; t < 8204889600; t += 86400 * 97 + 3607) {
            int32_t off = fl_tz_rule_offset_at(&rule, t);
            FUZZ_CHECK(off == rule.std_offset_s || (rule.has_dst && off == rule.dst_offset_s));
        }
    }
    return 0;
}
