/*
 * Placement policies (osmp-run --bind, osmp-topo --bind): osmp_topo_place on a fixed 16-core machine.
 * Input: the policy text ("linear", "scatter", "numa", "random:SEED").
 */
#include "fuzz.h"

#define SENTINEL (-77)
#define NMAX 40

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    char *policy = fuzz_cstr(data, size);
    osmp_topo_t topo = fuzz_fixed_topo();
    int nc = osmp_topo_ncores(topo);
    int ns[] = {nc, 0, 1 + (int)(fuzz_hash(data, size) % NMAX)};
    int first[NMAX + 1];
    for (int i = 0; i < 3; i++) {
        int n = ns[i], cores[NMAX + 1];
        for (int r = 0; r <= NMAX; r++)
            cores[r] = SENTINEL;
        char err[128];
        memset(err, 'x', sizeof(err));
        int rc = osmp_topo_place(topo, policy, n, cores, err, sizeof(err));
        if (rc != OSMP_OK) {
            FUZZ_CHECK(rc == OSMP_ERR_INVALID_ARG, "\"%s\": status %s", policy, osmp_status_name(rc));
            FUZZ_CHECK(i == 0, "\"%s\": accepted with n = %d, rejected with n = %d", policy, ns[0], n);
            fuzz_check_reason(err, sizeof(err), policy);
            for (int r = 0; r <= NMAX; r++)
                FUZZ_CHECK(cores[r] == SENTINEL, "\"%s\": cores[%d] written on failure", policy, r);
            break;
        }
        for (int r = n; r <= NMAX; r++)
            FUZZ_CHECK(cores[r] == SENTINEL, "\"%s\": cores[%d] written past n = %d", policy, r, n);
        if (i == 0) {
            /* nc ranks: a permutation of the cores. */
            char seen[NMAX] = {0};
            for (int r = 0; r < n; r++) {
                FUZZ_CHECK(cores[r] >= 0 && cores[r] < nc && !seen[cores[r]], "\"%s\": rank %d on core %d",
                           policy, r, cores[r]);
                seen[cores[r]] = 1;
            }
            memcpy(first, cores, sizeof(first));
        } else {
            /* Any other n: the same order, wrapping around past nc. */
            for (int r = 0; r < n; r++)
                FUZZ_CHECK(cores[r] == first[r % nc], "\"%s\": n = %d, rank %d on core %d, expected %d",
                           policy, n, r, cores[r], first[r % nc]);
        }
    }
    /* The known names, exactly; anything else after "random:" is a decimal seed. */
    static const char *const names[] = {"linear", "scatter", "numa"};
    int known = 0;
    for (int i = 0; i < 3; i++)
        known |= strcmp(policy, names[i]) == 0;
    if (strncmp(policy, "random:", 7) == 0 && policy[7]) {
        known = 1;
        for (const char *p = policy + 7; *p; p++)
            known &= *p >= '0' && *p <= '9';
        /* strtoull's range: seeds past 2^64-1 are rejected */
        const char *digits = policy + 7;
        while (*digits == '0' && digits[1])
            digits++;
        size_t len = strlen(digits);
        if (known && (len > 20 || (len == 20 && strcmp(digits, "18446744073709551615") > 0))) known = 0;
    }
    int cores[NMAX];
    int rc = osmp_topo_place(topo, policy, nc, cores, NULL, 0);
    FUZZ_CHECK((rc == OSMP_OK) == known, "\"%s\": %s", policy, osmp_status_name(rc));
    free(policy);
    return 0;
}
