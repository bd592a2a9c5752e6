/* POSIX shared memory segments: creation with unguessable names, attach, unlink. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fault.h"
#include "osmp.h"
#include "shm.h"

/* A name is "/osmp-<creator pid>-<pid namespace>-<random hex>". It exists in
 * /dev/shm only while a team is being created: every participant unlinks it as
 * soon as it knows that all have mapped it. If all of them are killed inside
 * that window, the next creation (or osmp-run, or osmp_shm_cleanup) removes it:
 * its creator is dead.
 *
 * The pid namespace (the inode of /proc/self/ns/pid, 8 hex digits; 0 where it
 * cannot be read) says in which namespace the pid is a pid: /dev/shm may be
 * shared by processes of several pid namespaces (containers), where the same
 * number names unrelated processes, or none. A name is only ever judged by a
 * process of its own namespace. */
static pthread_once_t pidns_once = PTHREAD_ONCE_INIT;
static unsigned long pidns;
static void read_pidns(void)
{
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0 && st.st_ino > 0 && st.st_ino <= 0xffffffffUL) pidns = st.st_ino;
}

unsigned long osmp__pidns(void)
{
    pthread_once(&pidns_once, read_pidns);
    return pidns;
}

/* A segment name's creator pid and namespace (the leading '/' optional); 0 if
 * it is not one (a name of an older version, without the namespace, included). */
static int parse_name(const char *name, pid_t *pid, unsigned long *ns)
{
    int p = 0, len = 0;
    unsigned long n = 0;
    if (name[0] == '/') name++;
    if (sscanf(name, "osmp-%d-%8lx-%n", &p, &n, &len) != 2 || len < 16 || p <= 0 || name[len - 10] != '-' ||
        !name[len])
        return 0;
    *pid = p;
    *ns = n;
    return 1;
}

int osmp__seg_ours(const char *name)
{
    pid_t pid;
    unsigned long ns;
    return !parse_name(name, &pid, &ns) || ns == osmp__pidns();
}

/* Unlink this user's names of our pid namespace whose creator is dead
 * (pid == 0) or that pid (pid > 0: the caller knows its process gone and its
 * pid not yet free for another, a zombie). */
static int reap(pid_t only)
{
    unsigned long mine = osmp__pidns();
    if (!mine) return 0; /* which names are of our namespace is unknown: none is judged */
    DIR *d = opendir("/dev/shm");
    if (!d) return -1;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid;
        unsigned long ns;
        struct stat st;
        if (!parse_name(e->d_name, &pid, &ns) || ns != mine || (only && pid != only)) continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        /* the creator was alive when the segment's status last changed (creation, then writes), so a pid
         * whose process started after that is another's */
        if (!only && !osmp__pid_gone_since(pid, (double)st.st_ctim.tv_sec)) continue;
        char name[300];
        snprintf(name, sizeof(name), "/%s", e->d_name);
        if (shm_unlink(name) == 0) removed++;
    }
    closedir(d);
    return removed;
}

int osmp__seg_reap(void)
{
    return reap(0);
}

int osmp__seg_reap_pid(pid_t pid)
{
    return pid > 0 ? reap(pid) : 0;
}

int osmp_shm_cleanup(int *removed)
{
    int n = osmp__seg_reap();
    if (n < 0) return OSMP_ERR_SHM;
    if (removed) *removed = n;
    return OSMP_OK;
}

/* Segments mapped by this process, by name: the threads of a process that join
 * one team share one mapping. Fewer mappings, and one address per counter, so
 * that ThreadSanitizer sees the synchronization between those threads (through
 * two mappings of one page it sees two unrelated variables). */
struct mapping {
    char name[OSMP_SEG_NAME_MAX];
    void *addr;
    size_t size;
    int refs;
    struct mapping *next;
};
static pthread_mutex_t mappings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mapping *mappings;

static int remember(const char *name, void *addr, size_t size)
{
    struct mapping *m = calloc(1, sizeof(*m));
    if (!m) return OSMP_ERR_NO_MEMORY;
    snprintf(m->name, sizeof(m->name), "%s", name);
    m->addr = addr;
    m->size = size;
    m->refs = 1;
    pthread_mutex_lock(&mappings_lock);
    m->next = mappings;
    mappings = m;
    pthread_mutex_unlock(&mappings_lock);
    return OSMP_OK;
}

static void *mapped_already(const char *name, size_t size)
{
    void *addr = NULL;
    pthread_mutex_lock(&mappings_lock);
    for (struct mapping *m = mappings; m && !addr; m = m->next)
        if (strcmp(m->name, name) == 0 && m->size == size) {
            m->refs++;
            addr = m->addr;
        }
    pthread_mutex_unlock(&mappings_lock);
    return addr;
}

static pthread_once_t reap_once = PTHREAD_ONCE_INIT;
static void reap_at_first_creation(void)
{
    osmp__seg_reap();
}

int osmp__seg_create(size_t size, char name[OSMP_SEG_NAME_MAX], void **addr)
{
    /* Once per process: a scan of /dev/shm per team would make creating many
     * teams slow; names left by dead creators are rare (all participants killed
     * within one creation), and osmp-run and osmp_shm_cleanup reap them too. */
    pthread_once(&reap_once, reap_at_first_creation);
    if (osmp__fault(OSMP__FAULT_SEG)) return OSMP_ERR_SHM;
    unsigned char rnd[12];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) return OSMP_ERR_SHM;
    int n = snprintf(name, OSMP_SEG_NAME_MAX, "/osmp-%d-%08lx-", (int)getpid(), osmp__pidns());
    for (size_t i = 0; i < sizeof(rnd) && n + 2 < OSMP_SEG_NAME_MAX; i++)
        n += snprintf(name + n, (size_t)(OSMP_SEG_NAME_MAX - n), "%02x", rnd[i]);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return OSMP_ERR_SHM;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        shm_unlink(name);
        return OSMP_ERR_SHM;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED || remember(name, p, size) != OSMP_OK) {
        if (p != MAP_FAILED) munmap(p, size);
        shm_unlink(name);
        return OSMP_ERR_SHM;
    }
    *addr = p;
    return OSMP_OK;
}

int osmp__seg_attach(const char *name, size_t size, void **addr)
{
    if (osmp__fault(OSMP__FAULT_SEG)) return OSMP_ERR_SHM;
    if ((*addr = mapped_already(name, size))) return OSMP_OK;
    /* Its creator's pid is not a pid here: liveness, single copy and "the
     * same process" would all be asked of the wrong process. */
    if (!osmp__seg_ours(name)) return OSMP_ERR_UNSUPPORTED;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) return OSMP_ERR_SHM;
    struct stat st;
    /* A segment someone else created under a name we expected is not ours. */
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) || (size_t)st.st_size != size) {
        close(fd);
        return OSMP_ERR_SHM;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return OSMP_ERR_SHM;
    if (remember(name, p, size) != OSMP_OK) {
        munmap(p, size);
        return OSMP_ERR_NO_MEMORY;
    }
    *addr = p;
    return OSMP_OK;
}

void osmp__seg_unlink(const char *name)
{
    if (name && name[0]) shm_unlink(name);
}

void osmp__seg_detach(void *addr, size_t size)
{
    if (!addr) return;
    struct mapping *gone = NULL;
    int shared = 0;
    pthread_mutex_lock(&mappings_lock);
    for (struct mapping **m = &mappings; *m; m = &(*m)->next)
        if ((*m)->addr == addr) {
            shared = --(*m)->refs > 0;
            if (!shared) {
                gone = *m;
                *m = gone->next;
            }
            break;
        }
    pthread_mutex_unlock(&mappings_lock);
    free(gone);
    if (!shared) munmap(addr, size);
}
