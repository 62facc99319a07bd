// SPDX-License-Identifier: Apache-2.0
/*
 * argusd's command line -> struct env.  Paths are made absolute here, before
 * the daemon changes to /; a bad option is one line (argusd_fail) and exit 2.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argusd.h"

static const struct env defaults = {
	.size = ARGUS_RB_DEFAULT_SIZE,
	.sample_hz = 99,
	/* Tracepoints until the fentry slots have run on a kernel that allows
	 * them (this project's machines refuse fentry: docs/linux-tracer.md). */
	.syscall_probes = ARGUS_SYSCALL_PROBES_TRACEPOINT,
	.ready_fd = -1,
	.no_go_probes = true,   /* three uprobe traps per goroutine switch: opt in (docs/linux-tracer.md) */
	.detail = ARGUS_DETAIL_MODE_FULL,
	.escalate_ns = DETAIL_ESCALATE_NS_DEFAULT,
	.hangs = {
		.threshold_ns = 2000000000ull,
		.before_ns = 30000000000ull,
		.flush_after_ns = 10000000000ull,
		.max_snapshot_bytes = 128ull << 20,
		.max_total_bytes = 1ull << 30,
		.max_count = 20,
	},
};

static const char usage[] =
	"usage: argusd --buffer FILE --size BYTES --socket PATH [--ready-fd N] [--foreground]\n"
	"              [--log FILE] [--fresh] [--kernel-buffer BYTES] [--no-syscalls]\n"
	"              [--syscall-probes auto|fentry|tracepoint]\n"
	"              [--stacks | --no-stacks] [--sample-hz HZ] [--uprobe-hooks FILE]\n"
	"              [--go-probes | --no-go-probes] [--verbose]\n"
	"              [--detail full|lean|auto] [--escalate-ms MS] [--escalate-named]\n"
	"              [--snapshot-dir DIR [--hang-threshold-ms MS] [--snapshot-before-s S]\n"
	"               [--snapshot-max-bytes BYTES] [--snapshot-max-total BYTES] [--snapshot-max-count N]\n"
	"               [--watch-pid PID]... [--watch-comm COMM]...]\n"
	"              [--cgroup PATH] [--netns NS]\n"
	"\n"
	"System-wide tracing daemon: records scheduler, wakeup, syscall and process events\n"
	"into the ring buffer FILE and answers `status` and `stop` on the Unix socket PATH.\n"
	"\n"
	"  --buffer FILE         ring buffer file; an existing buffer of the same size is\n"
	"                        continued, anything else is created (mode 0600)\n"
	"  --size BYTES          buffer size, sparse (suffixes K, M, G); default 2G\n"
	"  --socket PATH         control socket, root-only (mode 0600)\n"
	"  --ready-fd N          write \"ready\" (or \"error: ...\") to fd N once tracing is live\n"
	"  --foreground          do not daemonize\n"
	"  --log FILE            daemon output (default: argusd.log next to the socket)\n"
	"  --fresh               truncate an existing buffer instead of continuing it\n"
	"  --kernel-buffer BYTES kernel staging buffer (default 64M)\n"
	"  --no-syscalls         leave out syscall enter/exit records\n"
	"  --syscall-probes M    how syscalls are hooked: fentry/fexit on the traced ones only,\n"
	"                        raw_syscalls tracepoints (default), or auto (fentry where\n"
	"                        the kernel allows it)\n"	"  --stacks, --no-stacks user stacks at blocking waits and the mappings to\n"
	"                        symbolize them (default: on)\n"
	"  --sample-hz HZ        CPU samples per second per CPU with stacks (default 99; 0 = off;\n"
	"                        --no-stacks turns them off too)\n"
	"  --uprobe-hooks FILE   attach the hooks of this list (from `argus start --uprobe-hooks`)\n"
	"                        as uprobes, system-wide; a hook that fails is skipped\n"
	"  --go-probes, --no-go-probes  Go programs' scheduler (goroutine ready, execute,\n"
	"                        park) through uprobes on each Go executable that starts\n"
	"                        (default: off: a few us per goroutine switch; docs/linux-tracer.md)\n"
	"  --go-snapshot PYTHON  with --go-probes: when the probes attach to a running Go\n"
	"                        program, PYTHON -m argus.tracer.gosnap records its parked\n"
	"                        goroutines into the buffer (tracer/gosnap.py)\n"
	"  --verbose             loader diagnostics\n"
	"  --detail T            recording tier: full (syscall programs, the default), lean\n"
	"                        (none: waits from saved registers), or auto (lean, full while\n"
	"                        a watched thread is out of its loop; needs --snapshot-dir)\n"
	"  --escalate-ms MS      auto: out of its loop this long turns full detail on (default 100)\n"
	"  --escalate-named      auto: only the threads of --watch-pid / --watch-comm escalate\n"
	"  --snapshot-dir DIR    detect hangs online and freeze a snapshot of each into DIR\n"
	"                        (docs/flight-recorder.md); without it the detector is off\n"
	"  --hang-threshold-ms MS  out of its event loop this long is a hang (default 2000)\n"
	"  --snapshot-before-s S   a snapshot starts S seconds before its hang (default 30)\n"
	"  --snapshot-max-bytes BYTES  one snapshot at most (default 128M; oldest records dropped)\n"
	"  --snapshot-max-total BYTES  all snapshots (default 1G; oldest snapshots deleted)\n"
	"  --snapshot-max-count N  snapshots kept (default 20; oldest deleted)\n"
	"  --watch-pid PID       also watch this process's threads, event loop or not (repeatable)\n"
	"  --watch-comm COMM     also watch processes of this name (repeatable)\n"
	"  --cgroup PATH         record only this cgroup v2 (a directory of the tree, or a path\n"
	"                        below its root as in /proc/PID/cgroup) and those below it,\n"
	"                        plus the wakeups that cross its boundary\n"
	"  --netns NS            record only this network namespace: /var/run/netns/NAME,\n"
	"                        /proc/PID/ns/net, NAME (in /var/run/netns) or an inode number\n";

static int parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		v <<= 10, end++;
		break;
	case 'M':
		v <<= 20, end++;
		break;
	case 'G':
		v <<= 30, end++;
		break;
	case 'T':
		v <<= 40, end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static char *absolute_path(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

static char *default_log_path(const char *socket_path)
{
	const char *slash = strrchr(socket_path, '/');
	char *out;

	if (asprintf(&out, "%.*s/argusd.log", (int)(slash - socket_path), socket_path) < 0)
		return NULL;
	return out;
}

enum { OPT_LOG = 256, OPT_FRESH, OPT_KBUF, OPT_NO_SYSCALLS, OPT_STACKS, OPT_NO_STACKS, OPT_SAMPLE_HZ, OPT_SNAP_DIR,
       OPT_HANG_MS, OPT_SNAP_BEFORE, OPT_SNAP_BYTES, OPT_SNAP_TOTAL, OPT_SNAP_COUNT, OPT_WATCH_PID,
       OPT_WATCH_COMM, OPT_CGROUP, OPT_NETNS, OPT_UPROBE_HOOKS, OPT_SYSCALL_PROBES, OPT_GO_PROBES, OPT_NO_GO_PROBES, OPT_GO_SNAPSHOT,
       OPT_DETAIL, OPT_ESCALATE_MS, OPT_ESCALATE_NAMED };

/* A positive integer option at most max: 0, or one line and -EINVAL. */
static int parse_count(const struct argusd_ctx *ctx, const char *name, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > max) {
		argusd_fail(ctx, "bad --%s '%s': give a whole number from 1 to %llu", name, s, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_hang_option(struct env *env, const struct argusd_ctx *ctx, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case OPT_HANG_MS:
		if (parse_count(ctx, "hang-threshold-ms", arg, 3600000, &v))
			return -EINVAL;
		env->hangs.threshold_ns = v * 1000000ull;
		return 0;
	case OPT_SNAP_BEFORE:
		if (parse_count(ctx, "snapshot-before-s", arg, 86400, &v))
			return -EINVAL;
		env->hangs.before_ns = v * 1000000000ull;
		return 0;
	case OPT_SNAP_BYTES:
	case OPT_SNAP_TOTAL:
		if (parse_bytes(arg, &v) || v < (1u << 20)) {
			argusd_fail(ctx, "bad --%s '%s': give bytes (K, M, G), at least 1M",
				       c == OPT_SNAP_BYTES ? "snapshot-max-bytes" : "snapshot-max-total", arg);
			return -EINVAL;
		}
		*(c == OPT_SNAP_BYTES ? &env->hangs.max_snapshot_bytes : &env->hangs.max_total_bytes) = v;
		return 0;
	case OPT_SNAP_COUNT:
		if (parse_count(ctx, "snapshot-max-count", arg, 100000, &v))
			return -EINVAL;
		env->hangs.max_count = (uint32_t)v;
		return 0;
	case OPT_WATCH_PID:
		if (parse_count(ctx, "watch-pid", arg, UINT32_MAX, &v))
			return -EINVAL;
		if (env->nwatch_pids == HD_MAX_WATCH) {
			argusd_fail(ctx, "too many --watch-pid (at most %d)", HD_MAX_WATCH);
			return -EINVAL;
		}
		env->watch_pids[env->nwatch_pids++] = (uint32_t)v;
		return 0;
	case OPT_WATCH_COMM:
		if (!*arg || strlen(arg) > 15 || env->nwatch_comms == HD_MAX_WATCH) {
			argusd_fail(ctx, "bad --watch-comm '%s': a process name of 1 to 15 bytes, at most %d of them",
				       arg, HD_MAX_WATCH);
			return -EINVAL;
		}
		env->watch_comms[env->nwatch_comms++] = arg;
		return 0;
	}
	return -EINVAL;
}

int parse_args(int argc, char **argv, struct env *env, const struct argusd_ctx *ctx)
{
	static const struct option opts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "fresh", no_argument, NULL, OPT_FRESH },
		{ "kernel-buffer", required_argument, NULL, OPT_KBUF },
		{ "no-syscalls", no_argument, NULL, OPT_NO_SYSCALLS },
		{ "syscall-probes", required_argument, NULL, OPT_SYSCALL_PROBES },
		{ "stacks", no_argument, NULL, OPT_STACKS },
		{ "no-stacks", no_argument, NULL, OPT_NO_STACKS },
		{ "sample-hz", required_argument, NULL, OPT_SAMPLE_HZ },
		{ "uprobe-hooks", required_argument, NULL, OPT_UPROBE_HOOKS },
		{ "go-probes", no_argument, NULL, OPT_GO_PROBES },
		{ "no-go-probes", no_argument, NULL, OPT_NO_GO_PROBES },
		{ "go-snapshot", required_argument, NULL, OPT_GO_SNAPSHOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "detail", required_argument, NULL, OPT_DETAIL },
		{ "escalate-ms", required_argument, NULL, OPT_ESCALATE_MS },
		{ "escalate-named", no_argument, NULL, OPT_ESCALATE_NAMED },
		{ "snapshot-dir", required_argument, NULL, OPT_SNAP_DIR },
		{ "hang-threshold-ms", required_argument, NULL, OPT_HANG_MS },
		{ "snapshot-before-s", required_argument, NULL, OPT_SNAP_BEFORE },
		{ "snapshot-max-bytes", required_argument, NULL, OPT_SNAP_BYTES },
		{ "snapshot-max-total", required_argument, NULL, OPT_SNAP_TOTAL },
		{ "snapshot-max-count", required_argument, NULL, OPT_SNAP_COUNT },
		{ "watch-pid", required_argument, NULL, OPT_WATCH_PID },
		{ "watch-comm", required_argument, NULL, OPT_WATCH_COMM },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "netns", required_argument, NULL, OPT_NETNS },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *buffer = NULL, *socket_path = NULL, *log = NULL, *snap_dir = NULL;
	const char *cgroup = NULL, *netns = NULL;
	char why[512];
	long fd;
	char *end;
	int c;

	*env = defaults;
	while ((c = getopt_long(argc, argv, "b:s:S:r:fvh", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			buffer = optarg;
			break;
		case 's':
			if (parse_bytes(optarg, &env->size) || env->size == 0) {
				argusd_fail(ctx, "bad --size '%s': give bytes, optionally with K, M or G", optarg);
				return -EINVAL;
			}
			break;
		case 'S':
			socket_path = optarg;
			break;
		case 'r':
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				argusd_fail(ctx, "bad --ready-fd '%s': not an open file descriptor", optarg);
				return -EINVAL;
			}
			env->ready_fd = (int)fd;
			fcntl(env->ready_fd, F_SETFD, FD_CLOEXEC);
			break;
		case 'f':
			env->foreground = true;
			break;
		case OPT_LOG:
			log = optarg;
			break;
		case OPT_FRESH:
			env->fresh = true;
			break;
		case OPT_KBUF:
			if (parse_bytes(optarg, &env->kernel_buffer)) {
				argusd_fail(ctx, "bad --kernel-buffer '%s': give bytes, optionally with K, M or G", optarg);
				return -EINVAL;
			}
			break;
		case OPT_NO_SYSCALLS:
			env->no_syscalls = true;
			break;
		case OPT_SYSCALL_PROBES:
			if (!strcmp(optarg, "auto")) {
				env->syscall_probes = ARGUS_SYSCALL_PROBES_AUTO;
			} else if (!strcmp(optarg, "fentry")) {
				env->syscall_probes = ARGUS_SYSCALL_PROBES_FENTRY;
			} else if (!strcmp(optarg, "tracepoint")) {
				env->syscall_probes = ARGUS_SYSCALL_PROBES_TRACEPOINT;
			} else {
				argusd_fail(ctx, "bad --syscall-probes '%s': give auto, fentry or tracepoint", optarg);
				return -EINVAL;
			}
			break;
		case OPT_STACKS:
			env->no_stacks = false;
			break;
		case OPT_NO_STACKS:
			env->no_stacks = true;
			break;
		case OPT_SAMPLE_HZ:
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || fd < 0 || fd > 100000) {
				argusd_fail(ctx, "bad --sample-hz '%s': give 0 (off) to 100000", optarg);
				return -EINVAL;
			}
			env->sample_hz = (uint32_t)fd;
			break;
		case OPT_UPROBE_HOOKS:
			env->uprobe_hooks = optarg;
			break;
		case OPT_GO_PROBES:
		case OPT_NO_GO_PROBES:
			env->no_go_probes = c == OPT_NO_GO_PROBES;
			break;
		case OPT_GO_SNAPSHOT:
			if (optarg[0] != '/') {
				argusd_fail(ctx, "bad --go-snapshot '%s': give an absolute path", optarg);
				return -EINVAL;
			}
			env->go_snapshot = optarg;
			break;
		case 'v':
			env->verbose = true;
			break;
		case OPT_DETAIL:
			if (!strcmp(optarg, "full")) {
				env->detail = ARGUS_DETAIL_MODE_FULL;
			} else if (!strcmp(optarg, "lean")) {
				env->detail = ARGUS_DETAIL_MODE_LEAN;
			} else if (!strcmp(optarg, "auto")) {
				env->detail = ARGUS_DETAIL_MODE_AUTO;
			} else {
				argusd_fail(ctx, "bad --detail '%s': give full, lean or auto", optarg);
				return -EINVAL;
			}
			break;
		case OPT_ESCALATE_NAMED:
			env->escalate_named = true;
			break;
		case OPT_ESCALATE_MS: {
			uint64_t v;

			if (parse_count(ctx, "escalate-ms", optarg, 3600000, &v))
				return -EINVAL;
			env->escalate_ns = v * 1000000ull;
			break;
		}
		case OPT_SNAP_DIR:
			snap_dir = optarg;
			break;
		case OPT_CGROUP:
			cgroup = optarg;
			break;
		case OPT_NETNS:
			netns = optarg;
			break;
		case OPT_HANG_MS:
		case OPT_SNAP_BEFORE:
		case OPT_SNAP_BYTES:
		case OPT_SNAP_TOTAL:
		case OPT_SNAP_COUNT:
		case OPT_WATCH_PID:
		case OPT_WATCH_COMM:
			if (parse_hang_option(env, ctx, c, optarg))
				return -EINVAL;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		argusd_fail(ctx, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (env->escalate_named && !env->nwatch_pids && !env->nwatch_comms) {
		argusd_fail(ctx, "--escalate-named needs --watch-pid or --watch-comm");
		return -EINVAL;
	}
	if (env->detail == ARGUS_DETAIL_MODE_AUTO && !snap_dir) {
		argusd_fail(ctx, "--detail auto needs the hang detector (--snapshot-dir)");
		return -EINVAL;
	}
	if (argus_scope_init(&env->scope, cgroup, netns, why, sizeof(why))) {
		argusd_fail(ctx, "%s", why);
		return -EINVAL;
	}
	if (!buffer || !socket_path) {
		argusd_fail(ctx, "--buffer and --socket are required (see --help)");
		return -EINVAL;
	}
	/* Daemonizing changes to /: resolve relative paths first. */
	env->buffer = absolute_path(buffer);
	env->socket = absolute_path(socket_path);
	env->log = log ? absolute_path(log) : (env->socket ? default_log_path(env->socket) : NULL);
	env->snapshot_dir = snap_dir ? absolute_path(snap_dir) : NULL;
	if (!env->buffer || !env->socket || !env->log || (snap_dir && !env->snapshot_dir)) {
		argusd_fail(ctx, "failed to resolve paths: %s", strerror(errno ? errno : ENOMEM));
		return -ENOMEM;
	}
	return 0;
}
