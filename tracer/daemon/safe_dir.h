/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Files that root keeps in a directory, reached only through a verified
 * directory descriptor: the C twin of tracer/safe_files.py (issue 23).
 *
 * A path is a name another user may re-point between a check and a use, so
 * nothing here checks a path and uses it again.  A directory is opened once
 * (O_DIRECTORY | O_NOFOLLOW) and its fstat checked; every file is then created,
 * renamed and removed relative to that fd (openat / renameat / unlinkat), so
 * moving the directory away, or swapping it with another one
 * (renameat2 RENAME_EXCHANGE), changes nothing for the writer.
 *
 * Temporary files are named ".<name>.<pid>.<16 hex>.tmp": the pid of the
 * process that writes it, so whoever reaps a killed writer removes exactly
 * its files, and a start-up sweep removes those of writers no longer alive.
 */
#ifndef SAFE_DIR_H
#define SAFE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Why a directory's fstat makes it unsafe for root's files, or NULL: a
 * directory owned by root or the caller, not writable by group or others
 * (sticky or not: others could add entries beside ours). */
const char *safe_dir_problem(const struct stat *st);

/* A verified descriptor of path (create: mkdir 0700 when missing, the parent
 * must exist), or -errno with err saying why in one line ("refusing directory
 * X: it is writable by other users (mode 0777)"). */
int safe_dir_open(const char *path, bool create, char *err, size_t errlen);
/* The same for name inside the verified directory parent_fd (shown: the
 * path for messages). */
int safe_dir_openat(int parent_fd, const char *name, bool create, const char *shown, char *err,
		    size_t errlen);

/* A new empty file for name: ".<name>.<pid>.<hex>.tmp" in dir_fd, created
 * O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600 whatever the umask.  Its fd, or
 * -errno; tmp (at least SAFE_DIR_TMP_MAX bytes) gets the name. */
#define SAFE_DIR_TMP_MAX 320
int safe_dir_create_tmp(int dir_fd, const char *name, char *tmp);
/* fsync fd, then rename tmp over name in dir_fd (a link planted at name is
 * replaced, never followed).  On failure tmp is removed.  0 or -errno. */
int safe_dir_publish(int dir_fd, int fd, const char *tmp, const char *name);
/* A whole file written the way above.  0 or -errno (nothing left behind). */
int safe_dir_write_file(int dir_fd, const char *name, const void *data, size_t len);
/* Reads name (a regular file of root's or the caller's, never a link, at most
 * max bytes) into a NUL-terminated malloc'ed buffer.  0, or -errno (-ENOENT
 * when missing, -EFBIG when larger than max). */
int safe_dir_read_file(int dir_fd, const char *name, size_t max, char **data, size_t *len);
/* Removes name when it is a regular file (never a link, never a directory).
 * 0, or -errno (-ENOENT when it is not there). */
int safe_dir_unlink(int dir_fd, const char *name);

/* Removes the temporary files (above) of process pid, or, with pid 0, those
 * of every writer that is no longer alive (and ".<name>.tmp" leftovers of
 * older versions).  Returns how many were removed. */
unsigned safe_dir_sweep_tmp(int dir_fd, pid_t pid);

#endif /* SAFE_DIR_H */
