/*
 * Domain kind names (each level of a hierarchy spec): osmp_domain_kind_parse(name, len) reads exactly
 * len bytes, which need not end in a NUL. Input: the bytes, passed as they are.
 */
#include <strings.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64) return 0;
    /* An exact-size copy without a NUL, so ASan sees a read past len. */
    char *name = malloc(size ? size : 1);
    FUZZ_CHECK(name != NULL, "out of memory");
    if (size) memcpy(name, data, size);
    int k = osmp_domain_kind_parse(name, size);
    int want = -1;
    for (int i = 0; i < OSMP_DOMAIN_KIND_COUNT; i++) {
        const char *known = osmp_domain_kind_name((osmp_domain_kind_t)i);
        FUZZ_CHECK(known != NULL, "kind %d has no name", i);
        if (strlen(known) == size && strncasecmp(known, name, size) == 0) want = i;
    }
    FUZZ_CHECK(k == want, "\"%.*s\" parses as %d, expected %d", (int)size, name, k, want);
    if (k >= 0) {
        /* Case-insensitive round trip through the canonical name. */
        const char *canon = osmp_domain_kind_name((osmp_domain_kind_t)k);
        FUZZ_CHECK(osmp_domain_kind_parse(canon, strlen(canon)) == k, "\"%s\" does not parse back", canon);
    }
    /* Names of out-of-range kinds and rungs are NULL, not garbage. */
    int x = (int)(fuzz_hash(data, size) % 64u) - 32;
    FUZZ_CHECK((osmp_domain_kind_name((osmp_domain_kind_t)x) != NULL) ==
                   (x >= 0 && x < OSMP_DOMAIN_KIND_COUNT),
               "kind name of %d", x);
    FUZZ_CHECK((osmp_dist_rung_name(x) != NULL) == (x >= 0 && x < OSMP_DIST_RUNGS), "rung name of %d", x);
    free(name);
    return 0;
}
