/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is this executable a Go program, and where are the scheduler functions
 * argusd probes in it (argus_uprobe.c attaches go_probe of
 * kext/linux/argus_uprobe.bpf.c there)?
 *
 * A Go executable is statically linked and carries its own runtime: it has
 * a .go.buildinfo section and, unless stripped (-ldflags=-s), a .symtab
 * naming runtime.ready, runtime.execute, runtime.park_m and runtime.goexit0
 * (a goroutine leaves its thread by parking or by ending).  Their file
 * offsets (through the PT_LOAD segment that holds each) are what the
 * kernel's uprobe interface takes.  amd64 only: the probe reads Go's
 * register ABI (ABIInternal: first argument in RAX, g in R14).
 */
#ifndef ARGUS_GO_RUNTIME_H
#define ARGUS_GO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

enum { ARGUS_GO_READY_FN, ARGUS_GO_EXECUTE_FN, ARGUS_GO_PARK_FN, ARGUS_GO_EXIT_FN, ARGUS_GO_NFNS };

/* The probed functions, in enum order (tested by go_runtime_test.c). */
extern const char *const argus_go_functions[ARGUS_GO_NFNS];

struct argus_go_offsets {
	uint64_t off[ARGUS_GO_NFNS];   /* file offsets of argus_go_functions (past the stack check) */
};

/* 0 with *out filled: a Go executable of this machine with every function;
 * 1: not one (another program, a stripped or foreign Go binary: *why says
 * which when why is given); -errno: the file could not be read. */
int argus_go_runtime_offsets(int fd, struct argus_go_offsets *out, char *why, size_t whylen);

#endif /* ARGUS_GO_RUNTIME_H */
