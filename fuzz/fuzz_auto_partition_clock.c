/*
 * fuzz_auto_partition_clock.c — the coordinator's auto-partition test
 * clock file (auto-partition.test.clock-file) is read on every round:
 * fl_auto_partition_clock_parse on arbitrary bytes. It either refuses the
 * text, or yields the value that the text's digits spell, which printed
 * back parses to itself.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "server_auto_partition.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int64_t now = 0;
    fl_error_t err;
    if (fl_auto_partition_clock_parse((const char *)data, size, &now, &err) != 0) return 0;
    char text[32];
    int n = snprintf(text, sizeof(text), "%" PRId64 "\n", now);
    int64_t again = 0;
    FUZZ_CHECK(fl_auto_partition_clock_parse(text, (size_t)n, &again, &err) == 0);
    FUZZ_CHECK(again == now);
    /* the sign is the text's: a number past int64 is refused, not wrapped */
    FUZZ_CHECK((now < 0) == (memchr(data, '-', size) != NULL && now != 0));
    return 0;
}
