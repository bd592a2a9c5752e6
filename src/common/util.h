/* Small helpers shared by the library's layers (internal). */
#ifndef OSMP_UTIL_H
#define OSMP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Write a formatted reason into a caller's buffer that may be NULL. */
static inline void osmp__why(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void osmp__why(char *why, size_t len, const char *fmt, ...)
{
    if (!why || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* memcpy for the small copies of the hot small calls: up to 32 bytes inline
 * (two possibly overlapping fixed-size copies, as libc does), the libc call
 * beyond. A call through the PLT costs more than the copy of one double.
 * dst and src must not overlap. */
static inline void osmp__copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n >= 16 && n <= 32) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        memcpy(d, s, n);
    }
}

/* Digests of what the participants of a team computed on their own, compared
 * only for equality (team creation, team.c): FNV-1a over 64-bit words. Each
 * step is a bijection of the digest for a given word, so two sequences that
 * differ in one word never give the same digest. */
#define OSMP__HASH_INIT 1469598103934665603ULL
static inline uint64_t osmp__hash(uint64_t h, uint64_t word)
{
    return (h ^ word) * 1099511628211ULL;
}
static inline uint64_t osmp__hash_str(uint64_t h, const char *s)
{
    for (;; s++) {
        h = osmp__hash(h, (unsigned char)*s);
        if (!*s) return h;
    }
}

#endif
