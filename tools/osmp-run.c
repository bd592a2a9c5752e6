/*
 * osmp-run: start N processes as one OSMP team.
 *
 *   osmp-run -n N [--bind POLICY | --cores LIST] [--topology FILE.xml | --synthetic STR]
 *            [--hierarchy SPEC] [--timeout SECONDS] [--grace SECONDS] -- prog args...
 *
 * Each process gets its rank, the team size, the logical core it is planned on
 * and the bootstrap (an inherited memfd holding the rendezvous: nothing in
 * /dev/shm). On this machine each process is bound to its core's PUs; with
 * --topology/--synthetic the cores are those of the other machine, used for
 * planning, and the processes run unbound here (oversubscribed if need be).
 * Exit status: 128+signal for a rank killed by a signal (the cause, even if
 * ranks that then failed were reaped first), else the first non-zero status of a
 * rank, 124 on --timeout, 127 when the program cannot be run (said once), 2 on
 * bad arguments, 0 when all ranks exit 0. When a
 * rank fails, the others see OSMP_ERR_PEER_LOST in their next
 * wait on it (or, while joining, through the rendezvous) and get --grace
 * seconds (default 5) to stop by themselves; the rest are then killed.
 * A rank's segment names (a team it was creating when it died) are removed
 * as soon as it ends; finally, /dev/shm is cleared of segments whose creator
 * is dead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "osmp.h"
#include "shm/shm.h"
#include "team/rendezvous.h"
#include "cli.h"

const char osmp__tool[] = "osmp-run";

#define MAX_RANKS 4096
#define RV_MAXLEN OSMP__RV_RECORD_MAX

static pid_t *children;
static int nchildren;

#define die(...) osmp__tool_fail(2, __VA_ARGS__)

static int killed_by_us; /* from now on a rank's signal death is ours, not a cause */

static void kill_all(int sig)
{
    killed_by_us = 1;
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0) kill(children[i], sig);
}

static volatile sig_atomic_t got_signal;
static void on_signal(int sig)
{
    got_signal = sig;
}

/* Bind to the PUs of a logical core of this machine. */
static void bind_to(const struct osmp_domain *core)
{
    int pus[256], n;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (osmp_core_list_parse(core->cpuset, CPU_SETSIZE, pus, 256, &n, NULL, 0) != OSMP_OK) return;
    for (int i = 0; i < n; i++) CPU_SET(pus[i], &set);
    sched_setaffinity(0, sizeof(set), &set);
}

/* Whether execvp would find prog as an executable file (errno set when not). */
static int runnable(const char *prog)
{
    if (strchr(prog, '/')) return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    for (const char *p = path;; p = strchr(p, ':') + 1) {
        size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
        char full[PATH_MAX];
        if (snprintf(full, sizeof(full), "%.*s/%s", (int)len, len ? p : ".", prog) < (int)sizeof(full)) {
            if (access(full, X_OK) == 0) return 1;
            if (errno == EACCES) err = EACCES;
        }
        if (!strchr(p, ':')) break;
    }
    errno = err;
    return 0;
}

int main(int argc, char **argv)
{
    const char *bind = NULL, *cores_list = NULL, *xml = NULL, *synthetic = NULL, *hierarchy = NULL;
    int n = -1, timeout = 0, grace = 5;
    static const struct option opts[] = {{"bind", required_argument, 0, 'b'},
                                         {"cores", required_argument, 0, 'c'},
                                         {"topology", required_argument, 0, 't'},
                                         {"synthetic", required_argument, 0, 's'},
                                         {"hierarchy", required_argument, 0, 'H'},
                                         {"timeout", required_argument, 0, 'T'},
                                         {"grace", required_argument, 0, 'G'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    opterr = 0;
    int o;
    char *end;
    while ((o = getopt_long(argc, argv, "+:n:h", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            n = (int)strtol(optarg, &end, 10);
            if (*end || n < 1 || n > MAX_RANKS) die("-n expects 1..%d, got \"%s\"", MAX_RANKS, optarg);
            break;
        case 'b': bind = optarg; break;
        case 'c': cores_list = optarg; break;
        case 't': xml = optarg; break;
        case 's': synthetic = optarg; break;
        case 'H': hierarchy = optarg; break;
        case 'T':
            timeout = (int)strtol(optarg, &end, 10);
            if (*end || timeout < 1) die("--timeout expects seconds > 0, got \"%s\"", optarg);
            break;
        case 'G':
            grace = (int)strtol(optarg, &end, 10);
            if (*end || end == optarg || grace < 0) die("--grace expects seconds >= 0, got \"%s\"", optarg);
            break;
        case 'h':
            printf("usage: osmp-run -n N [--bind linear|scatter|numa|random:SEED | --cores LIST]\n"
                   "                [--topology FILE.xml | --synthetic STRING] [--hierarchy SPEC]\n"
                   "                [--timeout SECONDS] [--grace SECONDS] -- prog [args...]\n"
                   "Start N processes of prog as one OSMP team (each gets OSMP_RUN_RANK, _SIZE, _CORE, _FD).\n"
                   "  -n N                 processes (1..%d), required\n"
                   "  --bind POLICY        where rank r runs: linear (rank r on core r, the default), scatter\n"
                   "                       (consecutive ranks as far apart as the tree allows), numa (round-robin\n"
                   "                       over NUMA domains), random:SEED (a permutation reproducible from SEED);\n"
                   "                       more ranks than cores wrap around\n"
                   "  --cores LIST         the logical cores, one per rank (e.g. 0,2,4-7); excludes --bind\n"
                   "  --topology FILE.xml  plan on this hwloc XML (another machine: the ranks run unbound here)\n"
                   "  --synthetic STRING   plan on an hwloc synthetic topology (e.g. \"pack:2 core:4 pu:1\")\n"
                   "  --hierarchy SPEC     the team's hierarchy spec (sets OSMP_HIERARCHY; osmp-topo --help)\n"
                   "  --timeout SECONDS    kill every rank after SECONDS and exit 124 (default: none)\n"
                   "  --grace SECONDS      after a rank fails, the others' time to stop by themselves (default 5)\n"
                   "  -h, --help           this text\n"
                   "Exit status: 0 when every rank exits 0; 128+signal for a rank killed by a signal; else the first\n"
                   "non-zero status of a rank; 124 on --timeout; 127 when prog cannot be run; 2 on bad arguments.\n",
                   MAX_RANKS);
            return 0;
        case ':': die("option %s needs an argument", argv[optind - 1]);
        default: die("unknown option %s (see --help)", argv[optind - 1]);
        }
    }
    if (optind >= argc) die("no program to run (osmp-run -n N -- prog args)");
    if (!runnable(argv[optind])) { /* once, here, rather than once per rank after fork */
        fprintf(stderr, "osmp-run: cannot run %s: %s\n", argv[optind], strerror(errno));
        return 127;
    }
    if (n < 0) die("-n N is required");
    if (bind && cores_list) die("--bind and --cores exclude each other");
    if (xml && synthetic) die("--topology and --synthetic exclude each other");

    osmp_topo_t topo;
    osmp_topo_source_t src = xml ? OSMP_TOPO_XML : synthetic ? OSMP_TOPO_SYNTHETIC : OSMP_TOPO_THIS_MACHINE;
    if (osmp_topo_load(src, xml ? xml : synthetic, 0, &topo) != OSMP_OK) die("%s", osmp_topo_last_error());
    int *cores = malloc(sizeof(int) * MAX_RANKS);
    char err[256];
    if (!cores) die("out of memory");
    if (cores_list) {
        int got;
        if (osmp_core_list_parse(cores_list, osmp_topo_ncores(topo), cores, MAX_RANKS, &got, err, sizeof(err)))
            die("%s", err);
        if (got != n) die("-n %d does not match the %d cores of --cores", n, got);
    } else if (osmp_topo_place(topo, bind, n, cores, err, sizeof(err))) {
        die("%s", err);
    }
    if (hierarchy && strcmp(hierarchy, "auto") != 0) {
        struct osmp_spec_level lv[OSMP_SPEC_MAX_LEVELS];
        int nl;
        if (osmp_spec_parse(hierarchy, lv, &nl, err, sizeof(err))) die("%s", err);
    }
    char topo_env[PATH_MAX + 16] = "";
    if (xml) {
        char *abs = realpath(xml, NULL);
        snprintf(topo_env, sizeof(topo_env), "%s", abs ? abs : xml);
        free(abs);
    } else if (synthetic) {
        snprintf(topo_env, sizeof(topo_env), "synthetic:%s", synthetic);
    }

    /* The rendezvous lives in an anonymous memfd that the children inherit. */
    size_t rv_bytes = osmp__rv_bytes(n, RV_MAXLEN);
    int fd = memfd_create("osmp-run", 0);
    if (fd < 0 || ftruncate(fd, (off_t)rv_bytes) != 0) die("cannot create the rendezvous: %s", strerror(errno));
    struct osmp__rv *rv = mmap(NULL, rv_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (rv == MAP_FAILED) die("cannot map the rendezvous: %s", strerror(errno));
    osmp__rv_init(rv, n, RV_MAXLEN);

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    children = calloc((size_t)n, sizeof(pid_t));
    if (!children) die("out of memory");
    pid_t self = getpid();
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            kill_all(SIGKILL);
            die("fork failed: %s", strerror(errno));
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the launcher */
            if (getppid() != self) _exit(127);
            char v[32];
            snprintf(v, sizeof(v), "%d", fd);
            setenv("OSMP_RUN_FD", v, 1);
            snprintf(v, sizeof(v), "%d", r);
            setenv("OSMP_RUN_RANK", v, 1);
            snprintf(v, sizeof(v), "%d", n);
            setenv("OSMP_RUN_SIZE", v, 1);
            snprintf(v, sizeof(v), "%d", cores[r]);
            setenv("OSMP_RUN_CORE", v, 1);
            if (topo_env[0]) setenv("OSMP_TOPOLOGY", topo_env, 1);
            /* Another machine's topology only plans; osmp-probe's XML of this host is this machine. */
            if (osmp_topo_is_this_machine(topo)) bind_to(osmp_topo_domain(topo, OSMP_DOMAIN_CORE, cores[r]));
            if (hierarchy) setenv("OSMP_HIERARCHY", hierarchy, 1);
            execvp(argv[optind], argv + optind);
            if (r == 0) /* what runnable() could not foresee (e.g. a bad ELF), said once */
                fprintf(stderr, "osmp-run: cannot run %s: %s\n", argv[optind], strerror(errno));
            _exit(127);
        }
        children[r] = pid;
        nchildren = r + 1;
    }
    close(fd);

    /* A rank killed by a signal is the cause; ranks that then exit with an error
     * (OSMP_ERR_PEER_LOST) are its consequence, even when they are reaped first. */
    int result = 0, result_is_signal = 0, remaining = n;
    time_t start = time(NULL), stop_at = 0;
    while (remaining > 0) {
        int status;
        /* A rank that ended, left a zombie: its pid cannot be another
         * process's until it is reaped, so the names it made while creating a
         * team go now, before waitpid frees the pid (the cleanup at the end
         * judges by liveness, which a reused pid can fool). */
        siginfo_t si;
        si.si_pid = 0;
        pid_t pid = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 ? si.si_pid : -1;
        if (pid > 0) {
            osmp__seg_reap_pid(pid);
            pid = waitpid(pid, &status, 0);
        }
        if (pid == 0) {
            if (got_signal) {
                kill_all(SIGKILL);
                if (!result) result = 128 + got_signal;
                got_signal = 0;
            }
            if (timeout && time(NULL) - start >= timeout && !result) {
                fprintf(stderr, "osmp-run: timeout after %d s, stopping all ranks\n", timeout);
                kill_all(SIGKILL);
                result = 124;
            }
            if (stop_at && time(NULL) >= stop_at) {
                fprintf(stderr, "osmp-run: %d rank(s) still running %d s after the failure, killing them\n",
                        remaining, grace);
                kill_all(SIGKILL);
                stop_at = 0;
            }
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int r = 0;
        while (r < n && children[r] != pid) r++;
        if (r == n) continue;
        children[r] = -1;
        remaining--;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
        int signaled = WIFSIGNALED(status) && !killed_by_us;
        if (code && (!result || (signaled && !result_is_signal))) {
            if (signaled)
                fprintf(stderr, "osmp-run: rank %d killed by signal %d (%s)\n", r, WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
            else
                fprintf(stderr, "osmp-run: rank %d exited with status %d\n", r, code);
            int first = !result;
            result = code;
            result_is_signal = signaled;
            /* Ranks still joining learn it here; the others from their waits on the team. */
            osmp__cas32(&rv->lost, 0, (uint32_t)r + 1);
            if (first && grace == 0)
                kill_all(SIGKILL);
            else if (first)
                stop_at = time(NULL) + grace;
        }
    }
    osmp_shm_cleanup(NULL); /* segments of ranks killed while their team was being created */
    munmap(rv, rv_bytes);
    free(children);
    free(cores);
    osmp_topo_destroy(topo);
    return result;
}
