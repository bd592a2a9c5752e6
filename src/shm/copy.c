/*
 * The single-copy engine: read a peer's buffer once, where it is; and mappable
 * memory (osmp_alloc), buffers other processes can read in place.
 *
 * Between processes, a single copy of a collective reads the peer's buffer with
 * process_vm_readv (CMA): the kernel pins and walks the peer's pages on every
 * call, so it pays only for large blocks (OSMP_SINGLE_COPY_MIN). A buffer that
 * osmp_alloc returned lives in a memfd; a peer maps that memfd once (through
 * /proc/PID/fd/FD, which needs the same permission as CMA) and from then on
 * reads the block with plain loads, as threads of one process do.
 *
 * How a reader finds the memfd without another message: the address a
 * participant publishes for single copy (struct osmp__chan.addr) carries the
 * memfd's descriptor + 1 in its top 16 bits (osmp__expose); the low 48 bits
 * stay the address, so readers add their offsets to it as before and a reader
 * that cannot map falls back to CMA on the address itself. The memfd starts
 * with a header page that says where its owner mapped it, which turns the
 * address into an offset. A reader's cached mapping stays valid while the
 * header says the region is live: osmp_free marks it freed before it closes the
 * descriptor, so a number that comes back for new memory is mapped again, never
 * read stale (the owner's next publication orders the mark before the reader's
 * look). A peer pid that a team starts to watch anew may be another process
 * with a reused pid: its cached regions are dropped then (osmp__xmem_forget,
 * from liveness.c). So a copy through a cached mapping makes no system call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "common/atomic.h"
#include "common/fault.h"
#include "osmp.h"
#include "shm.h"
#include "wait.h"

#define XMEM_HDR 4096u /* header page; keeps the user's block page aligned */
#define XMEM_MAGIC 0x4f534d50786d656dull /* "OSMPxmem" */
#define XMEM_FREED 0x4f534d5066726565ull /* "OSMPfree" */
#define TAG_SHIFT 48
#define ADDR_MASK ((1ull << TAG_SHIFT) - 1)
#define MAX_TAGGED_FD 65534
#define CACHE_SLOTS 16 /* peers' regions a process keeps mapped */

struct xmem_hdr {
    osmp_atomic64_t magic; /* XMEM_MAGIC while the region is live, then XMEM_FREED */
    uint64_t base; /* where the owner mapped the memfd (header included) */
    uint64_t len;  /* bytes of the mapping, header included */
};

/* This process's regions. */
struct own {
    uintptr_t base;
    size_t len;
    int fd;
};
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;
static struct own *owns;
static int nown, capown;
static osmp_atomic32_t any_own; /* 0 until the first osmp_alloc: publishing skips the lock */

/* Peers' regions this process has mapped. */
struct peer_map {
    pid_t pid;
    int fd;
    int stale; /* its pid may be another process now: never hit again */
    const char *map;
    size_t len;
    int users; /* copies reading it now: never unmapped under them */
    uint64_t last;
};
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct peer_map cache[CACHE_SLOTS];
static uint64_t cache_clock;

static osmp_atomic64_t n_mapped, b_mapped, n_cma, b_cma;

static size_t page_round(size_t n)
{
    return (n + XMEM_HDR - 1) / XMEM_HDR * XMEM_HDR;
}

int osmp_alloc(size_t bytes, void **ptr)
{
    if (!ptr) return OSMP_ERR_INVALID_ARG;
    *ptr = NULL;
    if (bytes > SIZE_MAX / 2 - XMEM_HDR) return OSMP_ERR_NO_MEMORY;
    size_t len = XMEM_HDR + page_round(bytes ? bytes : 1);
    int fd = memfd_create("osmp-alloc", MFD_CLOEXEC);
    if (fd < 0) return OSMP_ERR_NO_MEMORY;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return OSMP_ERR_NO_MEMORY;
    }
    struct xmem_hdr *h = p;
    h->base = (uint64_t)(uintptr_t)p;
    h->len = len;
    osmp__store_release(&h->magic, XMEM_MAGIC);
    pthread_mutex_lock(&own_lock);
    if (nown == capown) {
        int cap = capown ? 2 * capown : 16;
        struct own *o = realloc(owns, sizeof(*o) * (size_t)cap);
        if (!o) {
            pthread_mutex_unlock(&own_lock);
            munmap(p, len);
            close(fd);
            return OSMP_ERR_NO_MEMORY;
        }
        owns = o;
        capown = cap;
    }
    owns[nown++] = (struct own){(uintptr_t)p, len, fd};
    osmp__store32(&any_own, 1);
    pthread_mutex_unlock(&own_lock);
    *ptr = (char *)p + XMEM_HDR;
    return OSMP_OK;
}

int osmp_free(void *ptr)
{
    if (!ptr) return OSMP_OK;
    pthread_mutex_lock(&own_lock);
    for (int i = 0; i < nown; i++) {
        if (owns[i].base + XMEM_HDR != (uintptr_t)ptr) continue;
        struct own o = owns[i];
        owns[i] = owns[--nown];
        pthread_mutex_unlock(&own_lock);
        osmp__store_release(&((struct xmem_hdr *)o.base)->magic, XMEM_FREED); /* readers' mappings see it */
        munmap((void *)o.base, o.len);
        close(o.fd);
        return OSMP_OK;
    }
    pthread_mutex_unlock(&own_lock);
    return OSMP_ERR_INVALID_ARG;
}

void osmp_copy_stats(struct osmp_copy_stats *s)
{
    if (!s) return;
    s->mapped = osmp__load_relaxed(&n_mapped);
    s->mapped_bytes = osmp__load_relaxed(&b_mapped);
    s->cma = osmp__load_relaxed(&n_cma);
    s->cma_bytes = osmp__load_relaxed(&b_cma);
}

uint64_t osmp__expose(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (!p || !osmp__load32(&any_own) || (a >> TAG_SHIFT)) return a;
    uint64_t tagged = a;
    pthread_mutex_lock(&own_lock);
    for (int i = 0; i < nown; i++)
        if (a >= owns[i].base + XMEM_HDR && a < owns[i].base + owns[i].len && owns[i].fd <= MAX_TAGGED_FD) {
            tagged = a | (uint64_t)(owns[i].fd + 1) << TAG_SHIFT;
            break;
        }
    pthread_mutex_unlock(&own_lock);
    return tagged;
}

uint64_t osmp__expose_mapped(const void *p)
{
    uint64_t a = osmp__expose(p);
    return a >> TAG_SHIFT ? a : 0;
}

static int live(const struct peer_map *c)
{
    return osmp__load_acquire(&((struct xmem_hdr *)(uintptr_t)c->map)->magic) == XMEM_MAGIC;
}

/* The cached mapping of (pid, fd) if its region is still live, else a new one
 * (evicting the least recently used idle slot). NULL: cannot map; the caller
 * falls back to CMA. */
static struct peer_map *map_peer(pid_t pid, int fd)
{
    pthread_mutex_lock(&cache_lock);
    struct peer_map *e = NULL, *victim = NULL;
    uint64_t worth = UINT64_MAX; /* of the victim: an empty slot, then a dead mapping, then the least recent */
    for (int i = 0; i < CACHE_SLOTS; i++) {
        struct peer_map *c = &cache[i];
        int dead = c->map && (c->stale || !live(c));
        if (c->map && !dead && c->pid == pid && c->fd == fd) {
            e = c;
            break;
        }
        uint64_t w = !c->map ? 0 : dead ? 1 : 2 + c->last;
        if (!c->users && w < worth) victim = c, worth = w;
    }
    if (!e && victim) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
        int f = open(path, O_RDONLY | O_CLOEXEC);
        void *m = MAP_FAILED;
        if (f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= XMEM_HDR)
            m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, f, 0);
        if (f >= 0) close(f);
        if (m != MAP_FAILED) {
            if (victim->map) munmap((void *)victim->map, victim->len);
            *victim = (struct peer_map){pid, fd, 0, m, (size_t)st.st_size, 0, 0};
            if (live(victim)) {
                e = victim;
            } else { /* some other memfd of the peer's */
                munmap(m, (size_t)st.st_size);
                victim->map = NULL;
            }
        }
    }
    if (e) {
        e->users++;
        e->last = ++cache_clock;
    }
    pthread_mutex_unlock(&cache_lock);
    return e;
}

void osmp__xmem_forget(pid_t pid)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        struct peer_map *c = &cache[i];
        if (!c->map || c->pid != pid) continue;
        if (c->users) {
            c->stale = 1; /* a copy reads it now; the slot is reused later */
        } else {
            munmap((void *)c->map, c->len);
            c->map = NULL;
        }
    }
    pthread_mutex_unlock(&cache_lock);
}

static void unmap_peer(struct peer_map *e)
{
    pthread_mutex_lock(&cache_lock);
    e->users--;
    pthread_mutex_unlock(&cache_lock);
}

/* Read [a, a + len) of a peer's region through the mapping. 0 on success. */
static int copy_mapped(pid_t pid, int fd, void *dst, uint64_t a, size_t len)
{
    struct peer_map *e = map_peer(pid, fd);
    if (!e) return -1;
    const struct xmem_hdr *h = (const void *)e->map;
    int rc = -1;
    if (a >= h->base + XMEM_HDR && len <= h->len && a - h->base <= h->len - len && h->len <= e->len) {
        memcpy(dst, e->map + (a - h->base), len);
        rc = 0;
    }
    unmap_peer(e);
    return rc;
}

static __thread int copy_gone __attribute__((tls_model("initial-exec"))); /* (osmp__copy_gone) */

static int copy(pid_t pid, int same_process, void *dst, const void *src, size_t len, int count)
{
    uint64_t a = (uint64_t)(uintptr_t)src;
    unsigned tag = (unsigned)(a >> TAG_SHIFT);
    const char *s = (const char *)(uintptr_t)(a & ADDR_MASK);
    if (same_process) {
        memcpy(dst, s, len);
        return OSMP_OK;
    }
    if (tag && copy_mapped(pid, (int)tag - 1, dst, a & ADDR_MASK, len) == 0) {
        if (count) {
            osmp__fetch_add(&n_mapped, 1);
            osmp__fetch_add(&b_mapped, len);
        }
        return OSMP_OK;
    }
    char *d = dst;
    size_t left = len;
    while (left > 0) { /* the kernel may copy less than asked (page faults, limits) */
        struct iovec local = {d, left}, remote = {(void *)s, left};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            copy_gone = got < 0 && errno == ESRCH;
            return OSMP_ERR_COPY;
        }
        d += got;
        s += got;
        left -= (size_t)got;
    }
    if (count) {
        osmp__fetch_add(&n_cma, 1);
        osmp__fetch_add(&b_cma, len);
    }
    return OSMP_OK;
}

int osmp__copy_gone(void)
{
    return copy_gone;
}

int osmp__copy_from(pid_t pid, int same_process, void *dst, const void *src, size_t len)
{
    if (osmp__fault(OSMP__FAULT_COPY)) return copy_gone = 0, OSMP_ERR_COPY;
    return copy(pid, same_process, dst, src, len, 1);
}

int osmp__copy_probe(pid_t pid, int same_process, void *dst, const void *src, size_t len)
{
    return copy(pid, same_process, dst, src, len, 0);
}

size_t osmp__stream_copy(void *dst, const void *src, size_t len)
{
#if OSMP__HAVE_STREAM
    char *d = dst;
    const char *s = src;
    /* Whole lines only: a line written partly by streaming stores is written
     * to memory in pieces, and partly by ordinary ones is fetched anyway. */
    size_t head = (size_t)(-(uintptr_t)d & (OSMP_CACHE_LINE - 1)), streamed = 0;
    if (head > len) head = len;
    memcpy(d, s, head);
    d += head, s += head, len -= head;
    for (; len >= 64; len -= 64, d += 64, s += 64, streamed += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)s), x1 = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + 32)), x3 = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, x0);
        _mm_stream_si128((__m128i *)(d + 16), x1);
        _mm_stream_si128((__m128i *)(d + 32), x2);
        _mm_stream_si128((__m128i *)(d + 48), x3);
    }
    memcpy(d, s, len);
    osmp__stream_fence();
    return streamed;
#else
    memcpy(dst, src, len);
    return 0;
#endif
}
