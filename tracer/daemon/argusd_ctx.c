// SPDX-License-Identifier: Apache-2.0
/*
 * The context argusd hands its role files (argusd_ctx.h): formatting on
 * this side, so a callback gets one finished line; and the stateless
 * helpers they share.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#ifndef __linux__
#include "compat_macos.h"   /* macOS build: sched_getcpu */
#endif

#include "argusd_ctx.h"

void argusd_emit(const struct argusd_ctx *c, void (*fn)(void *arg, const char *msg), const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(c->arg, msg);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void fill_header(struct argus_event_header *h, uint16_t type, uint16_t size, uint32_t pid, uint32_t tid)
{
	int cpu = sched_getcpu();

	h->ts_ns = now_ns();
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->cpu = cpu < 0 ? 0 : (uint16_t)cpu;
	h->flags = 0;
}

bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}
