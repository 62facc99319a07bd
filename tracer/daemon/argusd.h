/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to argusd: the command line and the daemon's state.  The role
 * files below are started by argusd.c and call back only through the
 * context they are given (argusd_ctx.h), never into argusd.c.
 *
 *   argusd.c           main, start-up order, the drain loop, record writing and
 *                      the after-wrap refresh, shutdown
 *   argusd_options.c   command line -> env
 *   argusd_control.c   the control socket: status / stop
 *   proc_snapshot.c    /proc -> PROC_SNAPSHOT records (start-up and re-naming)
 *   mappings_writer.c  /proc/PID/maps -> MAPPING records
 *   hang_detector.c    online hang detector; snapshot_writer.c its snapshots
 */
#ifndef ARGUSD_H
#define ARGUSD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "argus_event.h"
#include "argus_rb.h"
#include "argusd_control.h"
#include "argusd_ctx.h"
#include "detail_tier.h"
#include "hang_detector.h"
#include "mappings_writer.h"
#include "platform.h"
#include "side_source.h"
#include "thread_names.h"
#include "cgroup_path.h"

#define TICK_NS 1000000000ull

/* The command line (argusd_options.c). */
struct env {
	char *buffer;
	uint64_t size;
	char *socket;
	char *log;
	int ready_fd;
	bool foreground;
	bool fresh;
	uint64_t kernel_buffer;
	bool no_syscalls;
	int syscall_probes;         /* enum argus_syscall_probes (platform.h) */
	bool no_stacks;
	bool verbose;
	uint32_t sample_hz;         /* CPU samples per second per CPU (argus_sample.c); 0 = off */
	char *uprobe_hooks;         /* hook list for uprobes (argus_uprobe.c, side_source.h); NULL = off */
	bool no_go_probes;          /* leave Go executables unprobed (side_source.h, Go) */
	char *go_snapshot;          /* python that runs argus.tracer.gosnap at each attach; NULL = none */
	uint8_t detail;             /* enum argus_detail_mode (detail_tier.h) */
	uint64_t escalate_ns;       /* auto: out of the loop this long turns full detail on */
	bool escalate_named;        /* auto: only threads of --watch-pid / --watch-comm escalate */
	/* the hang detector: on when snapshot_dir is set */
	char *snapshot_dir;
	struct hang_detector_config hangs;
	uint32_t watch_pids[HD_MAX_WATCH];
	unsigned nwatch_pids;
	const char *watch_comms[HD_MAX_WATCH];
	unsigned nwatch_comms;
	/* --cgroup / --netns: record only inside (cgroup_path.c); zeros = everything */
	struct argus_scope scope;
};
/* Fills env from argv (defaults first): 0, or a negative errno once the
 * reason is out through c (argusd_fail). */
int parse_args(int argc, char **argv, struct env *env, const struct argusd_ctx *c);

struct daemon {
	struct argusd_ctx ctx;       /* what the role files call back through */
	const struct env *env;       /* the command line, read only */
	const struct argus_platform_ops *ops;
	void *src;
	struct argus_rb *rb;
	struct argus_rb_producer prod;
	bool prod_live;
	int listen_fd;
	bool socket_bound;
	int signal_fd;
	struct client clients[MAX_CLIENTS];
	uint64_t start_ns;
	uint64_t lost_reported;
	uint64_t unreported_reported;   /* switches the kernel never reported, in the header so far */
	struct rate_sample samples[RATE_SAMPLES];
	unsigned nsamples, sample_head;
	bool stopping;
	struct maps_seen maps_seen[MAPS_SEEN_SLOTS];
	uint64_t mapping_records;
	struct thread_names *names;  /* names re-emitted after a wrap (thread_names.c) */
	struct argus_side_source *sampler;  /* NULL: no CPU samples (side_source.h) */
	struct argus_side_source *uprobes;  /* NULL: no hooks through uprobes (side_source.h) */
	uint64_t refresh_seq;        /* producer chunk seq at the last refresh */
	bool refreshing;
	uint64_t names_emitted;
	struct argus_urings *urings;  /* user-space tracepoint rings (urings.c), or NULL */
	struct hang_detector *hangs;  /* NULL when off (hang_detector.c) */
	struct hang_index *index;     /* the ring index (hang_index.c), NULL when none */
	struct detail_tier tier;      /* the recording tier in force (detail_tier.c) */
};

#endif /* ARGUSD_H */
