/* file_write.c: see file_write.h. */
#define _XOPEN_SOURCE 700
#include "support/file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
failed(char *err, size_t errlen, const char *path, int e)
{
    if (err && errlen) {
        if (strcmp(path, "-") == 0)
            snprintf(err, errlen, "cannot write to standard output: %s", strerror(e));
        else
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
    }
    return false;
}

/* All of data to fd; 0 or the errno of the failing write. */
static int
write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (k == 0)
            return EIO;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Open path with flags, write, close; 0 or an errno. */
static int
write_in_place(const char *path, int flags, mode_t mode, const void *data, size_t len)
{
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0)
        return errno;
    int e = write_all(fd, data, len);
    if (close(fd) != 0 && !e)
        e = errno;
    return e;
}

bool
write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0) {
        errno = 0;
        if ((len && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0 ||
            ferror(stdout))
            return failed(err, errlen, path, errno ? errno : EIO);
        return true;
    }
    /* a symbolic link: replace what it points to, not the link */
    char *resolved = NULL;
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && S_ISLNK(st.st_mode)) {
        resolved = realpath(path, NULL);
        exists = resolved && stat(resolved, &st) == 0;
        if (!resolved) { /* dangling: open() creates the target */
            int e = write_in_place(path, O_WRONLY | O_CREAT | O_TRUNC, 0666, data, len);
            return e ? failed(err, errlen, path, e) : true;
        }
    }
    const char *dest = resolved ? resolved : path;
    if (exists && S_ISDIR(st.st_mode)) {
        free(resolved);
        return failed(err, errlen, path, EISDIR);
    }
    if (exists && !S_ISREG(st.st_mode)) { /* a device or a FIFO: write to it directly */
        int e = write_in_place(dest, O_WRONLY | O_TRUNC, 0, data, len);
        free(resolved);
        return e ? failed(err, errlen, path, e) : true;
    }
    size_t n = strlen(dest) + 48;
    char *tmp = malloc(n);
    if (!tmp) {
        free(resolved);
        return failed(err, errlen, path, ENOMEM);
    }
    int fd = -1, e = 0;
    for (unsigned k = 0; fd < 0 && k < 64; k++) {
        snprintf(tmp, n, "%s.tmp%ld.%u", dest, (long)getpid(), k);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        e = errno;
        /* No temporary file: a writable file in a directory we may not create files in, or a
         * name too long for the suffix. Write in place (a new file is removed on failure). */
        if ((exists && (e == EACCES || e == EPERM || e == EROFS) && access(dest, W_OK) == 0) ||
            e == ENAMETOOLONG) {
            e = write_in_place(dest, O_WRONLY | O_CREAT | O_TRUNC, 0666, data, len);
            if (e && !exists)
                unlink(dest);
        }
    } else {
        e = write_all(fd, data, len);
        if (!e && exists && fchmod(fd, st.st_mode & 07777) != 0)
            e = errno;
        if (close(fd) != 0 && !e)
            e = errno;
        if (!e && rename(tmp, dest) != 0)
            e = errno;
        if (e)
            unlink(tmp);
    }
    free(tmp);
    free(resolved);
    return e ? failed(err, errlen, path, e) : true;
}
