// SPDX-License-Identifier: Apache-2.0
/*
 * Root's files through a verified directory descriptor (safe_dir.h).
 *
 * Invariants: every open of a file is O_NOFOLLOW and relative to a directory
 * fd whose fstat was checked; a file is only ever written under a temporary
 * name created O_EXCL, then renamed in the same directory; removal is by
 * unlinkat after an fstatat(AT_SYMLINK_NOFOLLOW) that says regular file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <stdlib.h>             /* arc4random_buf */
#else
#include <sys/random.h>
#endif

#include "safe_dir.h"

static bool trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

const char *safe_dir_problem(const struct stat *st)
{
	static __thread char why[96];

	if (S_ISLNK(st->st_mode))
		return "is a symbolic link";
	if (!S_ISDIR(st->st_mode))
		return "is not a directory";
	if (!trusted(st->st_uid)) {
		snprintf(why, sizeof(why), "is owned by uid %u (not root or you)", (unsigned)st->st_uid);
		return why;
	}
	if (st->st_mode & 022) {
		snprintf(why, sizeof(why), "is writable by other users (mode %04o)", (unsigned)(st->st_mode & 07777));
		return why;
	}
	return NULL;
}

int safe_dir_openat(int parent_fd, const char *name, bool create, const char *shown, char *err, size_t errlen)
{
	const char *why;
	struct stat st;
	int fd, ret;

	if (create && mkdirat(parent_fd, name, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "failed to create directory %s: %s", shown, strerror(-ret));
		return ret;
	}
	fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if ((ret == -ELOOP || ret == -ENOTDIR) && fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			snprintf(err, errlen, "refusing directory %s: it %s", shown,
				 S_ISLNK(st.st_mode) ? "is a symbolic link" : "is not a directory");
		else
			snprintf(err, errlen, "failed to open directory %s: %s", shown, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "failed to stat directory %s: %s", shown, strerror(-ret));
		close(fd);
		return ret;
	}
	why = safe_dir_problem(&st);
	if (why) {
		snprintf(err, errlen, "refusing directory %s: it %s", shown, why);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int safe_dir_open(const char *path, bool create, char *err, size_t errlen)
{
	return safe_dir_openat(AT_FDCWD, path, create, path, err, errlen);
}

int safe_dir_create_tmp(int dir_fd, const char *name, char *tmp)
{
	uint64_t r;
	int fd = -1;

	for (unsigned attempt = 0; attempt < 16; attempt++) {
#if defined(__APPLE__)
		arc4random_buf(&r, sizeof(r));
#else
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r ^= (uint64_t)attempt * 0x9e3779b97f4a7c15ull + (uint64_t)(uintptr_t)&r;
#endif
		if (snprintf(tmp, SAFE_DIR_TMP_MAX, ".%.255s.%d.%016llx.tmp", name, (int)getpid(),
			     (unsigned long long)r) >= SAFE_DIR_TMP_MAX)
			return -ENAMETOOLONG;
		fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	/* the umask may have cleared bits, never added them: 0600 whatever it is */
	if (fchmod(fd, 0600) < 0) {
		int ret = -errno;

		close(fd);
		unlinkat(dir_fd, tmp, 0);
		return ret;
	}
	return fd;
}

int safe_dir_publish(int dir_fd, int fd, const char *tmp, const char *name)
{
	if (fsync(fd) < 0 || renameat(dir_fd, tmp, dir_fd, name) < 0) {
		int ret = -errno;

		unlinkat(dir_fd, tmp, 0);
		return ret;
	}
	return 0;
}

int safe_dir_write_file(int dir_fd, const char *name, const void *data, size_t len)
{
	char tmp[SAFE_DIR_TMP_MAX];
	const char *p = data;
	int fd = safe_dir_create_tmp(dir_fd, name, tmp), ret = 0;

	if (fd < 0)
		return fd;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!ret)
		ret = safe_dir_publish(dir_fd, fd, tmp, name);
	else
		unlinkat(dir_fd, tmp, 0);
	close(fd);
	return ret;
}

int safe_dir_read_file(int dir_fd, const char *name, size_t max, char **data, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, ret = 0;

	*data = NULL;
	*len = 0;
	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !trusted(st.st_uid)) {
		ret = -EPERM;
		goto cleanup;
	}
	if ((uint64_t)st.st_size > max) {
		ret = -EFBIG;
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;      /* shorter than its fstat: what is there */
		got += (size_t)n;
	}
	buf[got] = 0;
	*data = buf;
	*len = got;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return ret;
}

int safe_dir_unlink(int dir_fd, const char *name)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	return unlinkat(dir_fd, name, 0) < 0 ? -errno : 0;
}

/* The writer pid in ".<name>.<pid>.<16 hex>.tmp", 0 when the name has none
 * (older versions' ".<name>.tmp"), -1 when it is no temporary file. */
static long tmp_owner(const char *n)
{
	size_t len = strlen(n);
	const char *hex, *pid;
	char *end;
	long v;

	if (n[0] != '.' || len < 6 || strcmp(n + len - 4, ".tmp"))
		return -1;
	if (len < 1 + 1 + 1 + 1 + 16 + 4)
		return 0;
	hex = n + len - 4 - 16;
	if (hex[-1] != '.' || strspn(hex, "0123456789abcdef") != 16)
		return 0;
	for (pid = hex - 2; pid > n && *pid >= '0' && *pid <= '9'; pid--)
		;
	if (*pid != '.' || pid == hex - 2)
		return 0;
	v = strtol(pid + 1, &end, 10);
	return end == hex - 1 && v > 0 ? v : 0;
}

unsigned safe_dir_sweep_tmp(int dir_fd, pid_t pid)
{
	unsigned removed = 0;
	struct dirent *de;
	DIR *dp;
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return 0;
	}
	while ((de = readdir(dp))) {
		long owner = tmp_owner(de->d_name);

		if (owner < 0)
			continue;
		if (pid ? owner != pid : owner > 0 && (kill((pid_t)owner, 0) == 0 || errno != ESRCH))
			continue;
		if (safe_dir_unlink(dir_fd, de->d_name) == 0)
			removed++;
	}
	closedir(dp);
	return removed;
}
