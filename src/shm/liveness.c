/*
 * Is a peer process still alive? A pidfd names one process for good (a pid may
 * be reused once the process is reaped) and polls readable as soon as it exits,
 * zombie or not; kill(pid, 0) is the fallback when a pidfd cannot be had
 * (EMFILE, old kernel). pidfds are close-on-exec. One pidfd per peer process for the whole process,
 * shared by every team that watches it, so a program with many teams (MPI
 * communicators) holds at most one descriptor per peer on the node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shm.h"

struct watched {
    pid_t pid;
    int fd; /* -1: use kill() */
    int refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct watched *table;
static int nwatched, cap;

static struct watched *find(pid_t pid)
{
    for (int i = 0; i < nwatched; i++)
        if (table[i].pid == pid) return &table[i];
    return NULL;
}

void osmp__live_watch(pid_t pid)
{
    pthread_mutex_lock(&lock);
    struct watched *w = find(pid);
    if (w) {
        w->refs++;
    } else {
        if (nwatched == cap) {
            int ncap = cap ? 2 * cap : 16;
            struct watched *nt = realloc(table, sizeof(*nt) * (size_t)ncap);
            if (!nt) goto out; /* unwatched pids are checked with kill() */
            table = nt;
            cap = ncap;
        }
        long fd = syscall(SYS_pidfd_open, pid, 0);
        table[nwatched++] = (struct watched){pid, fd >= 0 ? (int)fd : -1, 1};
        osmp__xmem_forget(pid); /* a pid no team watched: maybe reused since we mapped its memory */
    }
out:
    pthread_mutex_unlock(&lock);
}

void osmp__live_unwatch(pid_t pid)
{
    pthread_mutex_lock(&lock);
    struct watched *w = find(pid);
    if (w && --w->refs == 0) {
        if (w->fd >= 0) close(w->fd);
        *w = table[--nwatched];
    }
    pthread_mutex_unlock(&lock);
}

/* Through its pidfd if we have one (a zombie has exited too; a poll error is
 * not a death), else kill(pid, 0). */
static int exited(pid_t pid, int fd)
{
    if (fd >= 0) {
        struct pollfd p = {fd, POLLIN, 0};
        return poll(&p, 1, 0) > 0;
    }
    return kill(pid, 0) != 0 && errno == ESRCH;
}

int osmp__live_alive(pid_t pid)
{
    pthread_mutex_lock(&lock);
    struct watched *w = find(pid);
    int alive = !exited(pid, w ? w->fd : -1);
    pthread_mutex_unlock(&lock);
    return alive;
}

int osmp__pid_exited(pid_t pid)
{
    long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0 && errno == ESRCH) return 1;
    int gone = exited(pid, (int)fd);
    if (fd >= 0) close((int)fd);
    return gone;
}

/* Does /proc show our pid namespace? A process in a pid namespace of its own
 * may see a /proc mounted for its parent's, where pid numbers name other
 * processes (unshare --pid without --mount-proc). */
static int proc_is_ours(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return atoi(buf) == (int)getpid();
}

/* When the process now holding pid started, in seconds since the epoch (-1:
 * unknown): /proc/PID/stat's start time (field 22, clock ticks after boot)
 * plus the boot time of /proc/stat. */
static double started_at(pid_t pid)
{
    if (!proc_is_ours()) return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
    unsigned long long ticks = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     &ticks) != 1)
        return -1;
    f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long btime = 0;
    char line[256];
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "btime %llu", &btime) == 1) break;
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return btime && hz > 0 ? (double)btime + (double)ticks / (double)hz : -1;
}

int osmp__pid_gone_since(pid_t pid, double when)
{
    if (osmp__pid_exited(pid)) return 1;
    /* pids are reused (pid_max is often 32768): a process that started after
     * `when` is not the one that was there then (2 s: btime is whole seconds,
     * and it moves with clock adjustments) */
    double start = started_at(pid);
    return start >= 0 && start > when + 2;
}
