/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hooks: a function's entry is overwritten with a jump to a trampoline that
 * records an event (recorder.h), then runs the relocated prologue and jumps
 * back.  With a return type, the trampoline also diverts the return address
 * to a return thunk that records the return and goes back to the caller.
 *
 * Installing never crashes on a prologue it cannot move: the relocator's
 * error comes back and the function is left untouched.  Removing restores
 * the original bytes; the trampoline page stays mapped, since a thread may
 * still be running in it (or return through its thunk).
 *
 * Runs on x86_64; arm64 hooks are built the same way (arch/arm64/, tested
 * as data here, never run on this project's machines); other architectures
 * get ARGUS_ERR_UNSUPPORTED.
 */
#ifndef ARGUS_HOOK_H
#define ARGUS_HOOK_H

#include <stddef.h>
#include <stdint.h>

struct argus_ret_deref;

#define ARGUS_HOOK_OBJ_PROCESS 6      /* obj_arg: obj = ARGUS_OBJ_PROCESS (tracer/ringbuf/argus_event.h) */
#define ARGUS_HOOK_RETURN_PROCESS 7   /* return_obj: the same key */

struct argus_hook_spec {
	uint32_t probe_id;
	uint16_t enter_type;    /* record type at entry, 0 = none */
	uint16_t return_type;   /* record type at return, 0 = no return hook */
	size_t fn_size;         /* symbol size when known (0 = unknown): bounds reads and the branch scan */
	uint8_t obj_arg;        /* the integer argument recorded as obj at entry (0-5), or ARGUS_HOOK_OBJ_PROCESS */
	uint8_t return_obj;     /* the return record's obj: 0 the return value, 1-6 argument 0-5 saved at
				   entry, ARGUS_HOOK_RETURN_PROCESS */
	uint8_t obj32;          /* keep the low 32 bits of obj (a 32-bit argument / result) */
	uint64_t null_obj;      /* recorded in place of a NULL obj (e.g. GLib's default context), 0 = none */
	const struct argus_ret_deref *ret_deref;   /* return: obj read through the returned pointer, filtered (ret_deref.h); NULL = the return value */
};

struct argus_hook {
	uint8_t *target;
	struct argus_hook_spec spec;
	uint8_t *page;          /* trampoline page */
	uint8_t *enter_thunk;
	uint8_t *return_thunk;  /* NULL without a return hook */
	size_t patch_len;
	uint8_t saved[16];      /* the original bytes under the patch */
	int installed;
};

/* 0 or a negative enum argus_reloc_error (reloc.h); -ENOMEM style errors
 * for memory.  Callers serialize installs (one lock in the agent). */
int argus_hook_install(void *fn, const struct argus_hook_spec *spec, struct argus_hook *h);
int argus_hook_remove(struct argus_hook *h);


#endif
