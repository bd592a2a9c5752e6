/* What the command-line tools share (internal). */
#ifndef OSMP_TOOLS_CLI_H
#define OSMP_TOOLS_CLI_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The tool's name, defined once by each tool: the prefix of its messages. */
extern const char osmp__tool[];

/* One line "TOOL: message" on stderr, then exit(status): 2 for bad usage or
 * input (the tests assert exactly one line), 1 for an internal failure. */
static inline void osmp__tool_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static inline void osmp__tool_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", osmp__tool);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

#endif
