// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of cgroup_path.c against this process's own /proc entries and
 * the machine's cgroup v2 tree (skipped where none is mounted).
 *
 *   netns     an inode number is taken as it is; a path is stat'ed (its
 *             inode: /proc/self/ns/net); 0 or a missing path is one line
 *   cgroup    a directory of the v2 tree or a path below its root name the
 *             same cgroup (its inode is the id); a missing one is one line;
 *             a v1 hierarchy's directory is refused, naming the v2 path
 *   path      this process's cgroup path, read from /proc and checked
 *             against its id; a wrong id that names another cgroup (the
 *             root, inode 1) is found by walking the tree
 *   has_pid   the scope of this process's own cgroup and netns holds it;
 *             another netns does not
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup_path.h"

static struct argus_scope s;     /* 4 KiB of path: not on the test's stack */
static char err[512];

static uint64_t ino(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

static void test_netns(void **state)
{
	(void)state;
	assert_int_equal(argus_scope_init(&s, NULL, "4026531840", err, sizeof(err)), 0);
	assert_int_equal(s.netns, 4026531840u);
	assert_int_equal(s.cgroup_id, 0);
	assert_int_equal(argus_scope_init(&s, NULL, "/proc/self/ns/net", err, sizeof(err)), 0);
	assert_int_equal(s.netns, ino("/proc/self/ns/net"));
	assert_true(argus_scope_init(&s, NULL, "0", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bad --netns '0'"));
	assert_true(argus_scope_init(&s, NULL, "/nonexistent/ns", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bad --netns '/nonexistent/ns': No such file"));
}

static void test_cgroup(void **state)
{
	char root[4096], dir[8192];

	(void)state;
	if (argus_cgroup2_root(root, sizeof(root)))
		skip();
	assert_int_equal(argus_scope_init(&s, "/", NULL, err, sizeof(err)), 0);
	assert_int_equal(s.cgroup_id, ino(root));
	assert_string_equal(s.cgroup, "/");
	/* the same cgroup by its directory, with a trailing slash */
	snprintf(dir, sizeof(dir), "%s/", root);
	assert_int_equal(argus_scope_init(&s, dir, NULL, err, sizeof(err)), 0);
	assert_int_equal(s.cgroup_id, ino(root));
	assert_string_equal(s.cgroup, "/");
	assert_true(argus_scope_init(&s, "/no-such-cgroup-here", NULL, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "bad --cgroup '/no-such-cgroup-here': not a cgroup"));
}

/* A cgroup v1 hierarchy's mount point (hybrid and v1 hosts), "" when none. */
static void cgroup1_mount(char *out, size_t len)
{
	char line[4096], where[4096], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");

	out[0] = 0;
	while (f && !out[0] && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");

		if (dash && sscanf(line, "%*s %*s %*s %*s %4095s", where) == 1 &&
		    sscanf(dash, " - %63s", fstype) == 1 && !strcmp(fstype, "cgroup"))
			snprintf(out, len, "%s", where);
	}
	if (f)
		fclose(f);
}

static void test_cgroup_v1(void **state)
{
	char root[4096], v1[4096];

	(void)state;
	cgroup1_mount(v1, sizeof(v1));
	if (argus_cgroup2_root(root, sizeof(root)) || !v1[0])
		skip();
	assert_true(argus_scope_init(&s, v1, NULL, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "a cgroup v1 directory; give the cgroup v2 path"));
}

static void test_path(void **state)
{
	char root[4096], line[4096] = "", path[256], full[8192];
	FILE *f = fopen("/proc/self/cgroup", "r");
	uint64_t id;

	(void)state;
	if (argus_cgroup2_root(root, sizeof(root)) || !f)
		skip();
	while (fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
		;
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(full, sizeof(full), "%s%s", root, line + 3);
	id = argus_proc_cgroup_id((uint32_t)getpid());
	assert_int_equal(id, ino(full));
	assert_int_equal(argus_cgroup_path((uint32_t)getpid(), id, path, sizeof(path)), strlen(line + 3));
	assert_string_equal(path, line + 3);
	if (ino(root) == 1 && strcmp(line + 3, "/")) {
		assert_int_equal(argus_cgroup_path((uint32_t)getpid(), 1, path, sizeof(path)), 1);
		assert_string_equal(path, "/");
	}
	assert_int_equal(argus_proc_netns((uint32_t)getpid()), ino("/proc/self/ns/net"));
}

static void test_has_pid(void **state)
{
	char root[4096];

	(void)state;
	if (argus_cgroup2_root(root, sizeof(root)))
		skip();
	assert_int_equal(argus_scope_init(&s, "/", "/proc/self/ns/net", err, sizeof(err)), 0);
	assert_true(argus_scope_has_pid(&s, (uint32_t)getpid()));
	assert_int_equal(argus_scope_init(&s, NULL, "12345", err, sizeof(err)), 0);
	assert_false(argus_scope_has_pid(&s, (uint32_t)getpid()));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_cgroup_v1),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_has_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
