/*
 * The shm layer's security properties (internal API, src/shm/shm.h): segment
 * names, modes, refusing segments that are not exactly ours, reaping names of
 * dead creators only; a reused pid never served from a dead process's mapping;
 * the waiting protocol's two fence modes (shm/wait.c) between processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/mailbox.h"
#include "shm/shm.h"
#include "shm/wait.h"
#include "test.h"

#define REGION_BYTES 65536

static int exists(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

/* A file in /dev/shm made by hand, as another program (or user) could. */
static void plant(const char *name, mode_t mode, size_t size)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, mode);
    CHECK(fd >= 0);
    if (fd < 0) return;
    CHECK(ftruncate(fd, (off_t)size) == 0);
    fchmod(fd, mode); /* past the umask */
    close(fd);
}

static pid_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

static void test_create(void)
{
    char name[OSMP_SEG_NAME_MAX];
    void *a = NULL;
    CHECK_INT(osmp__seg_create(8192, name, &a), OSMP_OK);
    char prefix[48];
    struct stat ns;
    CHECK(stat("/proc/self/ns/pid", &ns) == 0);
    snprintf(prefix, sizeof(prefix), "/osmp-%d-%08lx-", (int)getpid(), (unsigned long)ns.st_ino);
    CHECK_INT(osmp__pidns(), (unsigned long)ns.st_ino);
    CHECK(strncmp(name, prefix, strlen(prefix)) == 0);
    CHECK_INT(strlen(name), strlen(prefix) + 24); /* 12 random bytes in hex */
    CHECK(osmp__seg_ours(name));
    struct stat st;
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    CHECK(stat(path, &st) == 0);
    CHECK_INT(st.st_mode & 0777, 0600);
    CHECK_INT(st.st_uid, geteuid());
    /* The same process attaching shares the mapping. */
    void *b = NULL;
    CHECK_INT(osmp__seg_attach(name, 8192, &b), OSMP_OK);
    CHECK(a == b);
    CHECK_INT(osmp__seg_attach(name, 4096, &b), OSMP_ERR_SHM); /* another size */
    osmp__seg_unlink(name);
    CHECK(!exists(name));
    osmp__seg_detach(b, 8192);
    ((char *)a)[0] = 1; /* still mapped: one reference left */
    osmp__seg_detach(a, 8192);
}

static void test_attach_refuses(void)
{
    void *p = NULL;
    const char *open_mode = "/osmp-1-testmode";
    plant(open_mode, 0644, 4096);
    CHECK_INT(osmp__seg_attach(open_mode, 4096, &p), OSMP_ERR_SHM);
    shm_unlink(open_mode);

    const char *link = "/osmp-1-testlink", *target = "/osmp-1-testtarget";
    plant(target, 0600, 4096);
    CHECK(symlink("/dev/shm/osmp-1-testtarget", "/dev/shm/osmp-1-testlink") == 0);
    CHECK_INT(osmp__seg_attach(link, 4096, &p), OSMP_ERR_SHM);
    unlink("/dev/shm/osmp-1-testlink");
    shm_unlink(target);

    if (geteuid() == 0) { /* only root can make a file of another user */
        struct passwd *nobody = getpwnam("nobody");
        const char *foreign = "/osmp-1-testforeign";
        plant(foreign, 0600, 4096);
        CHECK(nobody && chown("/dev/shm/osmp-1-testforeign", nobody->pw_uid, nobody->pw_gid) == 0);
        CHECK_INT(osmp__seg_attach(foreign, 4096, &p), OSMP_ERR_SHM);
        shm_unlink(foreign);
    }
    CHECK_INT(osmp__seg_attach("/osmp-1-missing", 4096, &p), OSMP_ERR_SHM);
}

static void test_reap(void)
{
    char dead[64], live[64], foreign[64], other[64], elsewhere[64], old[64];
    pid_t d = dead_pid();
    unsigned long ns = osmp__pidns();
    CHECK(ns != 0);
    snprintf(dead, sizeof(dead), "/osmp-%d-%08lx-00112233445566778899aabb", (int)d, ns);
    snprintf(live, sizeof(live), "/osmp-%d-%08lx-00112233445566778899aabb", (int)getpid(), ns);
    snprintf(foreign, sizeof(foreign), "/osmp-%d-%08lx-ffeeddccbbaa998877665544", (int)d, ns);
    snprintf(other, sizeof(other), "/osmpx-%d-00", (int)d);
    /* A dead pid of our namespace is no pid of another one: its name there is
     * never judged here (nor one of a version that did not say its namespace). */
    snprintf(elsewhere, sizeof(elsewhere), "/osmp-%d-%08lx-00112233445566778899aabb", (int)d, ns ^ 1);
    snprintf(old, sizeof(old), "/osmp-%d-00112233445566778899aabb", (int)d);
    plant(dead, 0600, 4096);
    plant(live, 0600, 4096);
    plant(other, 0600, 4096);
    plant(elsewhere, 0600, 4096);
    plant(old, 0600, 4096);
    CHECK(!osmp__seg_ours(elsewhere));
    void *p = NULL;
    CHECK_INT(osmp__seg_attach(elsewhere, 4096, &p), OSMP_ERR_UNSUPPORTED);
    int root = geteuid() == 0;
    if (root) {
        struct passwd *nobody = getpwnam("nobody");
        plant(foreign, 0600, 4096);
        char path[128];
        snprintf(path, sizeof(path), "/dev/shm%s", foreign);
        CHECK(nobody && chown(path, nobody->pw_uid, nobody->pw_gid) == 0);
    }
    int removed = -1;
    CHECK_INT(osmp_shm_cleanup(&removed), OSMP_OK);
    CHECK(removed >= 1);
    CHECK(!exists(dead));
    CHECK(exists(live));   /* its creator runs */
    CHECK(exists(other));  /* not an OSMP name */
    CHECK(exists(elsewhere)); /* another pid namespace's */
    CHECK(exists(old));       /* no namespace: not judged */
    if (root) CHECK(exists(foreign)); /* not this user's */
    /* osmp-run's reaping of one rank's names (a zombie's): that pid's only. */
    plant(dead, 0600, 4096);
    CHECK_INT(osmp__seg_reap_pid(getpid()), 1);
    CHECK(!exists(live));
    CHECK(exists(dead));
    shm_unlink(dead);
    shm_unlink(elsewhere);
    shm_unlink(old);
    shm_unlink(other);
    if (root) shm_unlink(foreign);
}

/* A child that allocates mappable memory (osmp_alloc) filled with `fill`,
 * sends its published address, waits for a byte on *go_fd, and dies without
 * freeing it (a process that crashed, or exited with the region in use). */
static pid_t region_child(char fill, int *go_fd, uint64_t *addr, uint64_t clear)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down)) return -1;
    pid_t p = fork();
    if (p == 0) {
        close(up[0]);
        close(down[1]);
        void *m = NULL;
        uint64_t a = 0;
        /* Free where the parent's mapping of a region published at `clear` sits
         * in this copy of its address space, so that this region lands there. */
        if (clear) munmap((void *)(uintptr_t)((clear & ((UINT64_C(1) << 48) - 1)) - 4096), REGION_BYTES + 4096);
        if (osmp_alloc(REGION_BYTES, &m) == OSMP_OK) {
            memset(m, fill, REGION_BYTES);
            a = osmp__expose(m);
        }
        char c;
        if (write(up[1], &a, sizeof(a)) != (ssize_t)sizeof(a) || read(down[0], &c, 1) != 1) _exit(1);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    *addr = 0;
    if (p < 0 || read(up[0], addr, sizeof(*addr)) != (ssize_t)sizeof(*addr)) *addr = 0;
    close(up[0]);
    *go_fd = down[1];
    return p;
}

static void end_child(pid_t p, int go_fd)
{
    char c = 1;
    if (write(go_fd, &c, 1) != 1) kill(p, SIGKILL);
    close(go_fd);
    waitpid(p, NULL, 0);
}

/* Copy a peer's region as a collective does and check every byte is `fill`,
 * through the mapping (osmp_copy_stats: one more mapped copy, no CMA). */
static void check_copy(pid_t p, uint64_t a, char fill)
{
    static char buf[REGION_BYTES];
    struct osmp_copy_stats before, after;
    osmp_copy_stats(&before);
    memset(buf, 0, sizeof(buf));
    CHECK_INT(osmp__copy_from(p, 0, buf, (const void *)(uintptr_t)a, REGION_BYTES), 0);
    osmp_copy_stats(&after);
    size_t wrong = 0;
    for (size_t i = 0; i < sizeof(buf); i++) wrong += buf[i] != fill;
    CHECK_INT(wrong, 0);
    CHECK_INT(after.mapped - before.mapped, 1);
    CHECK_INT(after.cma - before.cma, 0);
}

/* Next fork's pid: the kernel hands out ns_last_pid + 1 (root only). */
static int set_last_pid(pid_t p)
{
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!f) return -1;
    int ok = fprintf(f, "%d", (int)p) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * A reader keeps peers' mappings by (pid, descriptor) and uses one while its
 * region's header says live. A process that dies without freeing leaves that
 * header live in the reader's mapping; a new process with the same pid then
 * publishes its own region at the same descriptor (and, forked from the same
 * parent, the same address). A team that starts to watch the pid drops the
 * mappings (osmp__live_watch -> osmp__xmem_forget): the copy must read the new
 * process's bytes, not the dead one's.
 */
static void test_pid_reuse(void)
{
    int go_a, go_b = -1;
    uint64_t a1, a2;
    pid_t pa = region_child('A', &go_a, &a1, 0);
    CHECK(pa > 0 && a1 >> 48); /* a tagged (mappable) address */
    if (pa <= 0 || !(a1 >> 48)) return;
    osmp__live_watch(pa); /* as a team does */
    check_copy(pa, a1, 'A');
    osmp__live_unwatch(pa);
    end_child(pa, go_a);
    pid_t pb = -1;
    for (int tries = 0; tries < 200 && pb != pa; tries++) { /* another fork may take the pid first */
        if (pb > 0) end_child(pb, go_b);
        if (set_last_pid(pa - 1)) {
            printf("test-shm: pid reuse not checked: /proc/sys/kernel/ns_last_pid is not writable here\n");
            return;
        }
        pb = region_child('B', &go_b, &a2, a1);
        if (pb <= 0) break;
    }
    CHECK_INT(pb, pa);
    if (pb != pa) {
        if (pb > 0) end_child(pb, go_b);
        return;
    }
    CHECK_INT(a2, a1); /* same descriptor, same address: only the forget tells them apart */
    osmp__live_watch(pb);
    check_copy(pb, a2, 'B');
    osmp__live_unwatch(pb);
    end_child(pb, go_b);
}

/* Two processes hand a counter back and forth ROUNDS times, each waiting by
 * sleeping at once (no spin, no yield): every handoff goes through the futex
 * and the Dekker pair of the mode in force (registered: no fence in the
 * publisher, membarrier in the sleeper; else fences on both sides). Returns the
 * count of handoffs the child saw out of turn or missed. */
enum { ROUNDS = 300 };
struct pingpong {
    osmp_atomic64_t ctr[2];
    osmp_atomic32_t waiters[2];
};
/* Sleepers woken by the publication, not by the end of their nap: a wake-up
 * that never comes costs a whole nap every handoff, so nearly every nap runs
 * out. On a loaded machine a descheduled peer makes many naps run out too
 * (54 of 300 seen with a second test run beside this one), so the bound is
 * half: what a lost wake-up gives, not what a busy machine gives. */
static int woken_late(unsigned naps_out)
{
    if (naps_out > ROUNDS / 2) fprintf(stderr, "%u of %d naps lasted their whole millisecond\n", naps_out, ROUNDS);
    return naps_out > ROUNDS / 2;
}
static int pingpong(struct pingpong *pp, int fence_always)
{
    const struct osmp__wait_policy sleep_at_once = {0, 0, 0};
    pid_t p = fork();
    if (p == 0) { /* a child is not registered until it asks (the parent's registration is its memory map's) */
        int bad = osmp__wait_setup(1) != 0;
        bad += osmp__wait_setup(fence_always) != (fence_always ? 0 : osmp__wait_setup(0));
        unsigned naps = osmp__wait_naps_out();
        for (uint64_t i = 1; i <= ROUNDS; i++) {
            bad += osmp__wait_reached(&pp->ctr[0], &pp->waiters[0], i, &sleep_at_once, NULL, NULL, NULL) != OSMP_OK;
            bad += osmp__load_acquire(&pp->ctr[0]) != i;
            osmp__publish(&pp->ctr[1], &pp->waiters[1], i);
        }
        _exit(bad + woken_late(osmp__wait_naps_out() - naps));
    }
    int bad = 0;
    unsigned naps = osmp__wait_naps_out();
    for (uint64_t i = 1; i <= ROUNDS; i++) {
        osmp__publish(&pp->ctr[0], &pp->waiters[0], i);
        bad += osmp__wait_reached(&pp->ctr[1], &pp->waiters[1], i, &sleep_at_once, NULL, NULL, NULL) != OSMP_OK;
    }
    bad += woken_late(osmp__wait_naps_out() - naps);
    int st = 0;
    waitpid(p, &st, 0);
    return bad + (WIFEXITED(st) ? WEXITSTATUS(st) : 1000);
}

static void test_wait_modes(void)
{
    struct pingpong *pp = mmap(NULL, sizeof(*pp), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(pp != MAP_FAILED);
    if (pp == MAP_FAILED) return;
    /* always: nothing registered, every publication fences */
    CHECK_INT(osmp__wait_setup(1), 0);
    memset(pp, 0, sizeof(*pp));
    CHECK_INT(pingpong(pp, 1), 0);
    /* auto: this kernel (membarrier since Linux 4.16, in the query's answer) registers the process */
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    int expect = cmds > 0 && (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) ? 1 : 0;
    CHECK_INT(osmp__wait_setup(0), expect);
    CHECK_INT(osmp__wait_setup(1), expect); /* registered stays registered */
    memset(pp, 0, sizeof(*pp));
    CHECK_INT(pingpong(pp, 0), 0);
    memset(pp, 0, sizeof(*pp));
    CHECK_INT(pingpong(pp, 1), 0); /* a registered publisher, a child that fences */
    munmap(pp, sizeof(*pp));
}

/* osmp__stream_copy (the streaming stores of a far pair's slots, mailbox.h
 * osmp__mb_fill): every destination and source alignment within a line, every
 * length around the line steps, the bytes just before and after the
 * destination untouched, and the bytes it says it streamed: the lines wholly
 * inside the destination (none where the machine has no streaming stores). */
static void test_stream_copy(void)
{
    enum { PAD = 64, MAX = 4 * 64 + 80 };
    static unsigned char src[MAX + 2 * PAD], dst[MAX + 2 * PAD];
    int bad = 0, bad_count = 0;
    for (size_t i = 0; i < sizeof(src); i++) src[i] = (unsigned char)(i * 7 + 3);
    for (size_t da = 0; da < 64; da += 3)
        for (size_t sa = 0; sa < 64; sa += 5)
            for (size_t len = 0; len <= MAX; len += len < 200 ? 1 : 37) {
                memset(dst, 0xee, sizeof(dst));
                size_t streamed = osmp__stream_copy(dst + PAD + da, src + PAD + sa, len);
                uintptr_t at = (uintptr_t)(dst + PAD + da), first = (at + 63) & ~(uintptr_t)63,
                          end = (at + len) & ~(uintptr_t)63;
                size_t want_streamed = OSMP__HAVE_STREAM && end > first ? end - first : 0;
                if (streamed != want_streamed && bad_count++ < 5)
                    fprintf(stderr, "stream_copy dst+%zu len %zu: streamed %zu, not %zu\n", da, len, streamed,
                            want_streamed);
                for (size_t i = 0; i < sizeof(dst); i++) {
                    int in = i >= PAD + da && i < PAD + da + len;
                    unsigned char want = in ? src[PAD + sa + (i - PAD - da)] : 0xee;
                    if (dst[i] != want && bad++ < 5)
                        fprintf(stderr, "stream_copy dst+%zu src+%zu len %zu: byte %zu is %#x, not %#x\n", da, sa,
                                len, i, dst[i], want);
                }
            }
    CHECK_INT(bad, 0);
    CHECK_INT(bad_count, 0);
    size_t big = (size_t)1 << 20; /* a whole chunk, as the slots take it */
    unsigned char *a = malloc(big + 64), *b = malloc(big + 64);
    CHECK(a && b);
    if (!a || !b) return;
    for (size_t i = 0; i < big + 64; i++) a[i] = (unsigned char)(i ^ (i >> 9));
    osmp__stream_copy(b + 8, a + 1, big);
    CHECK(memcmp(b + 8, a + 1, big) == 0);
    free(a);
    free(b);
}

/* The ring index of step k: k mod depth, masked for powers of two, divided
 * otherwise, across the whole range of a step counter. */
static void test_ring_index(void)
{
    struct osmp__mbox m;
    memset(&m, 0, sizeof(m));
    const uint64_t ks[] = {0, 1, 5, 7, 8, 63, 64, 65, 1000003, UINT64_MAX - 1, UINT64_MAX};
    for (int depth = 1; depth <= OSMP__MAX_DEPTH; depth++) {
        osmp__mb_set_depth(&m, depth);
        CHECK_INT(m.depth, depth);
        CHECK_INT(m.depth_mask, (depth & (depth - 1)) == 0 ? depth - 1 : 0);
        for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
            CHECK_INT(osmp__mb_ring(&m, ks[i]), ks[i] % (uint64_t)depth);
    }
}

/* The reaper's test of a segment's creator (segment.c): a pid whose process
 * started after the segment's last status change is another's (pids are
 * reused), one that started before is the creator's. */
static void test_gone_since(void)
{
    double now = (double)time(NULL);
    CHECK_INT(osmp__pid_gone_since(getpid(), now), 0);           /* started before now: alive since */
    CHECK_INT(osmp__pid_gone_since(getpid(), now - 86400.0), 1); /* started after a day ago: a reused pid */
    pid_t c = fork();
    if (c == 0) _exit(0);
    CHECK(c > 0);
    waitpid(c, NULL, 0);
    CHECK_INT(osmp__pid_gone_since(c, now), 1); /* exited */
}

int main(void)
{
    test_gone_since();
    test_ring_index();
    test_create();
    test_attach_refuses();
    test_reap();
    test_pid_reuse();
    test_wait_modes();
    test_stream_copy();
    return TEST_EXIT();
}
