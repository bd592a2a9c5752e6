/*
 * The transfer trace (OSMP_TRACE=PREFIX): what the runtime really moves, per
 * call, written by each participant to PREFIX.<team rank>.jsonl.
 *
 * Algorithms report every payload copy (osmp__trace_copy: bytes from memory
 * owned by team rank src into memory owned by dst; a slot belongs to the
 * participant whose region holds it, a user buffer to its caller) and every
 * reduction (osmp__trace_reduce: bytes of input operands combined, each counted
 * once). Each call's lines start with one saying which algorithm ran it:
 * {"call": K, "op": OP, "kind": "call", "alg": NAME, "root": R, "bytes": B}
 * (B: the bytes of this participant's block; NAME:K for a K-ary base case;
 * the algorithm a selected one handed the call to, if it did). The entry
 * points bracket each call (osmp__trace_begin/end); the lines
 * of one call, aggregated per (src, dst), are written at its end. Off, each
 * report is one predictable branch on a pointer the algorithm already has in
 * cache.
 */
#ifndef OSMP_COLL_TRACE_H
#define OSMP_COLL_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "osmp.h"

struct osmp__trace;
struct osmp__coll;

/* Open BASE.<rank>.jsonl for writing and write its first line, who wrote it:
 * {"kind": "team", "rank": R, "size": N, "core": C} (C: the logical core the
 * team planned with). OSMP_ERR_KNOB (and a message on stderr) if it cannot be
 * created. */
int osmp__trace_open(struct osmp__trace **tr, const char *base, int rank, int size, int core);
void osmp__trace_close(struct osmp__trace *tr);
/* Also (or only, when *tr is NULL: no file) add each call's copies to acc
 * (OSMP_TEAM_PARAM_TRAFFIC: size * size bytes by [src][dst], then size * size
 * counts of the calls that moved bytes from src to dst) when the call ends.
 * OSMP_OK or OSMP_ERR_NO_MEMORY. */
int osmp__trace_sink(struct osmp__trace **tr, uint64_t *acc, int rank, int size);

void osmp__trace_begin_(struct osmp__trace *tr, osmp_coll_t c);
void osmp__trace_end_(struct osmp__trace *tr);
void osmp__trace_copy_(struct osmp__trace *tr, int src, int dst, size_t bytes);
void osmp__trace_reduce_(struct osmp__trace *tr, size_t bytes);
/* Bytes staged into a slot with streaming stores (osmp__stage), written at the
 * end of the call: {"call": K, "op": OP, "kind": "stream", "rank": R, "n": B}. */
void osmp__trace_stream_(struct osmp__trace *tr, size_t bytes);
/* The algorithm that runs the call (the first one selected in it: a
 * composition's own name, not its parts'). */
void osmp__trace_alg_(struct osmp__trace *tr, const char *alg, int radix, int root, size_t bytes);
/* That algorithm has returned (osmp__run). */
void osmp__trace_run_end_(struct osmp__trace *tr);
/* The call is a request that runs its algorithm's resumable form (coll/co.h). */
void osmp__trace_resumable_(struct osmp__trace *tr);
/* The selected algorithm hands the whole call to another one (a vector it
 * cannot carry): the trace names the one that ran. Ignored from a
 * composition's parts. */
void osmp__trace_handover_(struct osmp__trace *tr, const char *alg);

/* The file name base a team's participants write to, chosen by rank 0 at team
 * creation: PREFIX if PREFIX.0.jsonl did not exist yet (the first traced team
 * of a job), else PREFIX.<pid>-<n> (later teams: other communicators). Empty
 * when tracing is off. OSMP_ERR_KNOB with a message when PREFIX is unusable. */
int osmp__trace_base(const char *prefix, char *base, size_t len);

#endif
