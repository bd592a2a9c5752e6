/* The machine's cache line and page size, and its per-machine cache files (machine.h). */
#include "common/machine.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/atomic.h"
#include "common/util.h"
#include "osmp.h"

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

int osmp__cache_path(const char *stem, const char *ext, char *buf, size_t len, char *why, size_t why_len)
{
    char host[256];
    if (gethostname(host, sizeof(host)) < 0) {
        osmp__why(why, why_len, "cannot read the host name: %s", strerror(errno));
        return OSMP_ERR_INVALID_ARG;
    }
    host[sizeof(host) - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/') *c = '_';
    /* XDG: a relative XDG_CACHE_HOME is invalid and must be ignored. */
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    if (xdg && xdg[0] == '/')
        w = snprintf(buf, len, "%s/osmp/%s-%s.%s", xdg, stem, host, ext);
    else if (home && home[0])
        w = snprintf(buf, len, "%s/.cache/osmp/%s-%s.%s", home, stem, host, ext);
    else {
        osmp__why(why, why_len, "neither XDG_CACHE_HOME nor HOME is set: no place for the per-machine cache");
        return OSMP_ERR_INVALID_ARG;
    }
    if (w < 0 || (size_t)w >= len) {
        osmp__why(why, why_len, "the cache path is too long");
        return OSMP_ERR_INVALID_ARG;
    }
    return OSMP_OK;
}
