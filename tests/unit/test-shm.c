/*
 * The shm layer's security properties (internal API, src/shm/shm.h): segment
 * names, modes, refusing segments that are not exactly ours, reaping names of
 * dead creators only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/shm.h"
#include "test.h"

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
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "/osmp-%d-", (int)getpid());
    CHECK(strncmp(name, prefix, strlen(prefix)) == 0);
    CHECK_INT(strlen(name), strlen(prefix) + 24); /* 12 random bytes in hex */
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
    char dead[64], live[64], foreign[64], other[64];
    pid_t d = dead_pid();
    snprintf(dead, sizeof(dead), "/osmp-%d-00112233445566778899aabb", (int)d);
    snprintf(live, sizeof(live), "/osmp-%d-00112233445566778899aabb", (int)getpid());
    snprintf(foreign, sizeof(foreign), "/osmp-%d-ffeeddccbbaa998877665544", (int)d);
    snprintf(other, sizeof(other), "/osmpx-%d-00", (int)d);
    plant(dead, 0600, 4096);
    plant(live, 0600, 4096);
    plant(other, 0600, 4096);
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
    if (root) CHECK(exists(foreign)); /* not this user's */
    shm_unlink(live);
    shm_unlink(other);
    if (root) shm_unlink(foreign);
}

int main(void)
{
    test_create();
    test_attach_refuses();
    test_reap();
    return TEST_EXIT();
}
