/*
 * Runs a fuzz harness's LLVMFuzzerTestOneInput once on every file named on the command line and on
 * every file of every directory named (files starting with '.' skipped), in name order: the corpus and
 * the regressions of a target replayed as an ordinary test, in builds without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, size = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + size, 1, cap - size, f)) > 0) {
        size += got;
        if (size == cap) {
            uint8_t *more = realloc(buf, cap *= 2);
            if (!more) free(buf);
            buf = more;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that a read past the input is an ASan report here as under libFuzzer. */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, size);
    free(buf);
    fprintf(stderr, "replay %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int skip_hidden(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int files = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            errors++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i]))
                errors++;
            else
                files++;
            continue;
        }
        struct dirent **list;
        int n = scandir(argv[i], &list, skip_hidden, by_name);
        if (n < 0) {
            perror(argv[i]);
            errors++;
            continue;
        }
        for (int k = 0; k < n; k++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], list[k]->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(path))
                    errors++;
                else
                    files++;
            }
            free(list[k]);
        }
        free(list);
    }
    printf("%d inputs replayed, %d unreadable\n", files, errors);
    return errors ? 1 : 0;
}
