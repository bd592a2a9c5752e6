/*
 * Hierarchy specs (OSMP_HIERARCHY, osmp-run --hierarchy, osmp-topo --spec, osmp_team_params.hierarchy):
 * osmp_spec_parse, osmp_spec_format, and osmp_plan_create on a fixed 16-core machine.
 * Input: the spec text.
 */
#include "fuzz.h"

#define SENTINEL_KIND ((osmp_domain_kind_t)0x5a5a)

static void check_levels(const struct osmp_spec_level *lv, int n, const char *spec)
{
    FUZZ_CHECK(n >= 0 && n <= OSMP_SPEC_MAX_LEVELS, "\"%s\": %d levels", spec, n);
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(lv[i].kind >= OSMP_DOMAIN_MACHINE && lv[i].kind < OSMP_DOMAIN_PU,
                   "\"%s\": level %d kind %d", spec, i, (int)lv[i].kind);
        FUZZ_CHECK(lv[i].split >= 1 && lv[i].split <= 4096, "\"%s\": level %d split %d", spec, i,
                   lv[i].split);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024) return 0;
    char *spec = fuzz_cstr(data, size);
    struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS + 1];
    for (int i = 0; i <= OSMP_SPEC_MAX_LEVELS; i++)
        lv[i] = (struct osmp_spec_level){SENTINEL_KIND, -7};
    int n = -7;
    char err[160];
    memset(err, 'x', sizeof(err));
    int rc = osmp_spec_parse(spec, lv, &n, err, sizeof(err));
    if (rc != OSMP_OK) {
        FUZZ_CHECK(rc == OSMP_ERR_SPEC, "\"%s\": status %s", spec, osmp_status_name(rc));
        fuzz_check_reason(err, sizeof(err), spec);
        FUZZ_CHECK(n == -7, "\"%s\": nlevels written on failure", spec);
        for (int i = 0; i <= OSMP_SPEC_MAX_LEVELS; i++)
            FUZZ_CHECK(lv[i].kind == SENTINEL_KIND && lv[i].split == -7,
                       "\"%s\": level %d written on failure", spec, i);
        /* osmp_plan_create agrees, except for "auto", which it takes and the parser leaves to callers. */
        if (strcmp(spec, "auto") != 0) {
            struct osmp_plan *plan = (struct osmp_plan *)&n;
            int cores[2] = {0, 5};
            rc = osmp_plan_create(fuzz_fixed_topo(), cores, 2, spec, 0, &plan);
            FUZZ_CHECK(rc == OSMP_ERR_SPEC && plan == (struct osmp_plan *)&n, "\"%s\": plan: %s", spec,
                       osmp_status_name(rc));
        }
        free(spec);
        return 0;
    }
    check_levels(lv, n, spec);
    FUZZ_CHECK(lv[n].kind == SENTINEL_KIND, "\"%s\": level %d written past nlevels", spec, n);

    /* Format: the snprintf contract at every buffer size, and a round trip to the same levels. */
    char buf[OSMP_SPEC_MAX_LEVELS * 16];
    int w = osmp_spec_format(lv, n, buf, sizeof(buf));
    FUZZ_CHECK(w >= 0 && (size_t)w < sizeof(buf) && strlen(buf) == (size_t)w, "\"%s\": format wrote %d", spec,
               w);
    for (size_t len = 0; len <= (size_t)w; len++) {
        char small[sizeof(buf) + 1];
        memset(small, 'x', sizeof(small));
        FUZZ_CHECK(osmp_spec_format(lv, n, small, len) == w, "\"%s\": format into %zu bytes", spec, len);
        FUZZ_CHECK(small[len] == 'x', "\"%s\": format into %zu bytes wrote past the buffer", spec, len);
        if (len)
            FUZZ_CHECK(strlen(small) == len - 1 && memcmp(small, buf, len - 1) == 0, "\"%s\": truncated",
                       spec);
    }
    struct osmp_spec_level again[OSMP_SPEC_MAX_LEVELS];
    int n2 = -1;
    rc = osmp_spec_parse(buf, again, &n2, err, sizeof(err));
    FUZZ_CHECK(rc == OSMP_OK, "\"%s\" formats as \"%s\", which does not parse: %s", spec, buf, err);
    FUZZ_CHECK(n2 == n, "\"%s\" -> \"%s\": %d levels, then %d", spec, buf, n, n2);
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(again[i].kind == lv[i].kind && again[i].split == lv[i].split, "\"%s\" -> \"%s\": level %d",
                   spec, buf, i);

    /* A plan for a few ranks on the fixed machine, ranks, cores and root from the input's hash. */
    osmp_topo_t topo = fuzz_fixed_topo();
    uint32_t h = fuzz_hash(data, size);
    int nranks = 1 + (int)(h % 24u), root = (int)((h >> 5) % (unsigned)nranks), cores[24];
    for (int r = 0; r < nranks; r++)
        cores[r] = (int)(((h >> (r % 16)) + 5u * (unsigned)r) % 16u);
    struct osmp_plan *plan = NULL;
    rc = osmp_plan_create(topo, cores, nranks, spec, root, &plan);
    FUZZ_CHECK(rc == OSMP_OK, "\"%s\": plan: %s", spec, osmp_status_name(rc));
    char why[256];
    FUZZ_CHECK(osmp_plan_check(plan, why, sizeof(why)) == OSMP_OK, "\"%s\": plan: %s", spec, why);
    FUZZ_CHECK(plan->nlevels <= n + 1, "\"%s\": %d plan levels from %d spec levels", spec, plan->nlevels, n);
    osmp_plan_destroy(plan);
    free(spec);
    return 0;
}
