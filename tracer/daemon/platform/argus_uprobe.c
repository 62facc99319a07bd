// SPDX-License-Identifier: Apache-2.0
/*
 * Loader of the hook spec through uprobes (kext/linux/argus_uprobe.bpf.c),
 * in the libbpf-tools shape: open -> configure (rodata) -> load -> attach
 * one uprobe (and uretprobe) per hook -> poll the ring buffer; one cleanup
 * path.
 *
 * The hook list is data from `argus start` (side_source.h gives its format); every field is checked here, and a line that fails a check, or a
 * hook the kernel refuses, is skipped with one line through cfg->skipped.
 * Attach is system-wide (pid -1): the kernel puts the breakpoint in the
 * library file's page cache, so processes already running are hooked too.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "argus_event.h"
#include "argus_uprobe.h"
#include "argus_uprobe.skel.h"
#include "bpf_loader_util.h"
#include "cgroup_path.h"
#include "go_runtime.h"
#include "side_source.h"

#define MAX_HOOKS 256
#define MAX_LINE 1024
/* Go executables probed at once (each its own file, 3 links), and the
 * files already looked at (Go or not; when full it starts over: a second
 * look at a file costs a stat and never attaches twice). */
#define MAX_GO_FILES 256
#define SEEN_SLOTS 4096

/* Snapshot helpers (tracer/gosnap.py) running at once, reaped each turn;
 * and the processes waiting for one when that many run. */
#define MAX_GO_SNAPSHOTS 16
#define MAX_GO_SNAP_PENDING 256

/* gen: the attach batch (go_attach_running, one before_poll) that probed
 * the file; attach_ns: when (CLOCK_MONOTONIC, the records' clock). */
struct go_file { uint64_t dev, ino; struct bpf_link *links[ARGUS_GO_NFNS]; unsigned gen; uint64_t attach_ns; };

/* The ring buffer, drops and the pids of every probe record (handed to the
 * daemon for their mappings, so fn can be symbolized) are the side
 * source's (bpf_loader_util.c). */
struct argus_uprobes {
	struct argus_side_source side;   /* first: the daemon holds &side */
	struct argus_uprobe_bpf *obj;
	struct bpf_link *links[2 * MAX_HOOKS];
	int nlinks;
	/* Go */
	struct bpf_link *exec_link;
	struct ring_buffer *exec_ring;
	struct argus_pid_queue execs;
	struct go_file go[MAX_GO_FILES];
	int ngo;
	struct { uint64_t dev, ino; } seen[SEEN_SLOTS];
	size_t nseen;
	unsigned gen;                    /* the current attach batch */
	const char *snap_python, *buffer;   /* the goroutine snapshot (NULL: none) */
	const struct argus_scope *scope;
	pid_t snap_kids[MAX_GO_SNAPSHOTS];
	int nsnap_kids;
	struct { uint32_t pid; uint64_t attach_ns; } snap_pending[MAX_GO_SNAP_PENDING];
	int nsnap_pending;
	void (*notice)(const char *line);
	const struct argus_uprobes_config *cfg;   /* during open only */
};

struct hook_line {
	unsigned long probe_id, enter, ret, obj_arg, return_obj, obj_bits;
	unsigned long long offset;
	char *path, *symbol;
	struct argus_ret_deref deref;   /* nalts 0: the return value is obj */
};

static void skip(const struct argus_uprobes_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void skip(const struct argus_uprobes_config *cfg, const char *fmt, ...)
{
	char line[MAX_LINE + 128];
	va_list ap;

	if (!cfg->skipped)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cfg->skipped(line);
}

static bool valid_type(unsigned long t)
{
	return t == 0 || (t >= ARGUS_EV_CALLBACK_BEGIN && t <= ARGUS_EV_PROBE_RETURN);
}

static bool parse_ulong(const char *s, int base, unsigned long long max, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, base);
	return !errno && !*end && *v <= max;
}

/* Splits and checks one line in place: 0, or a reason. */
static const char *parse_hook(char *line, struct hook_line *h)
{
	char *field[10], *save = NULL, *p;
	unsigned long long v[7] = { 0, 0, 0, 0, 0, 0, 64 };
	int n = 0;

	for (p = strtok_r(line, "\t", &save); p && n < 10; p = strtok_r(NULL, "\t", &save))
		field[n++] = p;
	if (n < 6 || p)
		return "needs 6 tab-separated fields (a 7th: obj_arg, an 8th: return_obj, a 9th: obj_bits, "
		       "a 10th: ret_deref)";
	if (n >= 7 && (!parse_ulong(field[6], 10, ARGUS_UPROBE_OBJ_PROCESS, &v[4]) || v[4] == 5))
		return "bad obj_arg (0-4, 6)";
	if (n >= 8 && (!parse_ulong(field[7], 10, ARGUS_UPROBE_RETURN_PROCESS, &v[5]) || v[5] == 6))
		return "bad return_obj (0-5, 7)";
	if (n >= 9 && (!parse_ulong(field[8], 10, 64, &v[6]) || (v[6] != 32 && v[6] != 64)))
		return "bad obj_bits (32, 64)";
	h->deref.nalts = 0;
	if (n == 10 && strcmp(field[9], "-") != 0 && argus_ret_deref_parse(field[9], &h->deref))
		return "bad ret_deref";
	if (!parse_ulong(field[0], 10, 65535, &v[0]) || !parse_ulong(field[1], 10, 255, &v[1]) ||
	    !parse_ulong(field[2], 10, 255, &v[2]) || !parse_ulong(field[3], 16, ULLONG_MAX, &v[3]))
		return "bad number";
	h->probe_id = v[0];
	h->enter = v[1];
	h->ret = v[2];
	h->obj_arg = v[4];
	h->return_obj = v[5];
	h->obj_bits = v[6];
	h->offset = v[3];
	h->path = field[4];
	h->symbol = field[5];
	if (!valid_type(h->enter) || !valid_type(h->ret) || (!h->enter && !h->ret))
		return "bad record type";
	if (h->deref.nalts && !h->ret)
		return "ret_deref without a return record type";
	if (!h->offset)
		return "zero offset";
	if (h->path[0] != '/')
		return "library path is not absolute";
	for (p = h->path; *p; p++)
		if ((unsigned char)*p < 0x20)
			return "control character in the library path";
	for (p = h->symbol; *p; p++)
		if ((unsigned char)*p < 0x20)
			return "control character in the symbol";
	return NULL;
}

static int attach_one(struct argus_uprobes *u, const struct argus_uprobes_config *cfg, const struct hook_line *h)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	struct bpf_link *entry = NULL, *ret = NULL;

	{   /* always: the entry keeps fn for the return record */
		opts.bpf_cookie = ARGUS_UPROBE_COOKIE(h->probe_id, h->enter, h->ret, h->obj_arg, h->return_obj,
						      h->obj_bits == 32);
		entry = bpf_program__attach_uprobe_opts(u->obj->progs.probe_entry, -1, h->path, h->offset, &opts);
		if (!entry) {
			skip(cfg, "uprobe hook %lu %s in %s skipped: failed to attach uprobe: %s", h->probe_id,
			     h->symbol, h->path, strerror(errno));
			return -1;
		}
	}
	if (h->ret) {
		__u32 id = (__u32)h->probe_id;

		if (h->deref.nalts && bpf_map__update_elem(u->obj->maps.derefs, &id, sizeof(id), &h->deref,
							  sizeof(h->deref), BPF_ANY)) {
			skip(cfg, "uprobe hook %lu %s in %s skipped: failed to update map derefs: %s", h->probe_id,
			     h->symbol, h->path, strerror(errno));
			bpf_link__destroy(entry);
			return -1;
		}
		opts.bpf_cookie = ARGUS_UPROBE_COOKIE(h->probe_id, h->ret, 0, 0, h->return_obj, h->obj_bits == 32);
		opts.retprobe = true;
		ret = bpf_program__attach_uprobe_opts(u->obj->progs.probe_return, -1, h->path, h->offset, &opts);
		if (!ret) {
			skip(cfg, "uprobe hook %lu %s in %s skipped: failed to attach uretprobe: %s", h->probe_id,
			     h->symbol, h->path, strerror(errno));
			bpf_link__destroy(entry);
			return -1;
		}
	}
	u->links[u->nlinks++] = entry;
	if (ret)
		u->links[u->nlinks++] = ret;
	return 0;
}

/* Attaches every good line of the hook list: how many hooks, or -errno. */
static int attach_hooks(struct argus_uprobes *u, const struct argus_uprobes_config *cfg, char *err, size_t errlen)
{
	char line[MAX_LINE + 2];
	struct hook_line h;
	const char *why;
	int lineno = 0, hooks = 0;
	FILE *f = fopen(cfg->hooks_path, "re");

	if (!f) {
		argus_set_err(err, errlen, "failed to open hook list %s: %s", cfg->hooks_path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(f)) {   /* longer than any hook: skip the rest of it */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			skip(cfg, "uprobe hook list line %d skipped: too long", lineno);
			continue;
		}
		if (!len)
			continue;
		why = parse_hook(line, &h);
		if (why) {
			skip(cfg, "uprobe hook list line %d skipped: %s", lineno, why);
			continue;
		}
		if (u->nlinks + 2 > 2 * MAX_HOOKS) {
			skip(cfg, "uprobe hook list line %d skipped: more than %d hooks", lineno, MAX_HOOKS);
			continue;
		}
		if (!attach_one(u, cfg, &h))
			hooks++;
	}
	fclose(f);
	return hooks;
}

static int on_exec(void *ctx, void *data, size_t size)
{
	struct argus_uprobes *u = ctx;

	if (size >= sizeof(uint32_t))
		argus_pid_queue_push(&u->execs, *(const uint32_t *)data);
	return 0;
}

/* Whether (dev, ino) was looked at; marks it.  Open addressing, no removal. */
static bool seen_before(struct argus_uprobes *u, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)((ino * 0x9E3779B97F4A7C15ull) ^ dev) % SEEN_SLOTS;

	if (u->nseen >= SEEN_SLOTS / 2) {
		memset(u->seen, 0, sizeof(u->seen));
		u->nseen = 0;
	}
	for (;; i = (i + 1) % SEEN_SLOTS) {
		if (!u->seen[i].ino) {
			u->seen[i].dev = dev;
			u->seen[i].ino = ino;
			u->nseen++;
			return false;
		}
		if (u->seen[i].dev == dev && u->seen[i].ino == ino)
			return true;
	}
}

static void notice(struct argus_uprobes *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void notice(struct argus_uprobes *u, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!u->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	u->notice(line);
}

/* The record type of each function of go_runtime.h. */
static const uint16_t go_types[ARGUS_GO_NFNS] = {
	[ARGUS_GO_READY_FN] = ARGUS_EV_GO_READY,
	[ARGUS_GO_EXECUTE_FN] = ARGUS_EV_GO_EXECUTE,
	[ARGUS_GO_PARK_FN] = ARGUS_EV_GO_PARK,
	[ARGUS_GO_EXIT_FN] = ARGUS_EV_GO_PARK,     /* an ending goroutine leaves its thread too */
};

extern char **environ;

static void reap_snapshots(struct argus_uprobes *u)
{
	int k = 0;

	while (k < u->nsnap_kids) {
		pid_t r = waitpid(u->snap_kids[k], NULL, WNOHANG);

		if (r == u->snap_kids[k] || (r < 0 && errno == ECHILD))
			u->snap_kids[k] = u->snap_kids[--u->nsnap_kids];
		else
			k++;
	}
}

/* The goroutines of pid that parked before the probes were on would have
 * no record at all while they stay parked: a helper reads them from the
 * process's memory once (tracer/gosnap.py: g structs through the binary's
 * DWARF) and writes one GO_SNAPSHOT record each into the buffer, with
 * ts = attach_ns.  Spawned, not waited for: the DWARF of a binary not seen
 * before takes a moment to read, and the loop must not stall. */
static void go_snapshot(struct argus_uprobes *u, uint32_t pid, uint64_t attach_ns)
{
	char spid[16], sts[24];
	char *argv[] = { (char *)u->snap_python, "-m", "argus.tracer.gosnap", "--pid", spid, "--ts", sts,
			 "--buffer", (char *)u->buffer, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t sa;
	sigset_t none;
	pid_t kid;
	int rc;

	if (!u->snap_python || !u->buffer)
		return;
	if (u->scope && (u->scope->cgroup_id || u->scope->netns) && !argus_scope_has_pid(u->scope, pid))
		return;                       /* outside the recording scope */
	reap_snapshots(u);
	if (u->nsnap_kids == MAX_GO_SNAPSHOTS) {   /* later, from before_poll */
		if (u->nsnap_pending == MAX_GO_SNAP_PENDING) {
			notice(u, "Go program pid %u: no goroutine snapshot, %d wait for one already", pid,
			       MAX_GO_SNAP_PENDING);
			return;
		}
		u->snap_pending[u->nsnap_pending].pid = pid;
		u->snap_pending[u->nsnap_pending++].attach_ns = attach_ns;
		return;
	}
	snprintf(spid, sizeof(spid), "%u", pid);
	snprintf(sts, sizeof(sts), "%llu", (unsigned long long)attach_ns);
	if (posix_spawn_file_actions_init(&fa))
		return;
	if (posix_spawnattr_init(&sa)) {
		posix_spawn_file_actions_destroy(&fa);
		return;
	}
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&sa, &none);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);   /* the BPF maps, the buffer, the socket */
	rc = posix_spawn(&kid, u->snap_python, &fa, &sa, argv, environ);
	posix_spawnattr_destroy(&sa);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		notice(u, "Go program pid %u: no goroutine snapshot: cannot run %s: %s", pid, u->snap_python,
		       strerror(rc));
		return;
	}
	u->snap_kids[u->nsnap_kids++] = kid;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Probes the executable of pid if it is a Go program not probed yet.  The
 * path is /proc/PID/exe: the kernel resolves it to the file (in the
 * process's own mount namespace) while the process lives. */
static void go_attach(struct argus_uprobes *u, uint32_t pid)
{
	char path[64], why[128] = "";
	struct argus_go_offsets off;
	struct go_file *f;
	struct stat st;
	int fd, k;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;                       /* gone already, or a kernel thread */
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	/* Probed already: a process of that file that ran before the probes
	 * came on (another one started in the same batch, or running when
	 * tracing started) gets its snapshot too; one started later was
	 * probed from its exec. */
	for (k = 0; k < u->ngo; k++)
		if (u->go[k].dev == st.st_dev && u->go[k].ino == st.st_ino) {
			close(fd);
			if (u->go[k].gen == u->gen)
				go_snapshot(u, pid, u->go[k].attach_ns);
			return;
		}
	if (seen_before(u, st.st_dev, st.st_ino) || argus_go_runtime_offsets(fd, &off, why, sizeof(why))) {
		close(fd);
		return;
	}
	close(fd);
	if (u->ngo == MAX_GO_FILES) {
		notice(u, "Go program %s (pid %u) not probed: %d Go programs are probed already", path, pid,
		       MAX_GO_FILES);
		return;
	}
	f = &u->go[u->ngo];
	memset(f, 0, sizeof(*f));
	for (k = 0; k < ARGUS_GO_NFNS; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = ARGUS_UPROBE_COOKIE(0, go_types[k], 0, 0, 0, 0));

		f->links[k] = bpf_program__attach_uprobe_opts(u->obj->progs.go_probe, -1, path, off.off[k], &opts);
		if (!f->links[k]) {
			notice(u, "Go program %s (pid %u) not probed: failed to attach uprobe at %s: %s", path, pid,
			       argus_go_functions[k], strerror(errno));
			while (k-- > 0)
				bpf_link__destroy(f->links[k]);
			return;
		}
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->gen = u->gen;
	f->attach_ns = mono_ns();
	u->ngo++;
	notice(u, "Go scheduler probes on the executable of pid %u", pid);
	go_snapshot(u, pid, f->attach_ns);
}

/* The Go programs already running when tracing starts. */
static void go_attach_running(struct argus_uprobes *u)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	u->gen++;
	while ((de = readdir(d))) {
		unsigned long long pid;
		char *end;

		errno = 0;
		pid = strtoull(de->d_name, &end, 10);
		if (!errno && !*end && pid && pid <= UINT32_MAX && pid != u->cfg->exclude_tgid)
			go_attach(u, (uint32_t)pid);
	}
	closedir(d);
}

static int go_open(struct argus_uprobes *u, char *err, size_t errlen)
{
	u->exec_link = bpf_program__attach(u->obj->progs.go_exec);
	if (!u->exec_link) {
		argus_set_err(err, errlen, "failed to attach exec tracepoint for Go probes: %s", strerror(errno));
		return -errno;
	}
	u->exec_ring = ring_buffer__new(bpf_map__fd(u->obj->maps.execs), on_exec, u, NULL);
	if (!u->exec_ring) {
		argus_set_err(err, errlen, "failed to create exec ring buffer reader: %s", strerror(errno));
		return -errno;
	}
	go_attach_running(u);
	return 0;
}

/* Before each drain: new Go programs first, so their records start sooner. */
static void before_poll(struct argus_side_source *side)
{
	struct argus_uprobes *u = (struct argus_uprobes *)side;
	uint32_t pids[ARGUS_STACK_PID_QUEUE];
	size_t n, k;

	if (!u->exec_ring)
		return;
	ring_buffer__consume(u->exec_ring);
	reap_snapshots(u);
	while (u->nsnap_pending && u->nsnap_kids < MAX_GO_SNAPSHOTS) {   /* oldest first */
		uint32_t pid = u->snap_pending[0].pid;
		uint64_t at = u->snap_pending[0].attach_ns;

		memmove(&u->snap_pending[0], &u->snap_pending[1], --u->nsnap_pending * sizeof(u->snap_pending[0]));
		go_snapshot(u, pid, at);
	}
	n = argus_pid_queue_take(&u->execs, pids, ARGUS_STACK_PID_QUEUE);
	if (n)
		u->gen++;
	for (k = 0; k < n; k++)
		go_attach(u, pids[k]);
}

static void detach(struct argus_side_source *side)
{
	struct argus_uprobes *u = (struct argus_uprobes *)side;
	int i;

	for (i = 0; i < u->nlinks; i++)
		bpf_link__destroy(u->links[i]);
	for (i = 0; i < u->ngo; i++)
		for (int k = 0; k < ARGUS_GO_NFNS; k++)
			bpf_link__destroy(u->go[i].links[k]);
	bpf_link__destroy(u->exec_link);
}

static void destroy(struct argus_side_source *side)
{
	struct argus_uprobes *u = (struct argus_uprobes *)side;

	ring_buffer__free(u->exec_ring);
	argus_uprobe_bpf__destroy(u->obj);
	free(u);
}

static const struct argus_side_ops uprobes_ops = { .before_poll = before_poll, .detach = detach, .destroy = destroy };

int argus_uprobes_open(const struct argus_uprobes_config *cfg, struct argus_side_source **out, char *err,
		       size_t errlen)
{
	struct argus_uprobes *u;
	int ret;

	*out = NULL;
	u = argus_side_new(sizeof(*u), &uprobes_ops, cfg->observe, cfg->observe_ctx, err, errlen);
	if (!u)
		return -ENOMEM;
	u->notice = cfg->notice;
	u->cfg = cfg;
	u->snap_python = cfg->go_snapshot;
	u->buffer = cfg->buffer;
	u->scope = cfg->scope;
	u->obj = argus_uprobe_bpf__open();
	if (!u->obj) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to open BPF object argus_uprobe: %s", strerror(errno));
		goto cleanup;
	}
	u->obj->rodata->targ_exclude_tgid = cfg->exclude_tgid;
	u->obj->rodata->scope_on = cfg->scope_cgroup_id || cfg->scope_netns;
	u->obj->rodata->scope_cgroup_id = cfg->scope_cgroup_id;
	u->obj->rodata->scope_netns = cfg->scope_netns;
	ret = argus_uprobe_bpf__load(u->obj);
	if (ret) {
		argus_set_err(err, errlen, "failed to load BPF object argus_uprobe: %s", strerror(-ret));
		goto cleanup;
	}
	ret = cfg->hooks_path ? attach_hooks(u, cfg, err, errlen) : 0;
	if (ret < 0)
		goto cleanup;
	if (!ret && cfg->hooks_path) {
		ret = -ENOENT;
		argus_set_err(err, errlen, "failed to attach uprobe hooks: none of the hook list could be attached");
		goto cleanup;
	}
	ret = argus_side_open_ring(&u->side, u->obj->maps.probes, u->obj->maps.drops, err, errlen);
	if (ret)
		goto cleanup;
	if (cfg->go && (ret = go_open(u, err, errlen)))
		goto cleanup;
	u->cfg = NULL;
	*out = &u->side;
	return 0;

cleanup:
	argus_side_close(&u->side);
	return ret;
}
