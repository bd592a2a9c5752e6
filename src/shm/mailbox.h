/*
 * The team's data path (shm layer, internal).
 *
 * Every participant owns a region of the team segment, first touched by it:
 *   - two mailboxes, UP (towards a root) and DOWN (away from it), each one cache
 *     line that only its owner writes: a step counter, the address of a buffer
 *     exposed for single copy, and up to OSMP_INLINE_MAX bytes of inline data, so
 *     a small message moves one line per hop;
 *   - one wake line per mailbox, where readers that went to sleep on it count
 *     themselves (the futex protocol of wait.c): written by readers only, and only
 *     when they sleep, so the mailbox line keeps a single writer;
 *   - rank 0's region only: the team's "lost" line (everyone may write it, once,
 *     when a participant is lost);
 *   - per direction, a ring of OSMP__MINI_SLOTS mini lines, each a step counter
 *     and up to OSMP__MINI_DATA bytes, for small messages that may run ahead;
 *   - then, from the next page boundary (OSMP__RING_OFFSET), per direction, a
 *     ring of `depth` slots of `chunk` bytes, and at least a page that nobody
 *     touches before the next region (osmp__mb_region_bytes).
 *
 * Memory that grows with use. Creation touches the lines above only (their
 * page-rounded size, about 36 KiB with 64-byte lines: osmp__mb_init_mine); the
 * ring is never touched there. The segment is a fresh tmpfs file, sparse after
 * ftruncate, never reused, so a ring page is allocated when first written, and
 * only its owner writes it: a reader reads a slot only after the owner
 * published the step that filled it (the counters in the lines guard the
 * slots, not their content), so it never faults a hole. A team whose calls
 * need no ring slot (messages in the inline area and the mini lines) keeps its
 * regions at the lines' size; a call that stages through slot k first
 * allocates the pages its chunks cover, on its owner's NUMA node, and they
 * stay for the team's life. Calls rotate through the slots (osmp__slots_take),
 * so small calls alone would touch a page of every slot in time: a call whose
 * blocks every participant knows to be at most OSMP__SHORT_RING_MAX bytes
 * cycles through the first OSMP__SHORT_RING_SLOTS slots per direction only
 * (the short ring: m->depth while it runs, select.c run_choice; alltoallv's
 * small blocks too, alltoall_slots.c), so a team of such calls stays within
 * the lines and 2 x 2 pages (docs/measurements.md, section 14). Any slot
 * mapping is safe: a claim waits for the readers of the slot's last content,
 * whichever call wrote it, and the algorithms run at depth 1 too.
 *
 * Steps and slots. A collective asks the team for a phase (coll.h: a window of
 * steps of fixed width, whatever the counts), numbers its own steps inside it,
 * and names slots explicitly; neither depends on a count another participant
 * may not know (gatherv, alltoallv). A participant publishes "step s done" on a
 * mailbox only after its data for s is in place and its inputs for s are
 * consumed. A slot is written again only after the consumers of its previous
 * content have published the step they were told to (osmp__mb_claim).
 */
#ifndef OSMP_MAILBOX_H
#define OSMP_MAILBOX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "common/atomic.h"
#include "shm/shm.h"
#include "shm/wait.h"

/* Inline data: what is left of the line after the counter and the address. */
#define OSMP_INLINE_MAX (OSMP_CACHE_LINE - 16)

struct osmp__chan {
    osmp_atomic64_t seq; /* last step published in this direction */
    uint64_t addr;       /* buffer exposed for single copy in the published step */
    char inline_data[OSMP_INLINE_MAX];
} __attribute__((aligned(OSMP_CACHE_LINE)));
_Static_assert(sizeof(struct osmp__chan) == OSMP_CACHE_LINE, "one line per mailbox");

struct osmp__wake {
    osmp_atomic32_t waiters; /* readers asleep on the mailbox's seq */
} __attribute__((aligned(OSMP_CACHE_LINE)));

/* Team-wide state, in rank 0's region (every participant maps the whole segment). */
struct osmp__shared {
    /* 0, or the first failure: 1 + rank in the low 24 bits (0xffffff: a rank
     * beyond), -status in the high 8: OSMP_ERR_PEER_LOST for a process that
     * died, else the status of the participant's own failure (no memory, ...).
     * One word, so that whoever sees the loss sees its reason. */
    osmp_atomic32_t lost;
} __attribute__((aligned(OSMP_CACHE_LINE)));

static inline uint32_t osmp__lost_word(int rank, int status)
{
    uint32_t r = rank >= 0 && rank < 0xfffffe ? (uint32_t)rank + 1 : 0xffffff;
    return r | (uint32_t)(-status & 0xff) << 24;
}

/* Mini lines: a ring per direction for small messages that may run ahead
 * (tree passes, gather, scatter). Each line has its own step counter beside
 * the data, so a reader takes one line transfer per message, as with the
 * mailbox line, while the owner may write this many messages before the first
 * one is read (an MPI library's eager sends let a root run ahead the same way).
 * The depth balances the region's size against switches: participants that
 * share a core change places only when the one running must wait, so the
 * deeper the ring, the fewer switches per call. Their records (mini_rec) live
 * apart from struct osmp__mbox, whose state every call reads: inline, they
 * would spread it over more pages (docs/measurements.md, A9, A10). */
#define OSMP__MINI_SLOTS 256

struct osmp__mini {
    osmp_atomic64_t seq; /* the step whose message data holds */
    char data[OSMP_CACHE_LINE - 8];
} __attribute__((aligned(OSMP_CACHE_LINE)));
_Static_assert(sizeof(struct osmp__mini) == OSMP_CACHE_LINE && OSMP_CACHE_LINE - 8 >= OSMP_INLINE_MAX,
               "one line per mini message, as large as the inline data");

/* A message of up to OSMP__MINI_LINES_MAX lines (the tree passes' messages:
 * coll/tree.c; scatter's and gather's blocks take up to OSMP__MINI_LINES_BLOCK):
 * consecutive mini lines from an even index, each with its data piece and its
 * own counter, published last line last. The reader waits on the last line,
 * then reads the others: an aligned pair of lines travels together (the L2's
 * adjacent-line prefetch), so a 49-112 byte block costs one line latency where
 * a ring slot costs two (its owner's counter, then the data). A third line is
 * a pair of its own: the reader prefetches the first pair before it waits on
 * the third, so both pairs come at once when the message is there already.
 * No more lines: a fourth does not beat the slot, and scatter's and gather's
 * blocks lose in three (a scatter's messages follow each other, so all but the
 * first start off a pair). The reader polls the last line only: each poll takes
 * a line back from its writer (docs/measurements.md, A5-A7). */
#define OSMP__MINI_DATA (OSMP_CACHE_LINE - 8)
#define OSMP__MINI_LINES_MAX 3
#define OSMP__MINI_LINES_BLOCK 2
static inline int osmp__mini_lines(size_t bytes)
{
    return (int)((bytes + OSMP__MINI_DATA - 1) / OSMP__MINI_DATA);
}
/* Bytes of such a message in its line j. */
static inline size_t osmp__mini_piece(size_t bytes, int j)
{
    size_t off = (size_t)j * OSMP__MINI_DATA;
    return bytes - off < OSMP__MINI_DATA ? bytes - off : OSMP__MINI_DATA;
}

struct osmp__region {
    struct osmp__chan chan[2];
    struct osmp__wake wake[2];
    struct osmp__shared shared; /* used in rank 0's region only */
    /* On a 128-byte boundary: a two-line message (below) starting at an even
     * index fills one aligned pair, which the reader's cache fetches together. */
    struct osmp__mini mini[2][OSMP__MINI_SLOTS] __attribute__((aligned(2 * OSMP_CACHE_LINE)));
};

enum { OSMP__UP = 0, OSMP__DOWN = 1 };

/* Where the ring starts in a region: the lines rounded up to a (4 KiB) page, so
 * that a chunk of up to a page at a slot's start touches one page, not two
 * (calls of up to 4 KiB: docs/measurements.md, section 14). */
#define OSMP__RING_ALIGN 4096
#define OSMP__RING_OFFSET \
    ((sizeof(struct osmp__region) + OSMP__RING_ALIGN - 1) / OSMP__RING_ALIGN * OSMP__RING_ALIGN)

#define OSMP__MAX_DEPTH 64
/* The short ring: a call whose blocks are at most OSMP__SHORT_RING_MAX bytes
 * cycles through the ring's first OSMP__SHORT_RING_SLOTS slots per direction
 * (select.c run_choice), so such calls touch at most that many pages of the
 * ring per direction where its messages fit a slot's first page. */
#define OSMP__SHORT_RING_SLOTS 2
#define OSMP__SHORT_RING_MAX 4096
#define OSMP__DEFAULT_DEPTH 8 /* OSMP_PIPELINE_DEPTH=auto without a tune table */
#define OSMP__SLOT_INLINE (-1) /* the mailbox line's inline area instead of a ring slot */
/* Mini line i (up to OSMP__MINI_DATA bytes, its own counter) instead of a ring slot. */
#define OSMP__SLOT_MINI(i) (-2 - (i))
#define OSMP__IS_MINI(slot) ((slot) < OSMP__SLOT_INLINE)

/* Who must have consumed a slot before its owner writes it again. */
struct osmp__slot_rec {
    int written;  /* the slot has content whose consumers must be waited for */
    uint64_t seq; /* step the consumers publish when done with the last write */
    const int *consumers;
    int nconsumers;
    int one; /* storage when there is a single consumer */
    int dir; /* the consumers signal on their own counter of this direction */
};

/* One participant's view of the team's mailboxes. */
struct osmp__mbox {
    int rank, size;
    void *seg;
    size_t region_size;
    size_t chunk; /* bytes per ring slot */
    size_t stream_min; /* osmp__mb_fill writes this many bytes and more with non-temporal stores */
    int ring_depth; /* slots per direction in the region (its layout) */
    int short_depth; /* the short ring's: min(OSMP__SHORT_RING_SLOTS, ring_depth) */
    int depth;      /* slots per direction the running call cycles through: ring_depth, or the short ring's */
    uint32_t depth_mask; /* depth - 1 where depth is a power of two (the default), else 0 (osmp__mb_ring) */
    struct osmp__wait_policy wait;
    const pid_t *pids;          /* for liveness checks while waiting */
    const unsigned char *local; /* local[r]: rank r lives in this process */
    int failed;                 /* OSMP_ERR_PEER_LOST once any wait gave up: the steps no longer agree */
    /* [dir * size + rank] (osmp__mb_seen_at): a value rank's counter of dir is
     * known to have reached, so that a claim whose consumers are known to be
     * done, or a wait for a step already seen, loads no line of theirs
     * (counters only grow). Every team has it. */
    uint64_t *seen;
    /* The current call's phase (coll.h osmp__phase): every step of an earlier
     * call is below it, and so published, as a call publishes what it claims. */
    uint64_t call_base;
    /* [dir][i]: my mini lines' records, allocated apart (OSMP__MINI_SLOTS). Every team has them. */
    struct osmp__slot_rec (*mini_rec)[OSMP__MINI_SLOTS];
    struct osmp__slot_rec rec[2][OSMP__MAX_DEPTH + 1]; /* [dir][slot], last = inline */
    /* The counter the last unmet poll (osmp__mb_poll*) looked at: what a
     * resumable call waits for when it returns "not yet" (osmp__mb_wait_pend). */
    struct {
        osmp_atomic64_t *ctr;
        osmp_atomic32_t *waiters;
        uint64_t step;
        int rank;
    } pend;
};

/* Bytes of one region for these ring dimensions, whole pages, a page beyond the ring included. */
size_t osmp__mb_region_bytes(size_t chunk, int depth);

static inline struct osmp__region *osmp__mb_region(const struct osmp__mbox *m, int rank)
{
    return (struct osmp__region *)((char *)m->seg + (size_t)rank * m->region_size);
}

/* Publish step on my counter of direction dir (and wake its sleepers). */
static inline void osmp__mb_publish(struct osmp__mbox *m, int dir, uint64_t step)
{
    struct osmp__region *r = osmp__mb_region(m, m->rank);
    osmp__publish(&r->chan[dir].seq, &r->wake[dir].waiters, step);
}

static inline struct osmp__chan *osmp__mb_chan(const struct osmp__mbox *m, int rank, int dir)
{
    return &osmp__mb_region(m, rank)->chan[dir];
}

/* Data of `rank`'s mailbox dir in slot (a ring index, OSMP__SLOT_INLINE or OSMP__SLOT_MINI(i)). */
static inline char *osmp__mb_slot(const struct osmp__mbox *m, int rank, int dir, int slot)
{
    if (slot == OSMP__SLOT_INLINE) return osmp__mb_chan(m, rank, dir)->inline_data;
    if (OSMP__IS_MINI(slot)) return osmp__mb_region(m, rank)->mini[dir][OSMP__SLOT_MINI(0) - slot].data;
    return (char *)osmp__mb_region(m, rank) + OSMP__RING_OFFSET +
           ((size_t)dir * (size_t)m->ring_depth + (size_t)slot) * m->chunk;
}

/* The slots per direction the running call cycles through (1 .. ring_depth):
 * osmp__mb_ring maps its k-th chunk to one of them. */
static inline void osmp__mb_set_depth(struct osmp__mbox *m, int depth)
{
    m->depth = depth;
    m->depth_mask = (depth & (depth - 1)) == 0 ? (uint32_t)depth - 1 : 0;
}

static inline int osmp__mb_ring(const struct osmp__mbox *m, uint64_t k)
{
    /* (a 64-bit division costs a small call through the slots more than its copy) */
    return m->depth_mask ? (int)(k & m->depth_mask) : (int)(k % (uint64_t)m->depth);
}

/* Zero my region's lines (first touch: their pages land on my NUMA node) and
 * start my counters at `step`. The ring is left alone: its pages come with its
 * first writes, mine (above). */
void osmp__mb_init_mine(struct osmp__mbox *m, uint64_t step);

/* osmp__mb_wait (below) once the counter must be loaded. */
int osmp__mb_wait_slow(struct osmp__mbox *m, int rank, int dir, uint64_t step);
/* osmp__mb_wait_slot (below) once the message is not there at the first look. */
int osmp__mb_wait_slot_slow(struct osmp__mbox *m, int rank, int dir, int slot, uint64_t step);
void osmp__mb_publish_slot(struct osmp__mbox *m, int dir, int slot, uint64_t step);
/* Publish my k consecutive mini lines from ring index `first` (taken mod
 * OSMP__MINI_SLOTS) once their data is written, the last one last (one fence,
 * one look for sleepers): a reader waits on that one (osmp__mb_wait_slot), and
 * seeing it is seeing the others. Inline, as osmp__publish: every small
 * rooted call and tree pass ends with one. */
static inline void osmp__mb_publish_minis(struct osmp__mbox *m, int dir, uint64_t first, int k, uint64_t step)
{
    struct osmp__region *r = osmp__mb_region(m, m->rank);
    for (int j = 0; j < k - 1; j++)
        osmp__store_release(&r->mini[dir][(first + (uint64_t)j) % OSMP__MINI_SLOTS].seq, step);
    osmp__publish(&r->mini[dir][(first + (uint64_t)k - 1) % OSMP__MINI_SLOTS].seq, &r->wake[dir].waiters,
                  step);
}
/* A message of `bytes` (osmp__mini_lines of them) in my mini lines from ring
 * index `first`: claim each line for `consumer`, write its piece, publish them
 * all at `step`; the consumer says it is done with them by publishing `step`
 * on its counter of signal_dir. OSMP_OK, or the failure that made a claim give
 * up. */
int osmp__mb_send_minis(struct osmp__mbox *m, int dir, uint64_t first, int consumer, int signal_dir, uint64_t step,
                        const void *data, size_t bytes);
/* The same message in `rank`'s lines, once published at `step`, into out. */
int osmp__mb_recv_minis(struct osmp__mbox *m, int rank, int dir, uint64_t first, uint64_t step, void *out,
                        size_t bytes);
/* A local failure inside a collective (no memory, a failed single copy): this
 * participant will not take the steps the others wait for, so it gives up on
 * the team for everyone, through the team's "lost" line (naming itself), before
 * publishing anything the failure spoiled. The others' waits return
 * OSMP_ERR_PEER_LOST within a nap; this participant's later calls too. Returns
 * rc, which the failing call returns. */
int osmp__mb_fail(struct osmp__mbox *m, int rc);
/* The team's first failure, if any: the participant (-1 if its rank did not
 * fit the line) and the status it stands for; OSMP_OK and rank -1 if none. */
int osmp__mb_failure(struct osmp__mbox *m, int *rank);

/* Where I keep a value rank's counter of dir is known to have reached (the
 * last a wait or claim of mine loaded, acquired), and that value. */
static inline uint64_t *osmp__mb_seen_at(const struct osmp__mbox *m, int rank, int dir)
{
    return &m->seen[(size_t)dir * (size_t)m->size + (size_t)rank];
}
static inline uint64_t osmp__mb_seen(const struct osmp__mbox *m, int rank, int dir)
{
    return *osmp__mb_seen_at(m, rank, dir);
}

/* Wait until `rank` has published `step` in direction dir. OSMP_ERR_PEER_LOST
 * if it died (or another participant gave up on the team) first; m->failed is
 * then set. Inline where what I saw last suffices (no call in a small call's
 * path: the entry points' layers cost it more than its loads). */
static inline int osmp__mb_wait(struct osmp__mbox *m, int rank, int dir, uint64_t step)
{
    if (osmp__seq_reached(osmp__mb_seen(m, rank, dir), step)) return 0; /* OSMP_OK; acquired when it was loaded */
    return osmp__mb_wait_slow(m, rank, dir, step);
}

/* The same for a message in `slot`: a mini line's own counter, else the
 * mailbox's. Inline where the mini line holds it already (a reader behind its
 * writer: calls back to back). */
static inline int osmp__mb_wait_slot(struct osmp__mbox *m, int rank, int dir, int slot, uint64_t step)
{
    if (OSMP__IS_MINI(slot)) {
        osmp_atomic64_t *seq = &osmp__mb_region(m, rank)->mini[dir][OSMP__SLOT_MINI(0) - slot].seq;
        if (osmp__seq_reached(osmp__load_acquire(seq), step)) return 0;
    }
    return osmp__mb_wait_slot_slow(m, rank, dir, slot, step);
}

/* Write n bytes of a message into my ring slot dst (as osmp__mb_claim gave it).
 * From m->stream_min bytes (OSMP_STREAM_MIN; a far team: coll/select.c) with
 * non-temporal stores: an ordinary store must first take the line back from
 * the reader's cache, which read the slot's previous content, and across
 * packages that costs a crossing per line on top of the reader's own; the
 * streaming store sends the line to memory, where the reader fetches it, one
 * crossing in all (docs/design.md, "Streaming stores"). Returns the bytes
 * streamed. */
static inline size_t osmp__mb_fill(const struct osmp__mbox *m, void *dst, const void *src, size_t n)
{
    if (n >= m->stream_min) return osmp__stream_copy(dst, src, n);
    memcpy(dst, src, n);
    return 0;
}

/* ---- resumable calls: the waits above as polls that never block ---- */

/* Has `rank` published `step` on dir? 1 (acquired, and remembered in seen) or
 * 0, with the counter left in m->pend for osmp__mb_wait_pend. */
static inline int osmp__mb_poll_ctr(struct osmp__mbox *m, int rank, int dir, osmp_atomic64_t *ctr, uint64_t step,
                                    uint64_t *seen)
{
    uint64_t v = osmp__load_acquire(ctr);
    if (osmp__seq_reached(v, step)) {
        if (seen) *seen = v;
        return 1;
    }
    m->pend.ctr = ctr;
    m->pend.waiters = &osmp__mb_region(m, rank)->wake[dir].waiters;
    m->pend.step = step;
    m->pend.rank = rank;
    return 0;
}
static inline int osmp__mb_poll(struct osmp__mbox *m, int rank, int dir, uint64_t step)
{
    if (osmp__seq_reached(osmp__mb_seen(m, rank, dir), step)) return 1;
    return osmp__mb_poll_ctr(m, rank, dir, &osmp__mb_chan(m, rank, dir)->seq, step, osmp__mb_seen_at(m, rank, dir));
}
static inline int osmp__mb_poll_slot(struct osmp__mbox *m, int rank, int dir, int slot, uint64_t step)
{
    if (!OSMP__IS_MINI(slot)) return osmp__mb_poll(m, rank, dir, step);
    return osmp__mb_poll_ctr(m, rank, dir, &osmp__mb_region(m, rank)->mini[dir][OSMP__SLOT_MINI(0) - slot].seq,
                             step, NULL);
}
/* Block (spin, yield, sleep, liveness: wait.c) on what the last unmet poll
 * looked at. OSMP_OK once it moved there, or OSMP_ERR_PEER_LOST (m->failed). */
int osmp__mb_wait_pend(struct osmp__mbox *m);
/* Without blocking: has participant `rank` (a request's: the one the last
 * unmet poll waited for) died, or has
 * anyone given up on the team? OSMP_ERR_PEER_LOST (m->failed) or OSMP_OK. */
int osmp__mb_check_peer(struct osmp__mbox *m, int rank);
/* A single copy from participant `rank` failed: OSMP_ERR_PEER_LOST if it
 * died (the team's failure from then on), else OSMP_ERR_COPY. */
int osmp__mb_copy_failed(struct osmp__mbox *m, int rank);

/* A claim's rare part (mailbox.c): a consumer of the slot's last content is
 * not known to be done; wait for it. 0, or -1 when a consumer was lost. */
int osmp__mb_claim_wait(struct osmp__mbox *m, int dir, int slot, const struct osmp__slot_rec *rec);

/* Claim my slot (as osmp__mb_slot names it) of direction dir, waiting
 * until the consumers of its previous content are done. The new content's
 * consumers will say they are done by publishing signal_step on their own
 * counter of direction signal_dir. NULL when a consumer was lost. */
static inline char *osmp__mb_claim(struct osmp__mbox *m, int dir, int slot, const int *consumers, int n,
                                   int signal_dir, uint64_t signal_step)
{
    struct osmp__slot_rec *rec = slot >= 0                    ? &m->rec[dir][slot]
                                 : slot == OSMP__SLOT_INLINE ? &m->rec[dir][OSMP__MAX_DEPTH]
                                                             : &m->mini_rec[dir][OSMP__SLOT_MINI(0) - slot];
    for (int i = 0; rec->written && i < rec->nconsumers; i++) /* the usual case: every one known done */
        if (!osmp__seq_reached(osmp__mb_seen(m, rec->consumers[i], rec->dir), rec->seq)) {
            if (osmp__mb_claim_wait(m, dir, slot, rec)) return NULL;
            break;
        }
    rec->written = 1;
    rec->seq = signal_step;
    rec->dir = signal_dir;
    rec->nconsumers = n;
    if (n == 1) {
        rec->one = consumers[0];
        rec->consumers = &rec->one;
    } else {
        rec->consumers = consumers;
    }
    return osmp__mb_slot(m, m->rank, dir, slot);
}

/* Would osmp__mb_claim of this slot return without waiting? (polls the
 * consumers of its last content that are not known to be done) */
static inline int osmp__mb_claim_ready(struct osmp__mbox *m, int dir, int slot)
{
    const struct osmp__slot_rec *rec = slot >= 0                    ? &m->rec[dir][slot]
                                       : slot == OSMP__SLOT_INLINE ? &m->rec[dir][OSMP__MAX_DEPTH]
                                                                   : &m->mini_rec[dir][OSMP__SLOT_MINI(0) - slot];
    for (int i = 0; rec->written && i < rec->nconsumers; i++)
        if (!osmp__mb_poll(m, rec->consumers[i], rec->dir, rec->seq)) return 0;
    return 1;
}

#endif
