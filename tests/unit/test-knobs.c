/*
 * osmp__knob_long_or_default: a bad value gives one line naming the variable,
 * the value and the default (once per knob), then the default; a good value
 * is returned as is, silently.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/knobs.h"
#include "test.h"

/* Run the helper with stderr captured; returns its value, the text in out. */
static long captured(enum osmp_knob k, long lo, long hi, char *out, size_t cap)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    long v = osmp__knob_long_or_default(k, lo, hi);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return v;
}

int main(void)
{
    char out[512];
    setenv("OSMP_SPIN", "lots", 1);
    setenv("OSMP_YIELDS", "-3", 1);
    setenv("OSMP_JOIN_TIMEOUT", "90", 1);
    osmp__knobs_reread();
    CHECK_INT(captured(OSMP_KNOB_SPIN, 0, 1L << 30, out, sizeof(out)), 4000);
    CHECK_STR(out, "osmp: OSMP_SPIN=\"lots\" is not an integer in 0..1073741824; using the default 4000\n");
    CHECK_INT(captured(OSMP_KNOB_SPIN, 0, 1L << 30, out, sizeof(out)), 4000);
    CHECK_STR(out, ""); /* once per knob */
    CHECK_INT(captured(OSMP_KNOB_YIELDS, 0, 1L << 30, out, sizeof(out)), 50);
    CHECK_STR(out, "osmp: OSMP_YIELDS=\"-3\" is not an integer in 0..1073741824; using the default 50\n");
    CHECK_INT(captured(OSMP_KNOB_JOIN_TIMEOUT, 0, 1L << 30, out, sizeof(out)), 90);
    CHECK_STR(out, "");
    setenv("OSMP_JOIN_TIMEOUT", "90s", 1);
    osmp__knobs_reread();
    CHECK_INT(captured(OSMP_KNOB_JOIN_TIMEOUT, 0, 1L << 30, out, sizeof(out)), 60);
    CHECK_STR(out, "osmp: OSMP_JOIN_TIMEOUT=\"90s\" is not an integer in 0..1073741824; using the default 60\n");
    CHECK_STR(osmp__knob_name(OSMP_KNOB_TUNE_FILE), "OSMP_TUNE_FILE");
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    osmp__knob_bad(OSMP_KNOB_ALG(OSMP_COLL_BCAST), "OSMP_BCAST_ALG=\"fast\" is not an algorithm of bcast");
    osmp__knob_bad(OSMP_KNOB_ALG(OSMP_COLL_BCAST), "OSMP_BCAST_ALG=\"fast\" is not an algorithm of bcast");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, sizeof(out) - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    CHECK_STR(out, "osmp: OSMP_BCAST_ALG=\"fast\" is not an algorithm of bcast; using the default auto\n");
    CHECK_STR(osmp__knob_default(OSMP_KNOB_SPIN), "4000");
    return test_failures != 0;
}
