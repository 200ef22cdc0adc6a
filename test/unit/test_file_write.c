/* test_file_write.c: unit tests for lib/support/file_write (write_file_atomic): new and
 * existing files (content, mode kept, no temporary file left), a symbolic link (its target is
 * replaced, the link stays), devices written in place (/dev/null ok, /dev/full fails with
 * ENOSPC), a missing directory and a directory as destination (the OS reason in the message),
 * a write that fails half-way (file size limit): the old file stays, and a name too long for
 * the temporary suffix (written in place).
 *
 * Usage: test_file_write    (prints "N passed, M failed"; exit status 1 on failure) */
#define _XOPEN_SOURCE 700
#include "support/file_write.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct Tally {
    long passed, failed;
} Tally;

#define CHECK(t, cond, ...)                                                         \
    do {                                                                            \
        if (cond) {                                                                 \
            (t)->passed++;                                                          \
        } else {                                                                    \
            (t)->failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                           \
            fputc('\n', stderr);                                                    \
        }                                                                           \
    } while (0)

static char dir[256];

static const char *
at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static bool
has_content(const char *path, const char *want)
{
    char got[256] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    return n == strlen(want) && memcmp(got, want, n) == 0;
}

/* entries of dir other than . and .. */
static int
entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

int
main(void)
{
    Tally t = {0, 0};
    char err[512];
    snprintf(dir, sizeof dir, "%s/qdqc-file-write-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }

    /* a new file, then replaced; its mode is kept */
    CHECK(&t, write_file_atomic(at("a.o"), "first", 5, err, sizeof err), "%s", err);
    CHECK(&t, has_content(at("a.o"), "first"), "content");
    CHECK(&t, chmod(at("a.o"), 0640) == 0, "chmod");
    CHECK(&t, write_file_atomic(at("a.o"), "second!", 7, err, sizeof err), "%s", err);
    CHECK(&t, has_content(at("a.o"), "second!"), "content after replace");
    struct stat st;
    CHECK(&t, stat(at("a.o"), &st) == 0 && (st.st_mode & 0777) == 0640, "mode %o",
          (unsigned)(st.st_mode & 0777));
    CHECK(&t, entries() == 1, "a temporary file was left: %d entries", entries());

    /* a symbolic link: the target is replaced, the link stays a link */
    CHECK(&t, symlink("a.o", at("link.o")) == 0, "symlink");
    CHECK(&t, write_file_atomic(at("link.o"), "via link", 8, err, sizeof err), "%s", err);
    CHECK(&t, lstat(at("link.o"), &st) == 0 && S_ISLNK(st.st_mode), "link replaced by a file");
    CHECK(&t, has_content(at("a.o"), "via link"), "target content");

    /* devices are written in place */
    CHECK(&t, write_file_atomic("/dev/null", "x", 1, err, sizeof err), "%s", err);
    err[0] = 0;
    CHECK(&t, !write_file_atomic("/dev/full", "x", 1, err, sizeof err), "/dev/full accepted");
    CHECK(&t, strcmp(err, "cannot write '/dev/full': No space left on device") == 0, "%s", err);

    /* a missing directory, a directory */
    CHECK(&t, !write_file_atomic(at("nodir/x.o"), "x", 1, err, sizeof err), "accepted");
    CHECK(&t, strstr(err, "nodir/x.o': No such file or directory") != NULL, "%s", err);
    CHECK(&t, !write_file_atomic(dir, "x", 1, err, sizeof err), "accepted");
    CHECK(&t, strstr(err, "': Is a directory") != NULL, "%s", err);

    /* a write that fails half-way: the old content stays, no temporary file */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    CHECK(&t, setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    static char big[65536];
    memset(big, 'z', sizeof big);
    CHECK(&t, !write_file_atomic(at("a.o"), big, sizeof big, err, sizeof err), "accepted");
    CHECK(&t, strstr(err, "a.o': File too large") != NULL, "%s", err);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(&t, has_content(at("a.o"), "via link"), "old content lost");
    CHECK(&t, entries() == 2, "a temporary file was left: %d entries", entries());

    /* a name that fits NAME_MAX (255) but not with the temporary suffix: written in place */
    char longname[251];
    memset(longname, 'n', 250);
    longname[250] = 0;
    CHECK(&t, write_file_atomic(at(longname), "long", 4, err, sizeof err), "%s", err);
    CHECK(&t, has_content(at(longname), "long"), "long name content");
    unlink(at(longname));

    /* empty data */
    CHECK(&t, write_file_atomic(at("empty"), "", 0, err, sizeof err), "%s", err);
    CHECK(&t, stat(at("empty"), &st) == 0 && st.st_size == 0, "empty file");

    unlink(at("empty"));
    unlink(at("link.o"));
    unlink(at("a.o"));
    rmdir(dir);
    printf("%ld passed, %ld failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
