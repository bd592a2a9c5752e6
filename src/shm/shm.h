/* shm layer: segments and the single-copy engine (internal). */
#ifndef OSMP_SHM_H
#define OSMP_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OSMP_SEG_NAME_MAX 48

/* Create a segment of `size` bytes with an unguessable name
 * ("/osmp-<pid>-<pid namespace>-<random>"), O_EXCL and mode 0600, mapped at
 * *addr. The participants unlink it once every one of them has mapped it. */
int osmp__seg_create(size_t size, char name[OSMP_SEG_NAME_MAX], void **addr);
/* Map a segment by name; refuses one owned by another user or of another size
 * (OSMP_ERR_SHM), or made in another pid namespace (OSMP_ERR_UNSUPPORTED).
 * Threads of one process that attach the same segment share one mapping
 * (refcounted until the last osmp__seg_detach). */
int osmp__seg_attach(const char *name, size_t size, void **addr);
void osmp__seg_unlink(const char *name);
void osmp__seg_detach(void *addr, size_t size);
/* Unlink this user's segments of our pid namespace whose creator (the pid in
 * the name) is dead; the count removed, or -1 if /dev/shm cannot be read. */
int osmp__seg_reap(void);
/* The same for the names of one pid that the caller knows to be a zombie (dead,
 * and not yet free for another process): osmp-run before it reaps a rank. */
int osmp__seg_reap_pid(pid_t pid);
/* This process's pid namespace as segment names carry it (0: unknown), and
 * whether a segment name was made in it (names of no known form: yes). */
unsigned long osmp__pidns(void);
int osmp__seg_ours(const char *name);

/* Peer liveness (liveness.c): watch a peer process for the lifetime of a team
 * (refcounted), and ask whether it still runs. */
void osmp__live_watch(pid_t pid);
void osmp__live_unwatch(pid_t pid);
int osmp__live_alive(pid_t pid);
/* Has this process exited (zombies included)? Without a watch. */
int osmp__pid_exited(pid_t pid);
/* Has the process that held pid at time `when` (seconds since the epoch) exited:
 * gone, or its pid now another's, started after then? */
int osmp__pid_gone_since(pid_t pid, double when);

/* Copy len bytes at `src` in process `pid` into dst: plain loads when the source
 * is in this process or in memory it allocated with osmp_alloc (src as
 * osmp__expose published it), Linux CMA (process_vm_readv) otherwise. */
int osmp__copy_from(pid_t pid, int same_process, void *dst, const void *src, size_t len);
/* Did this thread's last failed osmp__copy_from fail because its process was
 * gone (ESRCH: it exits before its pidfd says so, once its memory is torn down)? */
int osmp__copy_gone(void);
/* The same without the fault injection of OSMP_FAULT or the counts of
 * osmp_copy_stats: team creation's probe of whether single copy works, which is
 * not a copy of a collective. */
int osmp__copy_probe(pid_t pid, int same_process, void *dst, const void *src, size_t len);
/* memcpy with non-temporal stores where the machine has them (OSMP__HAVE_STREAM:
 * x86-64; the destination's whole lines go to memory without being read first,
 * and leave every cache), then osmp__stream_fence. For data another core will
 * read while the lines would otherwise have to be fetched back from its cache
 * first (osmp__mb_fill). Returns the bytes written so (the lines wholly inside
 * dst); elsewhere memcpy, and 0. */
#if defined(__x86_64__)
#define OSMP__HAVE_STREAM 1
#else
#define OSMP__HAVE_STREAM 0
#endif
size_t osmp__stream_copy(void *dst, const void *src, size_t len);
/* The address to publish for single copy of a buffer at p (struct
 * osmp__chan.addr): p itself, with the memfd of its osmp_alloc region in the top
 * 16 bits if it lies in one. Readers add offsets to it and pass it to
 * osmp__copy_from, never dereference it. */
uint64_t osmp__expose(const void *p);
/* The same if p lies in an osmp_alloc region (other processes can read it
 * without CMA), else 0. */
uint64_t osmp__expose_mapped(const void *p);
/* Drop the mappings of osmp_alloc regions of process `pid` (a pid a team now
 * watches anew may belong to another process than when they were mapped). */
void osmp__xmem_forget(pid_t pid);

#endif
