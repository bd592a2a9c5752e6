/* The single-copy engine: read a peer's buffer once, where it is. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <stdlib.h>

#include "common/atomic.h"
#include "common/fault.h"
#include "osmp.h"
#include "shm.h"

int osmp__copy_from(pid_t pid, int same_process, void *dst, const void *src, size_t len)
{
    if (osmp__fault(OSMP__FAULT_COPY)) return OSMP_ERR_COPY;
    return osmp__copy_probe(pid, same_process, dst, src, len);
}

int osmp__copy_probe(pid_t pid, int same_process, void *dst, const void *src, size_t len)
{
    if (same_process) {
        memcpy(dst, src, len);
        return OSMP_OK;
    }
    char *d = dst;
    const char *s = src;
    while (len > 0) { /* the kernel may copy less than asked (page faults, limits) */
        struct iovec local = {d, len}, remote = {(void *)s, len};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return OSMP_ERR_COPY;
        d += got;
        s += got;
        len -= (size_t)got;
    }
    return OSMP_OK;
}
