/*
 * hwloc XML files (osmp-run/osmp-topo --topology, OSMP_TOPOLOGY=FILE): osmp_topo_load(OSMP_TOPO_XML)
 * of the input written to a memfd, with and without OSMP_TOPO_WHOLE_SYSTEM, then, on whatever loads,
 * osmp_topo_check and what the plan layer builds on it (fuzz_exercise_topo). Input: the file.
 * hwloc parses with libxml2 where its plugin is installed (libhwloc-plugins), else with its own parser;
 * HWLOC_LIBXML_IMPORT=0 picks the latter. Inputs hwloc itself would abort on are refused by OSMP
 * (src/topo/xmlcheck.c, regressions/xml/hwloc-*), so they go through the failure checks below.
 */
#define _GNU_SOURCE
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
