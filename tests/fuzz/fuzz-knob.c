/*
 * Integer knobs (OSMP_CHUNK_SIZE, OSMP_PIPELINE_DEPTH, OSMP_SINGLE_COPY_MIN, OSMP_STREAM_MIN, OSMP_SPIN):
 * osmp__knob_long on the environment value, against the rule it documents (a decimal integer in
 * [lo, hi], else -1 and a one-line reason). The algorithm and single-copy knobs are parsed inside
 * team creation (src/team/team.c) and are not reachable without a team. Input: the value text.
 */
#include <ctype.h>
#include <stdbool.h>

#include "common/knobs.h"
#include "fuzz.h"

/* strtol's grammar without its ERANGE corner: spaces, a sign, digits, the end. */
static bool reference(const char *s, long lo, long hi, long *v)
{
    while (isspace((unsigned char)*s))
        s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s)) return false;
    unsigned long long x = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (x > (1ull << 50)) return false; /* beyond every range below, and no overflow */
        x = x * 10 + (unsigned long long)(*s - '0');
    }
    if (*s) return false;
    long y = neg ? -(long)x : (long)x;
    if (y < lo || y > hi) return false;
    *v = y;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    char *value = fuzz_cstr(data, size);
    static const struct {
        enum osmp_knob knob;
        const char *name, *dflt;
        long lo, hi;
    } knobs[] = {/* The defaults auto are read by team creation before it parses an integer */
                 {OSMP_KNOB_CHUNK_SIZE, "OSMP_CHUNK_SIZE", "auto", 64, 16 << 20},
                 {OSMP_KNOB_SINGLE_COPY_MIN, "OSMP_SINGLE_COPY_MIN", "auto", 0, 1L << 40},
                 {OSMP_KNOB_STREAM_MIN, "OSMP_STREAM_MIN", "auto", 0, 1L << 40},
                 {OSMP_KNOB_PIPELINE_DEPTH, "OSMP_PIPELINE_DEPTH", "auto", 1, 64},
                 {OSMP_KNOB_SPIN, "OSMP_SPIN", "4000", 0, 1L << 30}};
    /* One NAME=VALUE buffer per knob, put into the environment once and rewritten in place: setenv would
     * keep every value ever set (glibc never frees them) and grow without bound over a long run. */
    static char env[sizeof(knobs) / sizeof(knobs[0])][320];
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
        snprintf(env[i], sizeof(env[i]), "%s=%s", knobs[i].name, value);
        if (getenv(knobs[i].name) != env[i] + strlen(knobs[i].name) + 1) putenv(env[i]);
        osmp__knobs_reread();
        const char *seen = *value ? value : knobs[i].dflt; /* empty means the default */
        FUZZ_CHECK(strcmp(osmp__knob_str(knobs[i].knob), seen) == 0, "%s=\"%s\"", knobs[i].name, value);
        char err[256];
        memset(err, 'x', sizeof(err));
        long want = 0, got = osmp__knob_long(knobs[i].knob, knobs[i].lo, knobs[i].hi, err, sizeof(err));
        bool ok = reference(seen, knobs[i].lo, knobs[i].hi, &want);
        if (ok) {
            FUZZ_CHECK(got == want, "%s=\"%s\": %ld, expected %ld", knobs[i].name, value, got, want);
        } else {
            FUZZ_CHECK(got == -1, "%s=\"%s\": %ld, expected a rejection", knobs[i].name, value, got);
            fuzz_check_reason(err, sizeof(err), value);
        }
    }
    free(value);
    return 0;
}
