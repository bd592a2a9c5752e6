/*
 * The machine's cache line and page size, and where its per-machine files
 * live (internal).
 *
 * OSMP_CACHE_LINE (common/atomic.h) is fixed when the library is built
 * (configure time: the build machine's L1 data cache line, or -DOSMP_CACHE_LINE)
 * because it lays out the mailboxes; osmp__check_cache_line() compares it with
 * the machine the library runs on. The page size is read from the machine.
 */
#ifndef OSMP_MACHINE_H
#define OSMP_MACHINE_H

#include <stddef.h>

size_t osmp__page_size(void);
/* The running machine's L1 data cache line, 0 if the OS does not say. */
size_t osmp__cache_line(void);
/* Once per process: warn on stderr when the running machine's line is longer
 * than the built one (mailboxes of two participants would then share a line:
 * correct, but slower). */
void osmp__check_cache_line(void);

/* $XDG_CACHE_HOME/osmp/STEM-HOST.EXT (else ~/.cache/osmp/...): the per-machine
 * cache of osmp-probe --save (stem "topology", ext "xml": topo) and osmp-tune
 * ("tune", "txt": coll). Here, below both layers. OSMP_OK or
 * OSMP_ERR_INVALID_ARG with why. */
int osmp__cache_path(const char *stem, const char *ext, char *buf, size_t len, char *why, size_t why_len);

#endif
