/* The single-copy engine: read a peer's buffer once, where it is. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <stdlib.h>

#include "common/atomic.h"
#include "common/knobs.h"
#include "osmp.h"
#include "shm.h"

/* OSMP_FAULT=copy:N[@R] (tests): the N-th copy of this process fails, as a
 * refused process_vm_readv would. Read once; off, a copy pays one load. */
static osmp_atomic32_t copies;
static osmp_atomic32_t fault_at; /* 0: not read yet, 1: off, 1 + N: the N-th copy fails */

static uint32_t fault_read(void)
{
    const char *v = osmp__knob_str(OSMP_KNOB_FAULT), *rank = getenv("OSMP_RUN_RANK");
    char *end;
    long n = strncmp(v, "copy:", 5) == 0 ? strtol(v + 5, &end, 10) : 0;
    if (n > 0 && *end == '@') n = rank && strtol(end + 1, NULL, 10) == strtol(rank, NULL, 10) ? n : 0;
    return n > 0 && n < (1L << 30) ? 1 + (uint32_t)n : 1;
}

static int fault_now(void)
{
    uint32_t at = osmp__load32(&fault_at);
    if (!at) osmp__store32(&fault_at, at = fault_read());
    return at > 1 && osmp__fetch_add32(&copies, 1) + 1 == at - 1;
}

int osmp__copy_from(pid_t pid, int same_process, void *dst, const void *src, size_t len)
{
    if (__builtin_expect(osmp__load32(&fault_at) != 1, 0) && fault_now()) return OSMP_ERR_COPY;
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
