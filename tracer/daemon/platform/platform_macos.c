// SPDX-License-Identifier: Apache-2.0
/*
 * macOS event source: reads kdebug live through sysctl {CTL_KERN,
 * KERN_KDEBUG, op} and turns its kd_bufs into Argus records with the
 * platform-neutral decoder (kdebug_decode.c), written into the file ring
 * buffer.  Built only on __APPLE__; compiled and linked here by cross
 * compiling (scripts/build-macos.sh), never run on a Mac by us.
 *
 * Op sequence (facts from xnu's bsd/kern/kdebug.c, _kd_sysctl_internal):
 *   open   REMOVE (drop a stale configuration we may own) -> SETBUF (event
 *          count in mib[3]) -> SETUP -> SET_TYPEFILTER (8192-byte bitmap in
 *          oldp: the classes below) -> PIDEX (exclude the daemon)
 *   start  ENABLE 1 -> GETBUF (thread count) -> THRMAP (the map the kernel
 *          built at ENABLE), kept until the first poll writes the snapshots
 *   poll   [BUFWAIT, timeout in *oldlenp, only when asked to wait: a 0
 *          timeout waits forever] -> GETBUF (WRAPPED: events overwritten)
 *          -> READTR (bytes in, event count out) -> decoder -> file
 *   stop   ENABLE 0 -> REMOVE
 * Another owner of the facility (Instruments, ktrace, fs_usage, another
 * argusd) makes the configuring ops fail with EBUSY: reported as such.
 */
#ifdef __APPLE__

#include <errno.h>
#include <mach/mach_time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysctl.h>
#include <sys/types.h>

#include "argus_event.h"
#include "kdebug.h"
#include "kdebug_decode.h"
#include "platform.h"

#define DEFAULT_EVENTS   (1u << 20)       /* kernel buffer: 1M kd_bufs = 64 MiB */
#define READ_EVENTS      (1u << 16)       /* kd_bufs per READTR */

struct kd_regtype_compat {                /* kd_regtype: PIDTR / PIDEX argument */
	unsigned int type, value1, value2, value3, value4;
};

struct macos_tracer {
	struct kdd *dec;
	struct argus_rb_producer *out;       /* the destination while poll runs */
	struct kd_buf64 *buf;
	struct kd_threadmap64 *map;          /* until the first poll writes it */
	size_t nmap;
	uint32_t nevents;
	uint32_t exclude_pid;
	bool enabled, configured, wrapped_seen;
	uint64_t records, rejected, kernel_drops;
	int verbose;
	void (*observe)(void *ctx, const void *rec, uint32_t size);
	void *observe_ctx;
};

/* sysctl {CTL_KERN, KERN_KDEBUG, op[, value]}; 0 or -errno. */
static int kd_op(int op, int value, bool with_value, void *buf, size_t *len)
{
	int mib[4] = { KD_CTL_KERN, KD_KERN_KDEBUG, op, value };
	size_t zero = 0;
	if (sysctl(mib, with_value ? 4 : 3, buf, len ? len : &zero, NULL, 0) < 0)
		return -errno;
	return 0;
}

static void error_line(char *err, size_t errlen, const char *verb, int rc)
{
	if (rc == -EBUSY)
		snprintf(err, errlen, "failed to %s kdebug: another tracer (Instruments, ktrace, fs_usage) owns kdebug", verb);
	else if (rc == -EPERM || rc == -EACCES)
		snprintf(err, errlen, "failed to %s kdebug: %s (tracing needs root)", verb, strerror(-rc));
	else
		snprintf(err, errlen, "failed to %s kdebug: %s", verb, strerror(-rc));
}

static void typefilter_allow(uint8_t *tf, uint32_t cls, uint32_t sub)
{
	uint32_t bit = (cls << 8) | sub;
	tf[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

static int emit_record(void *ctx, const void *rec, uint32_t size)
{
	struct macos_tracer *t = ctx;
	if (!t->out)
		return -EINVAL;
	int rc = argus_rb_write(t->out, rec, size);
	if (rc < 0) {
		t->rejected++;
		return rc == -ENOSPC ? rc : 0;  /* one bad record must not stop tracing */
	}
	t->records++;
	if (t->observe)
		t->observe(t->observe_ctx, rec, size);
	return 0;
}

static int macos_open(const struct argus_tracer_config *cfg, void **state, char *err, size_t errlen)
{
	struct macos_tracer *t = calloc(1, sizeof(*t));
	uint8_t *tf = calloc(1, KD_TYPEFILTER_BYTES);
	struct kdd_config dc = { 0 };
	mach_timebase_info_data_t tb;
	int rc;

	if (!t || !tf) {
		snprintf(err, errlen, "failed to allocate tracer: out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}
	t->verbose = cfg->verbose;
	t->observe = cfg->observe;
	t->observe_ctx = cfg->observe_ctx;
	t->exclude_pid = cfg->exclude_tgid;
	t->nevents = cfg->kernel_buffer_bytes ? (uint32_t)(cfg->kernel_buffer_bytes / sizeof(struct kd_buf64))
					      : DEFAULT_EVENTS;
	t->buf = calloc(READ_EVENTS, sizeof(*t->buf));
	if (!t->buf) {
		snprintf(err, errlen, "failed to allocate read buffer: out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}
	mach_timebase_info(&tb);
	dc.timebase_numer = tb.numer;
	dc.timebase_denom = tb.denom;
	dc.exclude_pid = cfg->exclude_tgid;
	dc.trace_syscalls = cfg->trace_syscalls;
	t->dec = kdd_create(&dc, emit_record, t);
	if (!t->dec) {
		snprintf(err, errlen, "failed to create kdebug decoder: out of memory");
		rc = -ENOMEM;
		goto cleanup;
	}

	/* REMOVE first: a configuration left by a crashed argusd is ours to drop;
	 * someone else's makes this fail with EBUSY, which is what we report. */
	if ((rc = kd_op(KD_OP_REMOVE, 0, false, NULL, NULL)) < 0) {
		error_line(err, errlen, "reset", rc);
		goto cleanup;
	}
	t->configured = true;
	if ((rc = kd_op(KD_OP_SETBUF, (int)t->nevents, true, NULL, NULL)) < 0) {
		error_line(err, errlen, "size buffer of", rc);
		goto cleanup;
	}
	if ((rc = kd_op(KD_OP_SETUP, 0, false, NULL, NULL)) < 0) {
		error_line(err, errlen, "set up", rc);
		goto cleanup;
	}
	typefilter_allow(tf, KD_CLASS_MACH, KD_MACH_SCHED);
	typefilter_allow(tf, KD_CLASS_MACH, KD_MACH_EXCP_INTR);
	typefilter_allow(tf, KD_CLASS_MACH, KD_MACH_EXCP_DECI);    /* timer arm -> callout */
	typefilter_allow(tf, KD_CLASS_MACH, KD_ARGUS_SUBCLASS);
	typefilter_allow(tf, KD_CLASS_TRACE, KD_TRACE_DATA);
	typefilter_allow(tf, KD_CLASS_TRACE, KD_TRACE_STRING);
	typefilter_allow(tf, KD_CLASS_TRACE, KD_TRACE_INFO);
	/* syscalls carry the wait reasons, so they are read even without
	 * trace_syscalls (the decoder then emits no SYSCALL records) */
	typefilter_allow(tf, KD_CLASS_MACH, KD_MACH_EXCP_SC);
	typefilter_allow(tf, KD_CLASS_BSD, KD_BSD_EXCP_SC);
	size_t tflen = KD_TYPEFILTER_BYTES;
	if ((rc = kd_op(KD_OP_SET_TYPEFILTER, 0, false, tf, &tflen)) < 0) {
		error_line(err, errlen, "set typefilter of", rc);
		goto cleanup;
	}
	if (t->exclude_pid) {
		struct kd_regtype_compat reg = { .value1 = t->exclude_pid, .value2 = 1 };
		size_t len = sizeof reg;
		if ((rc = kd_op(KD_OP_PIDEX, 0, false, &reg, &len)) < 0 && t->verbose)
			fprintf(stderr, "argusd: kdebug PIDEX failed (%s); the decoder drops our own records\n",
				strerror(-rc));
	}
	free(tf);
	*state = t;
	return 0;

cleanup:
	free(tf);
	if (t) {
		if (t->configured)
			kd_op(KD_OP_REMOVE, 0, false, NULL, NULL);
		kdd_destroy(t->dec);
		free(t->buf);
		free(t);
	}
	return rc;
}

static int macos_start(void *state, char *err, size_t errlen)
{
	struct macos_tracer *t = state;
	struct kd_bufinfo info;
	size_t len = sizeof info;
	int rc;

	if ((rc = kd_op(KD_OP_ENABLE, 1, true, NULL, NULL)) < 0) {
		error_line(err, errlen, "enable", rc);
		return rc;
	}
	t->enabled = true;
	memset(&info, 0, sizeof info);
	if ((rc = kd_op(KD_OP_GETBUF, 0, false, &info, &len)) < 0) {
		error_line(err, errlen, "query", rc);
		return rc;
	}
	if (info.nkdthreads > 0) {
		size_t bytes = (size_t)info.nkdthreads * sizeof(struct kd_threadmap64);
		t->map = calloc(1, bytes);
		if (t->map && kd_op(KD_OP_THRMAP, 0, false, t->map, &bytes) == 0) {
			t->nmap = bytes / sizeof(struct kd_threadmap64);
		} else {
			/* threads are then named by later NEWTHREAD / name events only */
			free(t->map);
			t->map = NULL;
		}
	}
	return 0;
}

static int macos_fd(void *state)
{
	(void)state;
	return -1;      /* kdebug has no pollable descriptor: the daemon polls on its timer */
}

static int macos_poll(void *state, struct argus_rb_producer *out, int timeout_ms)
{
	struct macos_tracer *t = state;
	uint64_t before = t->records;
	struct kd_bufinfo info;
	size_t len;
	int rc;

	t->out = out;
	if (t->map) {
		rc = kdd_threadmap(t->dec, t->map, t->nmap, mach_absolute_time());
		free(t->map);
		t->map = NULL;
		if (rc < 0)
			goto done;
	}
	if (timeout_ms > 0 && t->enabled) {
		len = (size_t)timeout_ms;   /* BUFWAIT takes its timeout in the length */
		kd_op(KD_OP_BUFWAIT, 0, false, NULL, &len);
	}
	len = sizeof info;
	memset(&info, 0, sizeof info);
	if (kd_op(KD_OP_GETBUF, 0, false, &info, &len) == 0) {
		bool wrapped = info.flags & KD_FLAG_WRAPPED;
		if (wrapped && !t->wrapped_seen) {
			/* the count is unknown; the kernel also inserts its own
			 * lost-events markers, which the decoder turns into LOST */
			t->kernel_drops++;
			kdd_lost(t->dec, mach_absolute_time(), 1);
		}
		t->wrapped_seen = wrapped;
	}
	for (;;) {
		len = READ_EVENTS * sizeof(struct kd_buf64);
		rc = kd_op(KD_OP_READTR, 0, false, t->buf, &len);
		if (rc < 0)
			goto done;
		if (len > READ_EVENTS)
			len = READ_EVENTS;  /* READTR returns the event count */
		if (len == 0)
			break;
		rc = kdd_feed(t->dec, t->buf, len);
		if (rc < 0)
			goto done;
		if (len < READ_EVENTS)
			break;
	}
	rc = 0;
done:
	t->out = NULL;
	if (rc < 0)
		return rc;
	return (int)(t->records - before > INT32_MAX ? INT32_MAX : t->records - before);
}

static uint64_t macos_lost(void *state)
{
	struct macos_tracer *t = state;
	return t->kernel_drops + t->rejected;
}

static void macos_stats(void *state, struct argus_platform_stats *st)
{
	struct macos_tracer *t = state;
	st->records = t->records;
	st->kernel_drops = t->kernel_drops;
	st->rejected = t->rejected;
}

static void macos_stop(void *state)
{
	struct macos_tracer *t = state;
	if (t->enabled) {
		kd_op(KD_OP_ENABLE, 0, true, NULL, NULL);
		t->enabled = false;
	}
	/* events still in the kernel buffer: the daemon's last poll(0) reads
	 * them, then close() removes the configuration */
}

static void macos_close(void *state)
{
	struct macos_tracer *t = state;
	if (!t)
		return;
	macos_stop(t);
	if (t->configured)
		kd_op(KD_OP_REMOVE, 0, false, NULL, NULL);
	kdd_destroy(t->dec);
	free(t->map);
	free(t->buf);
	free(t);
}

static const struct argus_platform_ops macos_ops = {
	.name = "kdebug",
	.open = macos_open,
	.start = macos_start,
	.fd = macos_fd,
	.poll = macos_poll,
	.lost = macos_lost,
	.stats = macos_stats,
	.stack_pids = NULL,
	.stop = macos_stop,
	.close = macos_close,
};

const struct argus_platform_ops *argus_platform_native(void)
{
	return &macos_ops;
}

#endif /* __APPLE__ */
