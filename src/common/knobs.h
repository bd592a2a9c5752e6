/*
 * Every knob of OSMP: one table, each entry an environment variable OSMP_<NAME>
 * with a default and one line of documentation (osmp-topo --knobs prints it).
 */
#ifndef OSMP_KNOBS_H
#define OSMP_KNOBS_H

#include <stddef.h>

#include "osmp.h"

/* X(NAME, default, doc) */
#define OSMP_KNOB_MAP(X)                                                                                     \
    X(HIERARCHY, "auto", "hierarchy spec of every team (auto: chosen from the machine; see osmp-topo)")     \
    X(TOPOLOGY, "", "plan on this hwloc XML file (or synthetic:STRING) instead of the machine we run on; "    \
                    "measured: this machine as osmp-probe --save measured it "                                \
                    "($XDG_CACHE_HOME/osmp/topology-HOST.xml, else ~/.cache/osmp/...); osmp-probe's XML of "   \
                    "this host counts as this machine (binding, the current core)")                           \
    X(CHUNK_SIZE, "auto", "bytes per pipeline chunk in a participant's buffers (64 .. 16777216), or auto: "  \
                          "the tune table's (osmp-tune), else 131072 for teams of up to 4 participants, "     \
                          "32768 for larger ones")                                                            \
    X(PIPELINE_DEPTH, "auto", "chunks in flight per participant and direction (1 .. 64), or auto: the tune "  \
                              "table's (osmp-tune), else 8")                                                \
    X(SINGLE_COPY, "auto", "copy large data once from the source buffer: auto (CMA between processes, "     \
                           "loads between threads), cma, none")                                              \
    X(SINGLE_COPY_MIN, "auto", "smallest message (count x element size of the call, bytes) from which "       \
                               "every collective with a single-copy path reads the source buffer directly "   \
                               "(the copy OSMP_SINGLE_COPY chooses) instead of staging it through the "       \
                               "shared pipeline, in teams that span several processes (CMA); auto: the tune " \
                               "table's (osmp-tune), else from the caches hwloc reports: for allgather(v) "   \
                               "and alltoall(v), where every rank receives as much as it sends and staging "  \
                               "adds a copy on every core, blocks whose n^2 fill 5/16 of the last-level "     \
                               "caches the team spans, 131072 at least; 4 x the last-level cache of a "       \
                               "participant for the others (33554432 where hwloc knows no cache size); "     \
                               "16384 for allgather(v) and alltoall(v) in a team whose participants share "  \
                               "no last-level cache (for every collective there with OSMP_STREAM_MIN=never)") \
    X(STREAM_MIN, "auto", "smallest chunk (bytes) a participant writes into its ring slots with non-temporal "   \
                          "stores, which send the lines to memory instead of first fetching them back from "  \
                          "the reader's cache: auto (1024 in a team whose participants share no "            \
                          "last-level cache, else never), an integer in 0..2^40, or never")                  \
    X(SINGLE_COPY_MIN_THREADS, "49", "the same for teams whose participants are threads of one process "       \
                                     "(plain loads; the default: every message larger than a mailbox line's " \
                                     "inline data; reduce stages between threads at every size)")             \
    X(SPIN, "4000", "polls of a flag before yielding the core")                                             \
    X(PUBLISH_FENCE, "auto", "auto: a publication issues no memory fence where the kernel lets the process "  \
                             "register for membarrier's global expedited barrier, which a participant about " \
                             "to sleep then issues instead (shm/wait.c); always: every publication fences") \
    X(YIELDS, "50", "sched_yield calls before sleeping on a futex, in teams with more participants than "   \
                    "CPUs (the others sleep after spinning: a yield hands the core to other programs)")      \
    X(PROGRESS, "auto", "who advances nonblocking collectives between their participants' OSMP calls (while " \
                        "they compute or block in another library): auto (a thread of OSMP's, started by the " \
                        "first post, asleep when nothing can move; not where the caller's runtime advances "  \
                        "them itself: libosmp_mpi under Open MPI, or MPICH 4.3 and later), thread (that "     \
                        "thread everywhere, from a request's first step: overlap with computation), or none " \
                        "(only OSMP calls: posts, tests, waits and every call on their team)")               \
    X(PROGRESS_CPU, "", "the CPU (as the OS numbers it) OSMP_PROGRESS=thread's thread runs on; empty: "        \
                        "wherever the process may run")                                                       \
    X(JOIN_TIMEOUT, "60", "seconds a participant waits for the others to join a team under osmp-run or as "  \
                          "threads before failing with OSMP_ERR_TIMEOUT (0: forever)")                      \
    X(CHECK_ARGS, "0", "1: every collective first compares a checksum of its arguments across the team and " \
                       "fails with OSMP_ERR_MISMATCH where they differ (debugging; one more small allreduce)") \
    X(STEP_START, "0", "testing: the value the team's sequence counters start from (e.g. near 2^64 to "       \
                       "exercise wrap-around)")                                                              \
    X(TRACE, "", "write a transfer trace: each participant writes PREFIX.<team rank>.jsonl, one line per "   \
                 "(call, source, destination) of payload copied and per call of data reduced (docs/design.md)")     \
    X(FAULT, "", "testing: copy:N, alloc:N or seg:N makes this process's N-th single copy, allocation "     \
                 "(team creation, collectives) or segment creation/attach fail; decide:N its N-th allocation of " \
                 "a decision at team creation (the MST rule, the caches the team spans); "                 \
                 "delay:COLLECTIVE.ALGORITHM:USEC "                                                        \
                 "makes every call of that algorithm sleep USEC first (osmp-tune's test); @R: only in rank R " \
                 "(osmp-run's, or the MPI launcher's)")                                                  \
    X(VERBOSE, "0", "libosmp_mpi: 1 prints why calls fall back (once per reason) and per-call counts at "    \
                    "MPI_Finalize")                                                                          \
    X(MPI_DISABLE, "0", "libosmp_mpi: 1 passes every call to the MPI library; or a list of operations to "   \
                        "pass, e.g. allreduce,bcast")                                                        \
    X(MPI_ALLOC_MEM, "1", "libosmp_mpi: 1 makes MPI_Alloc_mem return osmp_alloc memory, which the other "     \
                          "processes of a collective read in place; 0 leaves MPI_Alloc_mem to the MPI library")     \
    X(MPI_SHARE_TEAMS, "1", "libosmp_mpi: 1 lets communicators over the same processes in the same order "   \
                            "share one team (not under MPI_THREAD_MULTIPLE); 0 gives each its own")         \
    X(TUNE_FILE, "", "the tune table osmp-tune wrote (docs/tuning.md): per collective, team size and block "  \
                     "size the algorithm, or mpi (libosmp_mpi passes those calls to the MPI library); empty: "   \
                     "this machine's in the per-machine cache ($XDG_CACHE_HOME/osmp/tune-HOST.txt, else "       \
                     "~/.cache/osmp/...) if there is one; none: the built-in selection only")                \
    X(MPI_MAX_TEAMS, "64", "libosmp_mpi: teams a process may hold; communicators over further sets of "     \
                           "processes go to MPI (OSMP_VERBOSE says so)")                                      \
    X(PROFILE, "", "libosmp_mpi: at MPI_Finalize write FILE, the bytes MPI_COMM_WORLD ranks sent each other "     \
                    "(N lines of N numbers, row = sender; point-to-point plus what OSMP's collectives copied), and " \
                    "FILE.json (the two apart, with message and call counts)")                                   \
    X(MAP, "", "libosmp_mpi: FILE from osmp-map --format cores: MPI_Init binds the r-th rank of each node to "    \
                "the r-th core listed (logical cores of this machine)")                                         \
    X(MPI_PSEUDO_NODES, "1", "libosmp_mpi: split each node into this many pseudo-nodes (tests the "         \
                             "inter-node path on one machine)")

/* OSMP_SINGLE_COPY_MIN=auto (its doc line above), from the caches hwloc
 * reports (coll/select.c thresholds); an osmp-tune table replaces them with
 * what it measured. From malloc buffers CMA pays only once its single copy
 * saves a copy that no other core would have made anyway. In bcast, gather,
 * scatter and reduce the staged copies run on two cores at once, pipelined,
 * through their caches: the slots win until the message is several times the
 * last-level cache it streams through (here 4: measured as 32 MiB on a host
 * with an 8 MiB L3), OSMP__SINGLE_COPY_MIN_AUTO where hwloc knows no cache
 * size. In allgather and alltoall every core copies what it receives, so
 * staging costs each a second copy: the slots win while the call's data stays
 * in cache, CMA once the n^2 blocks the team receives fill
 * OSMP__SINGLE_COPY_EXCHANGE_LLC of the last-level caches it spans (with the
 * slots they crowd them; 2.5 MiB of 8 MiB measured, OSMP__SINGLE_COPY_EXCHANGE_TEAM
 * where unknown), but never below OSMP__SINGLE_COPY_EXCHANGE_FLOOR, where
 * CMA's cost per call (the kernel pins and walks the pages) eats the copy it
 * saves (docs/measurements.md, "Single copy and its thresholds"). */
#define OSMP__SINGLE_COPY_LLCS 4u
#define OSMP__SINGLE_COPY_MIN_AUTO 33554432L
#define OSMP__SINGLE_COPY_EXCHANGE_LLC 0.3125
#define OSMP__SINGLE_COPY_EXCHANGE_TEAM 2621440L /* n^2 x block */
/* A team whose participants share no last-level cache (coll/select.c): every line
 * staged through a slot crosses twice, the writer taking it back from the
 * reader's cache and the reader fetching it, where a single copy reads the
 * source once and a line written with streaming stores crosses once, through
 * memory. There the exchanges copy once from OSMP__SINGLE_COPY_MIN_FAR (the
 * others too where their slots are not streamed), and OSMP_STREAM_MIN=auto
 * streams from OSMP__STREAM_MIN_FAR: in smaller chunks the slot's counter
 * line, which crosses both ways regardless, outweighs the lines saved. These
 * two are counts of lines, not cache sizes: 256 and 16 lines. */
#define OSMP__SINGLE_COPY_MIN_FAR 16384L
#define OSMP__STREAM_MIN_FAR 1024L
/* An exchange's own block (osmp__copy_own in coll.h) is written with streaming
 * stores once n^2 x block reaches half the last-level cache the team sits
 * under (coll/select.c team_llc; this, where hwloc knows no cache size): the
 * n^2 blocks in and the n^2 out then fill it, and plain stores would evict what
 * the peers still read; below, streaming costs more than it saves
 * (docs/measurements.md, "Single copy and its thresholds", E9, E10). */
#define OSMP__OWN_STREAM_TEAM 4194304L
#define OSMP__SINGLE_COPY_EXCHANGE_FLOOR 131072L

/* After them, one OSMP_<OP>_ALG per collective of OSMP_COLL_MAP (osmp.h), whose
 * values are the names in that collective's algorithm table (coll/select.c),
 * then one OSMP_HIERARCHY_<OP>: the spec that collective plans with. */
enum osmp_knob {
#define OSMP__KNOB_ENUM(name, dflt, doc) OSMP_KNOB_##name,
    OSMP_KNOB_MAP(OSMP__KNOB_ENUM)
#undef OSMP__KNOB_ENUM
#define OSMP__KNOB_ALG_ENUM(NAME, name, flags) OSMP_KNOB_##NAME##_ALG,
        OSMP_COLL_MAP(OSMP__KNOB_ALG_ENUM)
#undef OSMP__KNOB_ALG_ENUM
#define OSMP__KNOB_HIER_ENUM(NAME, name, flags) OSMP_KNOB_HIERARCHY_##NAME,
            OSMP_COLL_MAP(OSMP__KNOB_HIER_ENUM)
#undef OSMP__KNOB_HIER_ENUM
                OSMP_KNOB_COUNT
};
#define OSMP_KNOB_ALG(coll) ((enum osmp_knob)(OSMP_KNOB_BARRIER_ALG + (int)(coll)))
#define OSMP_KNOB_HIERARCHY_OF(coll) ((enum osmp_knob)(OSMP_KNOB_HIERARCHY_BARRIER + (int)(coll)))

/* The value (environment or default); never NULL. The environment is read
 * once, at the first call. */
const char *osmp__knob_str(enum osmp_knob k);
/* Read the environment again (tests that change it between checks). */
void osmp__knobs_reread(void);
/* An integer knob in [lo, hi]; on a malformed or out-of-range value, writes a
 * one-line reason into err and returns -1. */
long osmp__knob_long(enum osmp_knob k, long lo, long hi, char *err, size_t err_len);
/* The same for knobs whose bad value must not stop anything: on a malformed
 * or out-of-range value, prints one line naming the variable, the value and
 * the default (once per knob and process) and returns the default. */
long osmp__knob_long_or_default(enum osmp_knob k, long lo, long hi);
/* For knobs checked by their reader (OSMP_<OP>_ALG: osmp__alg_parse): one
 * line "osmp: <why>; using the default <default>" once per knob and process;
 * the caller then uses the default. */
void osmp__knob_bad(enum osmp_knob k, const char *why);
/* The knob's variable name (OSMP_...) and default. */
const char *osmp__knob_name(enum osmp_knob k);
const char *osmp__knob_default(enum osmp_knob k);

#endif
