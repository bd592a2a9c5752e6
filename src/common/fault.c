/* OSMP_FAULT (fault.h): which event of this process fails. */
#include "common/fault.h"

#include <stdio.h>
#include <string.h>

#include "common/knobs.h"

osmp_atomic32_t osmp__fault_state;
static enum osmp__fault_kind fault_kind;
static long fault_at;
static osmp_atomic32_t seen[OSMP__FAULT_KINDS];

/* This process's rank in its launcher's numbering, or -1. */
static long launcher_rank(void)
{
    static const char *const vars[] = {"OSMP_RUN_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strtol(v, NULL, 10);
    }
    return -1;
}

/* delay:COLLECTIVE.ALGORITHM:USEC[@R] (fault.h osmp__fault_delay) */
static char delay_alg[64];
static unsigned delay_us;

static int parse_delay(const char *v)
{
    const char *colon = strrchr(v, ':'), *at = strchr(v, '@');
    if (!colon || colon == v || (size_t)(colon - v) >= sizeof(delay_alg) || !memchr(v, '.', (size_t)(colon - v)))
        return -1;
    char *end;
    long us = strtol(colon + 1, &end, 10), rank = -1;
    if (us <= 0 || us > 10000000 || end == colon + 1 || (*end && *end != '@')) return -1;
    if (at) {
        char *e2;
        rank = strtol(at + 1, &e2, 10);
        if (e2 == at + 1 || *e2 || rank < 0) return -1;
    }
    if (rank >= 0 && rank != launcher_rank()) return 0;
    snprintf(delay_alg, sizeof(delay_alg), "%.*s", (int)(colon - v), v);
    delay_us = (unsigned)us;
    return 0;
}

static int parse(const char *v)
{
    if (strncmp(v, "delay:", 6) == 0) return parse_delay(v + 6);
    static const char *const names[OSMP__FAULT_KINDS] = {"copy:", "alloc:", "seg:", "decide:"};
    for (int k = 0; k < OSMP__FAULT_KINDS; k++) {
        size_t len = strlen(names[k]);
        if (strncmp(v, names[k], len) != 0) continue;
        char *end;
        long n = strtol(v + len, &end, 10), rank = -1;
        if (n <= 0 || end == v + len || (*end && *end != '@')) return -1;
        if (*end == '@') {
            char *e2;
            rank = strtol(end + 1, &e2, 10);
            if (e2 == end + 1 || *e2 || rank < 0) return -1;
        }
        fault_kind = (enum osmp__fault_kind)k;
        fault_at = rank < 0 || rank == launcher_rank() ? n : 0;
        return 0;
    }
    return -1;
}

int osmp__fault_slow(enum osmp__fault_kind k)
{
    uint32_t st = osmp__load32(&osmp__fault_state);
    if (!st) { /* threads may race here: they compute the same answer */
        const char *v = osmp__knob_str(OSMP_KNOB_FAULT);
        int bad = *v && parse(v);
        if (bad)
            fprintf(stderr,
                    "osmp: OSMP_FAULT=\"%s\" must be copy:N, alloc:N, seg:N, decide:N or "
                    "delay:COLLECTIVE.ALGORITHM:USEC, "
                    "optionally @RANK; "
                    "no fault\n",
                    v);
        st = !bad && *v && (fault_at > 0 || delay_us) ? 2 : 1;
        osmp__store32(&osmp__fault_state, st);
    }
    if (st != 2 || k != fault_kind || !fault_at) return 0;
    if (osmp__fetch_add32(&seen[k], 1) + 1 != (uint32_t)fault_at) return 0;
    /* Said, so that a test knows the event happened (and stops raising N when it does not). */
    static const char *const what[OSMP__FAULT_KINDS] = {"single copy", "allocation", "segment creation/attach",
                                                        "allocation of a team-wide decision"};
    fprintf(stderr, "osmp: OSMP_FAULT: %s %ld of this process fails\n", what[k], fault_at);
    return 1;
}

unsigned osmp__fault_delay(const char **coll_alg)
{
    osmp__fault_slow(OSMP__FAULT_KINDS); /* reads OSMP_FAULT once */
    *coll_alg = delay_alg;
    return delay_us;
}
