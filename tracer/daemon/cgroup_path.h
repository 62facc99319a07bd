/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where processes live, for argusd (cgroup_path.c): the recording scope of
 * `argus start --cgroup PATH / --netns NS`, and the cgroup path a PROC_NS
 * record carries (the kernel side gives the cgroup v2 id only).
 */
#ifndef ARGUS_CGROUP_PATH_H
#define ARGUS_CGROUP_PATH_H

#include <stddef.h>
#include <stdint.h>

struct argus_scope {
	uint64_t cgroup_id;          /* 0 = any */
	uint32_t netns;              /* 0 = any */
	char cgroup[4096];           /* the scope's path below the cgroup v2 root ("/a/b"), "" = any */
};

/* Resolve --cgroup (a directory of the cgroup v2 tree, or a path below its
 * root as /proc/PID/cgroup writes it) and --netns (/var/run/netns/NAME,
 * /proc/PID/ns/net, or an inode number); either may be NULL.  0, or -errno
 * with one line in err. */
int argus_scope_init(struct argus_scope *s, const char *cgroup, const char *netns, char *err, size_t errlen);
/* Whether a live process is in the scope (from /proc; a vanished one is not). */
int argus_scope_has_pid(const struct argus_scope *s, uint32_t pid);
/* The cgroup v2 mount point into out ("" and -ENOENT when none). */
int argus_cgroup2_root(char *out, size_t len);
/* pid's cgroup v2 path ("/system.slice/x.service") into out, checked against
 * cgroup_id (0: unchecked) when the process still lives in it, else from
 * the ids seen before or a walk of the tree.  Its length, or 0 when unknown. */
size_t argus_cgroup_path(uint32_t pid, uint64_t cgroup_id, char *out, size_t len);
/* pid's cgroup v2 id and network namespace inode from /proc (0 when unknown). */
uint64_t argus_proc_cgroup_id(uint32_t pid);
uint32_t argus_proc_netns(uint32_t pid);

#endif /* ARGUS_CGROUP_PATH_H */
