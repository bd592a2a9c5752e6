/* Small helpers shared by the library's layers (internal). */
#ifndef OSMP_UTIL_H
#define OSMP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

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

#endif
