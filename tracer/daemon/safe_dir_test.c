// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of safe_dir.c on real files in a private temporary directory.
 *
 *   open      a link, a file, a directory others may write (sticky or not)
 *             are refused with one line saying why; create makes it 0700
 *   swap      a directory renamed away, or exchanged with another one
 *             (renameat2 RENAME_EXCHANGE), after it was opened: files still
 *             go into it, the other one is untouched
 *   write     a link planted at the name is replaced, never followed; the
 *             file is 0600 whatever the umask; no temporary file remains
 *   read      a link or FIFO is refused, a file above the bound is -EFBIG
 *   unlink    only regular files: a link or directory stays
 *   sweep     temporary files of a dead writer and older versions' go; a
 *             live writer's, links and other files stay; by pid: that
 *             writer's only
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "safe_dir.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

struct fixture {
	char root[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->root, sizeof(f->root), "/tmp/safe_dir_test.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static char *path(const struct fixture *f, const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, 256, "%s/%s", f->root, name);
	return p;
}

static void put(const char *p, const char *text)
{
	FILE *fp = fopen(p, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static size_t entries(const char *dir)
{
	char cmd[300], buf[16] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(fgets(buf, sizeof(buf), p));
	pclose(p);
	return (size_t)atoi(buf);
}

static void test_open_refuses(void **state)
{
	struct fixture *f = *state;
	char err[256];
	struct stat st;
	int fd;

	assert_int_equal(mkdir(path(f, "open"), 0777), 0);
	chmod(path(f, "open"), 0777);
	assert_int_equal(safe_dir_open(path(f, "open"), false, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "is writable by other users (mode 0777)"));
	chmod(path(f, "open"), 01777);
	assert_int_equal(safe_dir_open(path(f, "open"), false, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "(mode 1777)"));

	assert_int_equal(symlink(path(f, "open"), path(f, "link")), 0);
	assert_true(safe_dir_open(path(f, "link"), false, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "is a symbolic link"));
	put(path(f, "file"), "x");
	assert_true(safe_dir_open(path(f, "file"), true, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "is not a directory"));

	umask(0);
	fd = safe_dir_open(path(f, "made"), true, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(fd);
	umask(022);
}

/* The attack of issue 23: the directory swapped for another after the check. */
static void test_swap_after_open(void **state)
{
	struct fixture *f = *state;
	char err[256];
	struct stat st;
	int fd;

	fd = safe_dir_open(path(f, "state"), true, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(mkdir(path(f, "other"), 0700), 0);
	put(path(f, "other/precious.argus"), "precious");
	assert_int_equal(syscall(SYS_renameat2, AT_FDCWD, path(f, "state"), AT_FDCWD, path(f, "other"),
				 RENAME_EXCHANGE), 0);
	assert_int_equal(safe_dir_write_file(fd, "x.json", "{}", 2), 0);
	assert_int_equal(safe_dir_unlink(fd, "precious.argus"), -ENOENT);
	/* "other" is now where "state" was, and the reverse */
	assert_int_equal(stat(path(f, "other/x.json"), &st), 0);
	assert_int_equal(stat(path(f, "state/precious.argus"), &st), 0);
	assert_int_equal(entries(path(f, "state")), 1);
	close(fd);
}

static void test_write_replaces_a_link(void **state)
{
	struct fixture *f = *state;
	char err[256], buf[32] = "";
	struct stat st;
	FILE *fp;
	int fd = safe_dir_open(path(f, "d"), true, err, sizeof(err));

	assert_true(fd >= 0);
	put(path(f, "victim"), "root-only");
	assert_int_equal(symlink(path(f, "victim"), path(f, "d/index")), 0);
	umask(0);
	assert_int_equal(safe_dir_write_file(fd, "index", "new\n", 4), 0);
	umask(022);
	assert_int_equal(lstat(path(f, "d/index"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	fp = fopen(path(f, "victim"), "r");
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "root-only");
	assert_int_equal(entries(path(f, "d")), 1);      /* no temporary file left */
	close(fd);
}

static void test_tmp_name_and_publish(void **state)
{
	struct fixture *f = *state;
	char err[256], tmp[SAFE_DIR_TMP_MAX], want[64];
	int fd = safe_dir_open(path(f, "d"), true, err, sizeof(err)), t;

	assert_true(fd >= 0);
	t = safe_dir_create_tmp(fd, "a.argus", tmp);
	assert_true(t >= 0);
	snprintf(want, sizeof(want), ".a.argus.%d.", (int)getpid());
	assert_memory_equal(tmp, want, strlen(want));
	assert_int_equal(strlen(tmp), strlen(want) + 16 + 4);
	assert_int_equal(write(t, "abc", 3), 3);
	assert_int_equal(safe_dir_publish(fd, t, tmp, "a.argus"), 0);
	close(t);
	assert_int_equal(entries(path(f, "d")), 1);
	assert_int_equal(access(path(f, "d/a.argus"), R_OK), 0);
	close(fd);
}

static void test_read_refuses(void **state)
{
	struct fixture *f = *state;
	char err[256], *data;
	size_t len;
	int fd = safe_dir_open(path(f, "d"), true, err, sizeof(err));

	assert_true(fd >= 0);
	put(path(f, "d/ok"), "id-1\nid-2\n");
	assert_int_equal(safe_dir_read_file(fd, "ok", 64, &data, &len), 0);
	assert_int_equal(len, 10);
	assert_string_equal(data, "id-1\nid-2\n");
	free(data);
	assert_int_equal(safe_dir_read_file(fd, "ok", 4, &data, &len), -EFBIG);
	assert_int_equal(safe_dir_read_file(fd, "missing", 64, &data, &len), -ENOENT);
	assert_int_equal(symlink(path(f, "d/ok"), path(f, "d/link")), 0);
	assert_int_equal(safe_dir_read_file(fd, "link", 64, &data, &len), -ELOOP);
	assert_int_equal(mkfifo(path(f, "d/fifo"), 0600), 0);
	assert_int_equal(safe_dir_read_file(fd, "fifo", 64, &data, &len), -EPERM);
	assert_null(data);
	close(fd);
}

static void test_unlink_only_regular_files(void **state)
{
	struct fixture *f = *state;
	char err[256];
	struct stat st;
	int fd = safe_dir_open(path(f, "d"), true, err, sizeof(err));

	assert_true(fd >= 0);
	put(path(f, "victim"), "x");
	assert_int_equal(symlink(path(f, "victim"), path(f, "d/a.argus")), 0);
	assert_int_equal(mkdir(path(f, "d/b.json"), 0700), 0);
	put(path(f, "d/c.json"), "{}");
	assert_int_equal(safe_dir_unlink(fd, "a.argus"), -EPERM);
	assert_int_equal(safe_dir_unlink(fd, "b.json"), -EPERM);
	assert_int_equal(safe_dir_unlink(fd, "c.json"), 0);
	assert_int_equal(lstat(path(f, "d/a.argus"), &st), 0);
	assert_int_equal(stat(path(f, "victim"), &st), 0);
	assert_int_equal(stat(path(f, "d/b.json"), &st), 0);
	close(fd);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void test_sweep(void **state)
{
	struct fixture *f = *state;
	char err[256], name[128];
	pid_t dead = dead_pid(), other = dead_pid();
	struct stat st;
	int fd = safe_dir_open(path(f, "d"), true, err, sizeof(err));

	assert_true(fd >= 0);
	snprintf(name, sizeof(name), "d/.x.argus.%d.0123456789abcdef.tmp", (int)dead);
	put(path(f, name), "dead writer");
	snprintf(name, sizeof(name), "d/.y.json.%d.0123456789abcdef.tmp", (int)getpid());
	put(path(f, name), "live writer");
	put(path(f, "d/.20240101T000000-5.argus.tmp"), "older version");
	put(path(f, "d/keep.argus"), "a snapshot");
	put(path(f, "d/index"), "keep\n");
	assert_int_equal(symlink(path(f, "d/keep.argus"), path(f, "d/.l.tmp")), 0);

	assert_int_equal(safe_dir_sweep_tmp(fd, other), 0);      /* by pid: nothing of that writer */
	assert_int_equal(safe_dir_sweep_tmp(fd, 0), 2);
	assert_int_equal(entries(path(f, "d")), 4);              /* live writer's, keep.argus, index, link */
	assert_int_equal(lstat(path(f, name), &st), 0);
	assert_int_equal(safe_dir_sweep_tmp(fd, getpid()), 1);   /* reaped: that writer's file */
	assert_int_equal(lstat(path(f, "d/.l.tmp"), &st), 0);
	assert_int_equal(entries(path(f, "d")), 3);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_after_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_replaces_a_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tmp_name_and_publish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink_only_regular_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
