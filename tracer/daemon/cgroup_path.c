// SPDX-License-Identifier: Apache-2.0
/*
 * Cgroup paths and the recording scope (argusd; cgroup_path.h).
 *
 * A cgroup v2 id is the inode number of the cgroup's directory in the v2
 * tree (kernfs), so stat() maps a path to its id and a walk of the tree maps
 * an id back.  A PROC_NS record's path is read from /proc/PID/cgroup (the
 * "0::" line) while the process lives, and checked against the id; when the
 * process has gone or moved on, the ids met before (a small cache) or a
 * walk of the tree name it.  The ids met are cached (direct-mapped): a
 * fork or exec storm in a few cgroups reads /proc once per cgroup, not per
 * record.  A renamed cgroup keeps its cached old name (rare; its id stays).
 */
#include "cgroup_path.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/vfs.h>
#else
/* macOS has statfs in sys/mount.h and no cgroups: no f_type matches the
 * v2 magic, so --cgroup is refused in one line and paths stay unknown. */
#include <sys/param.h>
#include <sys/mount.h>
#endif

#define CGROUP2_SUPER_MAGIC 0x63677270
#define CGROUP_SUPER_MAGIC 0x27e0eb      /* a cgroup v1 hierarchy */
#define CACHE_SLOTS 256

static struct {
	uint64_t id;
	char path[256];
} cache[CACHE_SLOTS];

/* The v2 mount point, looked up once (a daemon's mounts do not move). */
static char root_cache[4096];
static int root_rc = 1;          /* 1: not looked up yet */

static int find_cgroup2_root(char *out, size_t len)
{
	char line[4096], mnt[4096], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int rc = -ENOENT;

	out[0] = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent major:minor root mountpoint options... - fstype source super */
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && strlen(mnt) < len) {
			snprintf(out, len, "%s", mnt);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

int argus_cgroup2_root(char *out, size_t len)
{
	if (root_rc == 1)
		root_rc = find_cgroup2_root(root_cache, sizeof(root_cache));
	if (root_rc || strlen(root_cache) >= len) {
		out[0] = 0;
		return root_rc ? root_rc : -ENAMETOOLONG;
	}
	snprintf(out, len, "%s", root_cache);
	return 0;
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The "0::/path" line of /proc/PID/cgroup. */
static int proc_cgroup_line(uint32_t pid, char *out, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strlen(line + 3) < len) {
			snprintf(out, len, "%s", line + 3);
			rc = 0;
		}
		break;
	}
	fclose(f);
	return rc;
}

uint64_t argus_proc_cgroup_id(uint32_t pid)
{
	char root[4096], rel[4096], full[8192];

	if (argus_cgroup2_root(root, sizeof(root)) || proc_cgroup_line(pid, rel, sizeof(rel)))
		return 0;
	snprintf(full, sizeof(full), "%s%s", root, rel);
	return ino_of(full);
}

uint32_t argus_proc_netns(uint32_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	return (uint32_t)ino_of(path);
}

static void remember(uint64_t id, const char *path)
{
	if (!id || strlen(path) >= sizeof(cache[0].path))
		return;
	cache[id % CACHE_SLOTS].id = id;
	snprintf(cache[id % CACHE_SLOTS].path, sizeof(cache[0].path), "%s", path);
}

/* nftw has no context argument: the walk's target and result. */
static struct {
	uint64_t id;
	size_t root_len;
	char found[4096];
} walk;

static int walk_visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_D || (uint64_t)st->st_ino != walk.id)
		return 0;
	snprintf(walk.found, sizeof(walk.found), "%s", path[walk.root_len] ? path + walk.root_len : "/");
	return 1;
}

size_t argus_cgroup_path(uint32_t pid, uint64_t cgroup_id, char *out, size_t len)
{
	char root[4096], rel[4096], full[8192];

	out[0] = 0;
	if (cgroup_id && cache[cgroup_id % CACHE_SLOTS].id == cgroup_id) {
		snprintf(out, len, "%s", cache[cgroup_id % CACHE_SLOTS].path);
		return strlen(out);
	}
	if (argus_cgroup2_root(root, sizeof(root)))
		return 0;
	if (proc_cgroup_line(pid, rel, sizeof(rel)) == 0) {
		snprintf(full, sizeof(full), "%s%s", root, rel);
		if (!cgroup_id || ino_of(full) == cgroup_id) {
			remember(cgroup_id, rel);
			snprintf(out, len, "%s", rel);
			return strlen(out);
		}
	}
	if (!cgroup_id)
		return 0;
	walk.id = cgroup_id;
	walk.root_len = strlen(root);
	walk.found[0] = 0;
	if (nftw(root, walk_visit, 16, FTW_PHYS | FTW_MOUNT) == 1) {
		remember(cgroup_id, walk.found);
		snprintf(out, len, "%s", walk.found);
	}
	return strlen(out);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int argus_scope_init(struct argus_scope *s, const char *cgroup, const char *netns, char *err, size_t errlen)
{
	char root[4096], full[8192], path[4096];
	struct statfs sf;
	struct stat st;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (netns) {
		if (parse_u64(netns, &v) == 0) {
			if (!v || v > UINT32_MAX) {
				snprintf(err, errlen, "bad --netns '%s': an inode number is 1 to %u", netns, UINT32_MAX);
				return -EINVAL;
			}
			s->netns = (uint32_t)v;
		} else if (!strchr(netns, '/') && snprintf(path, sizeof(path), "/var/run/netns/%s", netns) &&
			   stat(path, &st) == 0) {
			s->netns = (uint32_t)st.st_ino;      /* a name, as `ip netns` gives it */
		} else if (stat(netns, &st) < 0) {
			snprintf(err, errlen, "bad --netns '%s': %s (give /var/run/netns/NAME, NAME, /proc/PID/ns/net "
				 "or an inode number)", netns, strerror(errno));
			return -EINVAL;
		} else {
			s->netns = (uint32_t)st.st_ino;
		}
	}
	if (!cgroup)
		return 0;
	if (argus_cgroup2_root(root, sizeof(root))) {
		snprintf(err, errlen, "bad --cgroup '%s': no cgroup v2 file system is mounted", cgroup);
		return -ENOENT;
	}
	/* Only the v2 tree: a v1 cgroup's id means something within its own
	 * hierarchy only, and a named one (name=systemd) is reached only through
	 * the task's css_set links (the bpf_task_get_cgroup1 kfunc, a reference
	 * taken and dropped per call), a cost on every switch and syscall
	 * record; the runtimes mirror a container into v2 wherever it is
	 * mounted (runc on hybrid hosts, systemd), and --netns is the other
	 * handle on a container where they do not (docs/multi-host.md). */
	if (statfs(cgroup, &sf) == 0 && sf.f_type == CGROUP_SUPER_MAGIC) {
		snprintf(err, errlen, "bad --cgroup '%s': a cgroup v1 directory; give the cgroup v2 path (the 0:: line "
			 "of /proc/PID/cgroup), or --netns /proc/PID/ns/net when that line is /", cgroup);
		return -EINVAL;
	}
	/* A directory of the v2 tree as it is, else a path below its root. */
	if (statfs(cgroup, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC && stat(cgroup, &st) == 0 &&
	    S_ISDIR(st.st_mode) && realpath(cgroup, full) && !strncmp(full, root, strlen(root))) {
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", full[strlen(root)] ? full + strlen(root) : "/");
	} else {
		snprintf(full, sizeof(full), "%s/%s", root, cgroup[0] == '/' ? cgroup + 1 : cgroup);
		if (stat(full, &st) < 0 || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "bad --cgroup '%s': not a cgroup (no directory %s in the cgroup v2 "
				 "tree)", cgroup, full);
			return -ENOENT;
		}
		snprintf(s->cgroup, sizeof(s->cgroup), "/%s", cgroup[0] == '/' ? cgroup + 1 : cgroup);
	}
	s->cgroup_id = (uint64_t)st.st_ino;
	/* "/a/b/" and "/a/b" alike: the prefix test needs no trailing slash */
	while (strlen(s->cgroup) > 1 && s->cgroup[strlen(s->cgroup) - 1] == '/')
		s->cgroup[strlen(s->cgroup) - 1] = 0;
	return 0;
}

int argus_scope_has_pid(const struct argus_scope *s, uint32_t pid)
{
	char rel[4096];
	size_t n = strlen(s->cgroup);

	if (s->netns && argus_proc_netns(pid) != s->netns)
		return 0;
	if (!s->cgroup_id)
		return 1;
	if (proc_cgroup_line(pid, rel, sizeof(rel)))
		return 0;
	/* the scope's cgroup or one below it */
	return !strcmp(s->cgroup, "/") ||
	       (!strncmp(rel, s->cgroup, n) && (rel[n] == 0 || rel[n] == '/'));
}
