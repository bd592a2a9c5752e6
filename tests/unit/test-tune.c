/*
 * The tune table (src/coll/tune.c, docs/tuning.md): parsing, every damage named
 * with its line, and what a team does with a table (osmp_team_choice): bands,
 * the built-in choice beyond them, "mpi" bands, settings, a table of another
 * topology refused.
 */
#include <stdint.h>

#include "coll/tune.h"
#include "test.h"

#define SIG "topology 0123456789abcdef 4 cores, 1 package\n"

static struct osmp__tune *parse(const char *text, int *line, char *why)
{
    *line = -1;
    return osmp__tune_parse(text, "t", osmp__tune_choice_valid, line, why, 300);
}

static void check_bad(const char *text, int want_line, const char *want_why)
{
    int line;
    char why[300];
    struct osmp__tune *t = parse(text, &line, why);
    CHECK(t == NULL);
    CHECK_INT(line, want_line);
    if (!strstr(why, want_why)) {
        fprintf(stderr, "why \"%s\" lacks \"%s\"\n", why, want_why);
        test_failures++;
    }
    free(t);
}

static void test_parse(void)
{
    int line;
    char why[300];
    struct osmp__tune *t = parse(SIG "# a comment\n\nallreduce * 0 1K direct # trailing\nallreduce * 1025 4M kary:4\n"
                                     "allreduce * 4194305 max mpi\nbcast 8 0 max auto\nset 8 chunk 64K\n"
                                     "set * single_copy_min.gather never\nset 8 pipeline_depth 16\n",
                                 &line, why);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_INT(t->sig, 0x0123456789abcdefULL);
    CHECK_STR(t->machine, "4 cores, 1 package");
    CHECK_INT(t->nrows, 7);
    CHECK_INT(t->rows[0].line, 4);
    CHECK_INT(t->rows[0].ranks, 0);
    CHECK_INT(t->rows[0].hi, 1024);
    CHECK_INT(t->rows[1].lo, 1025);
    CHECK_INT(t->rows[1].hi, 4194304);
    CHECK_STR(t->rows[1].choice, "kary:4");
    CHECK(t->rows[2].hi == UINT64_MAX);
    CHECK_INT(t->rows[3].ranks, 8);
    CHECK_INT(t->rows[4].setting, OSMP__TUNE_CHUNK);
    CHECK_INT(t->rows[4].value, 65536);
    CHECK_INT(t->rows[5].setting, OSMP__TUNE_SINGLE_COPY_MIN);
    CHECK_INT(t->rows[5].coll, OSMP_COLL_GATHER);
    CHECK(t->rows[5].value == UINT64_MAX);
    CHECK_INT(t->rows[6].value, 16);
    char name[24];
    int radix = -1;
    CHECK_INT(osmp__tune_alg(&t->rows[1], name, sizeof(name), &radix), 1);
    CHECK_STR(name, "kary");
    CHECK_INT(radix, 4);
    CHECK_INT(osmp__tune_alg(&t->rows[2], name, sizeof(name), &radix), 0); /* mpi */
    CHECK_INT(osmp__tune_alg(&t->rows[3], name, sizeof(name), &radix), 0); /* auto */
    free(t);

    check_bad("allreduce * 0 max direct\n", 1, "topology");
    check_bad("", 0, "no topology line");
    check_bad(SIG "allreduce * 8 max direct\n", 2, "starts above 0");
    check_bad(SIG "allreduce * 0 8 direct\nallreduce * 10 max flat\n", 3, "does not start after the last one");
    check_bad(SIG "allreduce * 0 max direct\nallreduce * 0 max flat\n", 3, "does not start after the last one");
    check_bad(SIG "allreduse * 0 max direct\n", 2, "unknown collective \"allreduse\"");
    check_bad(SIG "allreduce * 0 max slized\n", 2, "allreduce has no algorithm \"slized\"");
    check_bad(SIG "allreduce * 0 max kary:0\n", 2, "no algorithm \"kary:0\"");
    check_bad(SIG "allreduce 0 0 max direct\n", 2, "bad RANKS");
    check_bad(SIG "allreduce * 9 8 direct\n", 2, "bad byte band");
    check_bad(SIG "allreduce * 0 max\n", 2, "expected COLLECTIVE");
    check_bad(SIG "set * chunk 32\n", 2, "out of range");
    check_bad(SIG "set * pipeline_depth 65\n", 2, "out of range");
    check_bad(SIG "set * colour blue\n", 2, "unknown setting");
    check_bad(SIG "set * single_copy_min.allreduse 0\n", 2, "unknown collective");
    check_bad(SIG "set * chunk\n", 2, "expected set RANKS NAME VALUE");
}

/* A team of one on this machine with `table` (its own topology line first). */
static osmp_team_t team_with(const char *rows, int same_machine)
{
    osmp_topo_t topo;
    CHECK_INT(osmp_topo_load(OSMP_TOPO_THIS_MACHINE, NULL, 0, &topo), OSMP_OK);
    char words[160], text[2048];
    uint64_t sig = osmp__tune_signature(topo, words, sizeof(words));
    snprintf(text, sizeof(text), "topology %016llx %s\n%s", (unsigned long long)(same_machine ? sig : sig + 1),
             words, rows);
    osmp_topo_destroy(topo);
    struct osmp_team_params p = {.mask = OSMP_TEAM_PARAM_TUNE, .rank = 0, .size = 1, .tune = text};
    osmp_team_t team = NULL;
    CHECK_INT(osmp_team_create(&p, &team), OSMP_OK);
    return team;
}

static void check_choice(osmp_team_t team, osmp_coll_t c, size_t bytes, const char *name, const char *from, size_t lo,
                         size_t hi)
{
    struct osmp_choice ch;
    CHECK_INT(osmp_team_choice(team, c, bytes, &ch), OSMP_OK);
    CHECK_STR(ch.name, name);
    CHECK_STR(ch.from, from);
    CHECK_INT(ch.lo, lo);
    CHECK(ch.hi == hi);
}

static void test_team(void)
{
    /* Without a table: the built-in selection (a team of one: allreduce's flat tree). */
    osmp_team_t plain = team_with("", 1), team;
    struct osmp_choice ch;
    CHECK_INT(osmp_team_choice(plain, OSMP_COLL_ALLREDUCE, 8, &ch), OSMP_OK);
    CHECK_STR(ch.from, "table");
    char builtin[32];
    snprintf(builtin, sizeof(builtin), "%s", ch.name);
    CHECK_INT(osmp_team_choice(plain, OSMP_COLL_COUNT, 8, &ch), OSMP_ERR_INVALID_ARG);
    CHECK_INT(osmp_team_choice(plain, OSMP_COLL_ALLREDUCE, 8, NULL), OSMP_ERR_INVALID_ARG);

    team = team_with("allreduce 1 0 100 kary:4\nallreduce 1 101 1000 mpi\nallreduce 1 1001 2000 auto\n"
                     "allreduce 1 2001 max sliced\nbcast 2 0 max kary:2\n",
                     1);
    check_choice(team, OSMP_COLL_ALLREDUCE, 0, "kary:4", "tune:2", 0, 48);      /* the inline class ends at 48 */
    check_choice(team, OSMP_COLL_ALLREDUCE, 64, "kary:4", "tune:2", 49, 100);
    check_choice(team, OSMP_COLL_ALLREDUCE, 101, "mpi", "tune:3", 101, 1000);
    check_choice(team, OSMP_COLL_ALLREDUCE, 1500, builtin, "table", 1001, 2000); /* auto: the built-in choice */
    check_choice(team, OSMP_COLL_ALLREDUCE, 4096, "sliced", "tune:5", 2001, 65535);
    check_choice(team, OSMP_COLL_ALLREDUCE, 1 << 20, "sliced", "tune:5", 65536, SIZE_MAX);
    /* A rule for teams of 2 holds nothing for a team of one. */
    CHECK_INT(osmp_team_choice(team, OSMP_COLL_BCAST, 8, &ch), OSMP_OK);
    CHECK_STR(ch.from, "table");
    /* What the call runs is the choice: an allreduce through the table's kary:4 and sliced. */
    double in[1024], out[1024];
    for (int i = 0; i < 1024; i++) in[i] = i;
    CHECK_INT(osmp_allreduce(team, in, out, 8, OSMP_DOUBLE, OSMP_SUM), OSMP_OK);
    CHECK(out[7] == 7);
    CHECK_INT(osmp_allreduce(team, in, out, 1024, OSMP_DOUBLE, OSMP_SUM), OSMP_OK);
    CHECK(out[1023] == 1023);
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);

    /* Another topology's table: refused, the built-in selection runs. */
    team = team_with("allreduce * 0 max kary:4\n", 0);
    check_choice(team, OSMP_COLL_ALLREDUCE, 8, builtin, "table", 0, 48);
    CHECK_INT(osmp_team_destroy(team), OSMP_OK);
    CHECK_INT(osmp_team_destroy(plain), OSMP_OK);

    /* A tune parameter without its text is a bad argument. */
    struct osmp_team_params p = {.mask = OSMP_TEAM_PARAM_TUNE, .rank = 0, .size = 1, .tune = NULL};
    CHECK_INT(osmp_team_create(&p, &team), OSMP_ERR_INVALID_ARG);
}

int main(void)
{
    test_parse();
    test_team();
    return test_failures ? 1 : 0;
}
