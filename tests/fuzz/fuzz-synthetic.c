/*
 * hwloc synthetic descriptions (osmp-run/osmp-topo --synthetic, OSMP_TOPOLOGY=synthetic:...):
 * osmp_topo_load(OSMP_TOPO_SYNTHETIC) then, on whatever loads, osmp_topo_check and what the plan layer
 * builds on it (fuzz_exercise_topo). Input: the description, at most 256 bytes.
 */
#include <ctype.h>
#include <hwloc.h>

#include "fuzz.h"

/* LeakSanitizer's switches; NULL in builds without it. */
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

/* hwloc 2.9.0 leaks the attached-memory records of a synthetic description it rejects ("[numa] cor:1"
 * leaks 32 bytes in hwloc_topology_set_synthetic). Not OSMP's to fix: such descriptions are loaded
 * with leak detection off. Everything hwloc accepts is loaded with it on. */
static int hwloc_leaks_on(const char *desc)
{
    if (!strchr(desc, '[')) return 0;
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) < 0) return 0;
    int rejected = hwloc_topology_set_synthetic(h, desc) < 0;
    hwloc_topology_destroy(h);
    return rejected;
}

/* Leaves the description can ask for, bounded before hwloc builds them so that one input stays fast:
 * the product of the arities, i.e. of the numbers that do not end a name ("l3", "group0") and do not
 * lie inside a closed attribute list "(...)". Hexadecimal or octal-looking numbers are refused. */
#define MAX_LEAVES 512

static int small_enough(const char *s)
{
    unsigned long long leaves = 1;
    for (const char *p = s; *p; p++) {
        if (*p == '(' && strchr(p, ')')) {
            p = strchr(p, ')');
            continue;
        }
        if (!isdigit((unsigned char)*p)) continue;
        if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
            while (isdigit((unsigned char)p[1]))
                p++;
            continue;
        }
        if (*p == '0' && isalnum((unsigned char)p[1])) return 0;
        unsigned long long v = 0;
        for (; isdigit((unsigned char)*p); p++) {
            v = v * 10 + (unsigned long long)(*p - '0');
            if (v > MAX_LEAVES) return 0;
        }
        p--;
        leaves *= v ? v : 1;
        if (leaves > MAX_LEAVES) return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    fuzz_fixed_topo();
    char *desc = fuzz_cstr(data, size);
    if (!small_enough(desc)) {
        FUZZ_NOTE("too many objects: \"%s\"", desc);
        free(desc);
        return 0;
    }
    int quiet = 0;
    if (__lsan_disable && __lsan_enable) {
        __lsan_disable(); /* the probe itself leaks */
        quiet = hwloc_leaks_on(desc);
        if (!quiet) __lsan_enable();
    }
    osmp_topo_t t = (osmp_topo_t)&desc;
    int rc = osmp_topo_load(OSMP_TOPO_SYNTHETIC, desc, 0, &t);
    if (quiet) __lsan_enable();
    FUZZ_NOTE("%s %s", osmp_status_name(rc), osmp_topo_last_error());
    if (rc != OSMP_OK) {
        FUZZ_CHECK(rc == OSMP_ERR_TOPO_LOAD || rc == OSMP_ERR_TOPO_INVALID, "\"%s\": status %s", desc,
                   osmp_status_name(rc));
        FUZZ_CHECK(t == (osmp_topo_t)&desc, "\"%s\": topology written on failure", desc);
        fuzz_check_reason(osmp_topo_last_error(), 256, desc);
        free(desc);
        return 0;
    }
    FUZZ_NOTE("  %d cores", osmp_topo_ncores(t));
    fuzz_exercise_topo(t, fuzz_hash(data, size));
    osmp_topo_destroy(t);
    free(desc);
    return 0;
}
