/* The machine's cache line and page size (machine.h). */
#include "common/machine.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common/atomic.h"

size_t osmp__page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

size_t osmp__cache_line(void)
{
#ifdef _SC_LEVEL1_DCACHE_LINESIZE
    long l = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    if (l > 0) return (size_t)l;
#endif
    return 0;
}

static pthread_once_t checked = PTHREAD_ONCE_INIT;

static void check_once(void)
{
    size_t line = osmp__cache_line();
    if (line > OSMP_CACHE_LINE)
        fprintf(stderr,
                "osmp: this machine's cache line is %zu bytes, the library was built for %d: rebuild with "
                "-DOSMP_CACHE_LINE=%zu to keep one writer per line\n",
                line, OSMP_CACHE_LINE, line);
}

void osmp__check_cache_line(void)
{
    pthread_once(&checked, check_once);
}
