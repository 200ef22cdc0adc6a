/* files.c: where qdqc-fuzz keeps what it finds. A reproducer or a failing mutant is the
 * fuzzer's only product, so its output directory is created up front (with its parents, like
 * `mkdir -p`) and every write is checked to the last byte: a file that could not be written is
 * reported with the OS's reason and never announced as "written to PATH". */
#include "fuzz.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

bool
fz_mkdirs(const char *dir)
{
    char buf[1024];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) {
        fprintf(stderr, "qdqc-fuzz: cannot create '%s': %s\n", dir,
                n ? "path too long" : "empty path");
        return false;
    }
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1; ; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        struct stat st;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "qdqc-fuzz: cannot create %s: %s\n", buf, strerror(errno));
            return false;
        }
        if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "qdqc-fuzz: cannot create %s: %s\n", buf,
                    errno == 0 || errno == EEXIST ? "exists and is not a directory" : strerror(errno));
            return false;
        }
        *p = c;
        if (c == '\0')
            break;
    }
    return true;
}

bool
fz_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "qdqc-fuzz: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    errno = 0;
    size_t put = len ? fwrite(data, 1, len, f) : 0;
    int err = put == len ? 0 : (errno ? errno : EIO);
    if (fflush(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (err) {
        fprintf(stderr, "qdqc-fuzz: cannot write %s: %s\n", path, strerror(err));
        remove(path);
        return false;
    }
    return true;
}
