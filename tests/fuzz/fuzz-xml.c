/*
 * hwloc XML files (osmp-run/osmp-topo --topology, OSMP_TOPOLOGY=FILE): osmp_topo_load(OSMP_TOPO_XML)
 * of the input written to a memfd, with and without OSMP_TOPO_WHOLE_SYSTEM, then, on whatever loads,
 * osmp_topo_check and what the plan layer builds on it (fuzz_exercise_topo). Input: the file.
 * hwloc parses with libxml2 where its plugin is installed (libhwloc-plugins), else with its own parser;
 * HWLOC_LIBXML_IMPORT=0 picks the latter.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

/* hwloc 2.9.0 leaks the objects it has built when an object element has a child it rejects
 * (regressions/xml/hwloc-leak-numa-bad-child.xml: "invalid special object child"). OSMP never allocates
 * hwloc objects, so a leaked one is hwloc's; a topology OSMP forgot to destroy still shows as the leak of
 * hwloc_topology_init's allocation. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:hwloc_alloc_setup_object\n";
}

/* Does the tag [p, end) have attribute `name`? */
static int has_attr(const char *p, const char *end, const char *name)
{
    size_t len = strlen(name);
    for (const char *q = p + 1; q + len <= end; q++)
        if (*q == name[0] && isspace((unsigned char)q[-1]) && memcmp(q, name, len) == 0) return 1;
    return 0;
}

/* hwloc 2.9.0 dereferences a NULL complete_cpuset or complete_nodeset when an object element has a cpuset
 * or nodeset without it (regressions/xml/hwloc-crash-no-complete-cpuset.xml; lstopo crashes too; hwloc
 * rejects such objects since open-mpi/hwloc#783). Such inputs are skipped, so that the fuzzer gets past
 * hwloc's crash to OSMP's code. One pass over the text. */
static int hwloc_crashes_on(const char *xml, size_t size)
{
    const char *stop = xml + size;
    for (const char *p = xml; p + 7 <= stop; p++) {
        if (*p != '<' || memcmp(p, "<object", 7) != 0) continue;
        const char *end = memchr(p, '>', (size_t)(stop - p));
        if (!end) end = stop;
        if ((has_attr(p, end, "cpuset=") && !has_attr(p, end, "complete_cpuset=")) ||
            (has_attr(p, end, "nodeset=") && !has_attr(p, end, "complete_nodeset=")))
            return 1;
        p = end - 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (size > 256 * 1024) return 0;
    fuzz_fixed_topo();
    if (fd < 0) {
        fd = memfd_create("osmp-fuzz-xml", MFD_CLOEXEC);
        FUZZ_CHECK(fd >= 0, "memfd_create failed");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    if (hwloc_crashes_on((const char *)data, size)) {
        FUZZ_NOTE("skipped: hwloc 2.9.0 crashes on an object without complete_cpuset/complete_nodeset");
        return 0;
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size, "cannot write the memfd");
    uint32_t h = fuzz_hash(data, size);
    for (unsigned flags = 0; flags <= OSMP_TOPO_WHOLE_SYSTEM; flags++) {
        osmp_topo_t t = (osmp_topo_t)&fd;
        int rc = osmp_topo_load(OSMP_TOPO_XML, path, flags, &t);
        FUZZ_NOTE("flags %u: %s %s", flags, osmp_status_name(rc), osmp_topo_last_error());
        if (rc != OSMP_OK) {
            FUZZ_CHECK(rc == OSMP_ERR_TOPO_LOAD || rc == OSMP_ERR_TOPO_INVALID, "status %s",
                       osmp_status_name(rc));
            FUZZ_CHECK(t == (osmp_topo_t)&fd, "topology written on failure");
            fuzz_check_reason(osmp_topo_last_error(), 256, "");
            continue;
        }
        FUZZ_NOTE("  %d cores", osmp_topo_ncores(t));
        fuzz_exercise_topo(t, h + flags);
        osmp_topo_destroy(t);
    }
    return 0;
}
