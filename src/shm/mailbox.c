/* The team's data path: waiting on, publishing and claiming mailboxes (mailbox.h). */
#include "shm/mailbox.h"

#include <string.h>

#include "common/machine.h"
#include "osmp.h"
#include "shm/shm.h"

size_t osmp__mb_region_bytes(size_t chunk, int depth)
{
    size_t page = osmp__page_size();
    /* A page after the ring, never touched (sparse: address space only). The
     * layout before issue 39 left 3.6 KiB there; with the ring page-aligned
     * and ending exactly where the next region starts, coll-check at 11 and 16
     * processes failed (allgather in place: a peer's block wrong), with a page
     * there it passes, and a PROT_NONE page there is never accessed. Not
     * understood yet: kept until it is. */
    return (OSMP__RING_OFFSET + 2 * (size_t)depth * chunk + page + page - 1) / page * page;
}

void osmp__mb_init_mine(struct osmp__mbox *m, uint64_t step)
{
    struct osmp__region *my = osmp__mb_region(m, m->rank);
    /* The lines only: the ring's pages stay holes of the fresh segment until I
     * first write a slot (mailbox.h, "Memory that grows with use"). */
    memset(my, 0, sizeof(*my));
    my->chan[OSMP__UP].seq = my->chan[OSMP__DOWN].seq = step;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < OSMP__MINI_SLOTS; i++) my->mini[d][i].seq = step;
    for (int i = 0; m->seen && i < 2 * m->size; i++) m->seen[i] = step;
}

/* Asked while sleeping on `rank`: has anyone given up on the team, or has
 * `rank` died? A dead peer is noticed within a few milliseconds; its loss is
 * then written into the team's shared line, so that everyone else (also those
 * waiting on live peers that will never publish again) gives up within one
 * more millisecond. */
struct peer_wait {
    struct osmp__mbox *m;
    int rank;
    unsigned naps;
};

static int peer_check(void *ctx)
{
    struct peer_wait *w = ctx;
    osmp_atomic32_t *lost = &osmp__mb_region(w->m, 0)->shared.lost;
    if (osmp__load32(lost)) return OSMP_ERR_PEER_LOST;
    /* Threads of this process die with it; other processes are polled every 4 naps. */
    if (w->m->local[w->rank] || ++w->naps % 4 || osmp__live_alive(w->m->pids[w->rank])) return OSMP_OK;
    osmp__cas32(lost, 0, osmp__lost_word(w->rank, OSMP_ERR_PEER_LOST));
    return OSMP_ERR_PEER_LOST;
}

static int wait_on(struct osmp__mbox *m, int rank, int dir, osmp_atomic64_t *ctr, uint64_t step,
                   const struct osmp__wait_policy *policy, uint64_t *reached)
{
    struct peer_wait w = {m, rank, 0};
    int rc = osmp__wait_reached(ctr, &osmp__mb_region(m, rank)->wake[dir].waiters, step, policy, peer_check, &w,
                                reached);
    if (rc) m->failed = rc;
    return rc;
}

/* What a wait saw is known from then on (seen: counters only grow), so a wait
 * for a step up to it loads nothing. A reader behind its writer (ring slots back
 * to back) then takes one line transfer per message, the data, instead of two
 * in a row, the counter the writer just moved on and then the data; and a later
 * claim whose consumer is `rank` on dir (the direct exchange's line of two
 * calls back, read in the call between) loads no line of theirs. */
int osmp__mb_wait_slow(struct osmp__mbox *m, int rank, int dir, uint64_t step)
{
    return wait_on(m, rank, dir, &osmp__mb_chan(m, rank, dir)->seq, step, &m->wait, osmp__mb_seen_at(m, rank, dir));
}

/* A sleeper on a mini line counts itself on its direction's wake line, as one
 * on the mailbox: the owner's publication of either checks the same counter. */
int osmp__mb_wait_slot_slow(struct osmp__mbox *m, int rank, int dir, int slot, uint64_t step)
{
    if (!OSMP__IS_MINI(slot)) return osmp__mb_wait(m, rank, dir, step);
    return wait_on(m, rank, dir, &osmp__mb_region(m, rank)->mini[dir][OSMP__SLOT_MINI(0) - slot].seq, step,
                   &m->wait, NULL);
}

int osmp__mb_wait_pend(struct osmp__mbox *m)
{
    struct peer_wait w = {m, m->pend.rank, 0};
    int rc = osmp__wait_reached(m->pend.ctr, m->pend.waiters, m->pend.step, &m->wait, peer_check, &w, NULL);
    if (rc) m->failed = rc;
    return rc;
}

int osmp__mb_check_peer(struct osmp__mbox *m, int rank)
{
    struct peer_wait w = {m, rank, 3}; /* (3: the process is asked now, not after four naps) */
    int rc = m->failed ? m->failed : peer_check(&w);
    if (rc) m->failed = rc;
    return rc;
}

int osmp__mb_copy_failed(struct osmp__mbox *m, int rank)
{
    if (osmp__copy_gone()) {
        osmp__cas32(&osmp__mb_region(m, 0)->shared.lost, 0, osmp__lost_word(rank, OSMP_ERR_PEER_LOST));
        return m->failed = OSMP_ERR_PEER_LOST;
    }
    return osmp__mb_check_peer(m, rank) == OSMP_ERR_PEER_LOST ? OSMP_ERR_PEER_LOST : OSMP_ERR_COPY;
}

void osmp__mb_publish_slot(struct osmp__mbox *m, int dir, int slot, uint64_t step)
{
    if (!OSMP__IS_MINI(slot)) return osmp__mb_publish(m, dir, step);
    struct osmp__region *r = osmp__mb_region(m, m->rank);
    osmp__publish(&r->mini[dir][OSMP__SLOT_MINI(0) - slot].seq, &r->wake[dir].waiters, step);
}

int osmp__mb_send_minis(struct osmp__mbox *m, int dir, uint64_t first, int consumer, int signal_dir, uint64_t step,
                        const void *data, size_t bytes)
{
    int lines = osmp__mini_lines(bytes);
    for (int j = 0; j < lines; j++) {
        char *line = osmp__mb_claim(m, dir, OSMP__SLOT_MINI((int)((first + (uint64_t)j) % OSMP__MINI_SLOTS)),
                                    &consumer, 1, signal_dir, step);
        if (!line) return m->failed;
        memcpy(line, (const char *)data + (size_t)j * OSMP__MINI_DATA, osmp__mini_piece(bytes, j));
    }
    osmp__mb_publish_minis(m, dir, first, lines, step);
    return OSMP_OK;
}

int osmp__mb_recv_minis(struct osmp__mbox *m, int rank, int dir, uint64_t first, uint64_t step, void *out,
                        size_t bytes)
{
    int lines = osmp__mini_lines(bytes);
    if (lines > 2) __builtin_prefetch(osmp__mb_slot(m, rank, dir, OSMP__SLOT_MINI((int)(first % OSMP__MINI_SLOTS))));
    if (osmp__mb_wait_slot(m, rank, dir, OSMP__SLOT_MINI((int)((first + (uint64_t)lines - 1) % OSMP__MINI_SLOTS)),
                           step)) /* the last line, published last */
        return m->failed;
    for (int j = 0; j < lines; j++)
        memcpy((char *)out + (size_t)j * OSMP__MINI_DATA,
               osmp__mb_slot(m, rank, dir, OSMP__SLOT_MINI((int)((first + (uint64_t)j) % OSMP__MINI_SLOTS))),
               osmp__mini_piece(bytes, j));
    return OSMP_OK;
}

int osmp__mb_fail(struct osmp__mbox *m, int rc)
{
    if (rc == OSMP_OK || m->failed) return rc;
    osmp__cas32(&osmp__mb_region(m, 0)->shared.lost, 0, osmp__lost_word(m->rank, rc));
    m->failed = OSMP_ERR_PEER_LOST;
    return rc;
}

int osmp__mb_failure(struct osmp__mbox *m, int *rank)
{
    uint32_t w = osmp__load32(&osmp__mb_region(m, 0)->shared.lost);
    *rank = w ? (int)(w & 0xffffff) - 1 : -1;
    if (*rank == 0xffffff - 1) *rank = -1;
    return w ? -(int)(w >> 24) : OSMP_OK;
}

static int consumes(const struct osmp__slot_rec *rec, int c)
{
    for (int i = 0; i < rec->nconsumers; i++)
        if (rec->consumers[i] == c) return 1;
    return 0;
}

/*
 * Hysteresis for the mini lines. An owner that runs ahead (a root's eager
 * broadcasts, senders of a gather: a benchmark's calls back to back) finds its
 * ring full at every call, and would wait for each slot's reader to free just
 * that slot: one transfer of the reader's counter line, and of the line the
 * reader polls next, per message. Waiting instead until the reader has consumed
 * the message written half a ring ago frees half the ring at once, so the next
 * claims find their slots free in `seen` and load no line of the reader's. Only
 * a message of an earlier call qualifies: that call published every message it
 * claimed, so the reader can consume it without anything more from this
 * participant (no deadlock). Returns that slot's record, or NULL.
 */
static const struct osmp__slot_rec *half_ring_later(const struct osmp__mbox *m, int dir, int slot,
                                                    const struct osmp__slot_rec *rec)
{
    int i = (OSMP__SLOT_MINI(0) - slot + OSMP__MINI_SLOTS / 2) % OSMP__MINI_SLOTS;
    const struct osmp__slot_rec *l = &m->mini_rec[dir][i];
    if (!rec->written || !l->written || l->dir != rec->dir || !osmp__seq_reached(m->call_base, l->seq) ||
        osmp__seq_reached(rec->seq, l->seq))
        return NULL;
    return l;
}

/* Pauses between two polls of a counter that must advance by many steps. */
#define FAR_PAUSES 32

/* Wait for a step many publications ahead (half a ring, above): poll rarely,
 * so that the owner's publications meanwhile find its counter line in its own
 * cache instead of pulling it back from this poller's at every one. The spin
 * budget is the same in time; then the usual yields, sleep and liveness. */
static int wait_far(struct osmp__mbox *m, int rank, int dir, uint64_t step)
{
    struct osmp__wait_policy far = m->wait;
    far.pauses = FAR_PAUSES;
    return wait_on(m, rank, dir, &osmp__mb_chan(m, rank, dir)->seq, step, &far, osmp__mb_seen_at(m, rank, dir));
}

/* The rare part of osmp__mb_claim (mailbox.h), out of line: the usual claim
 * saves no registers for it. */
__attribute__((noinline)) int osmp__mb_claim_wait(struct osmp__mbox *m, int dir, int slot,
                                                  const struct osmp__slot_rec *rec)
{
    for (int i = 0; i < rec->nconsumers; i++) { /* (each wait records what it saw in seen) */
        int c = rec->consumers[i];
        if (osmp__seq_reached(osmp__mb_seen(m, c, rec->dir), rec->seq)) continue;
        const struct osmp__slot_rec *later = OSMP__IS_MINI(slot) ? half_ring_later(m, dir, slot, rec) : NULL;
        int far = later && consumes(later, c);
        if (far ? wait_far(m, c, rec->dir, later->seq) : osmp__mb_wait(m, c, rec->dir, rec->seq)) return -1;
    }
    return 0;
}
