/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What argusd hands each of its role files (control, options, hang
 * detector, /proc snapshot, mappings, tracepoint rings) when it starts
 * them: where a log line goes, where the one line of a failed start goes,
 * and where a record goes.  A role file calls back only through this, so
 * none of them depends on argusd.c or reads a global of the daemon; a test
 * or a bench drives a role file with a context of its own.
 *
 * The rest are helpers without state that every role file uses.
 */
#ifndef ARGUSD_CTX_H
#define ARGUSD_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "argus_event.h"

struct argusd_ctx {
	/* one line, no newline; the callee escapes control bytes */
	void (*log)(void *arg, const char *msg);
	/* the one line a failed start reports (the log and `argus start`) */
	void (*fail)(void *arg, const char *msg);
	/* a record into the trace: 0 or a negative errno */
	int (*write)(void *arg, const void *rec, uint32_t size);
	void *arg;
};

/* One line through fn (c->log or c->fail), formatted on this side. */
void argusd_emit(const struct argusd_ctx *c, void (*fn)(void *arg, const char *msg), const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define argusd_log(c, ...) argusd_emit((c), (c)->log, __VA_ARGS__)
#define argusd_fail(c, ...) argusd_emit((c), (c)->fail, __VA_ARGS__)

static inline int argusd_write(const struct argusd_ctx *c, const void *rec, uint32_t size)
{
	return c->write(c->arg, rec, size);
}

/* CLOCK_MONOTONIC in ns: the clock of every record. */
uint64_t now_ns(void);
/* The header of a record the daemon writes itself, stamped now. */
void fill_header(struct argus_event_header *h, uint16_t type, uint16_t size, uint32_t pid, uint32_t tid);
/* A uid that may own the files the daemon keeps: root or whoever runs it. */
bool trusted_uid(uid_t uid);

#endif /* ARGUSD_CTX_H */
