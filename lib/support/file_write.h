/* file_write.h: write a whole file so that a failure leaves nothing behind.
 *
 * Self-contained (libc and POSIX only, no diagnostics engine): the library (object/header
 * writer, .npy writer) and the qdqc command line share this one implementation. */
#ifndef QDQC_SUPPORT_FILE_WRITE_H
#define QDQC_SUPPORT_FILE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

/* Write len bytes of data to path. "-" is standard output (written and flushed, errors
 * checked). A new file or an existing regular file (or a symbolic link to one) is written to a
 * temporary file in the destination's directory, closed and renamed over the destination, so
 * on failure the destination is untouched and the temporary file removed; the new file gets
 * the mode a plain create would give (0666 less the umask). Anything else that exists (a
 * device such as /dev/null or /dev/full, a FIFO) is opened and written in place, every write
 * checked; so is a file when no temporary file can be made beside it (a name too long for the
 * temporary suffix, a read-only directory holding a writable file). False with "cannot write 'PATH': REASON" (REASON from strerror) in err. */
bool
write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

#endif
