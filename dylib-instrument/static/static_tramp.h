/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Trampolines for static instrumentation (`argus instrument`): the same
 * relocator as the run-time hooks, but the code is generated for addresses
 * inside a library file (a new segment added by hooks/static_rewrite.py) and
 * the recorder is reached through a pointer slot the dynamic loader fills
 * (ELF: a relocation against argus_static_enter of libargus-static.so;
 * Mach-O: a dyld bind against _argus_static_enter of libargus-static.dylib).
 *
 * One trampoline:
 *   save the argument / scratch registers
 *   slot = *slot_pc; if (slot) slot(word, probe_id, fn_pc, arg0[, frame, stub])
 *   restore, the relocated prologue, jump back to fn_pc + consumed
 *   [x86_64, a hook with a return record: the return stub, which the
 *    recorder puts in place of the caller's return address; it calls the
 *    slot again with the result and returns to the caller]
 * word (static_abi.h) packs the entry type, the return type and the return
 * record's obj; arm64 trampolines record entries only.
 * An empty slot (no recorder bound) just runs the function.
 *
 * Built into libargus-static-gen.so and called through ctypes: the relocation
 * logic stays in C, in one place.
 */
#ifndef ARGUS_STATIC_TRAMP_H
#define ARGUS_STATIC_TRAMP_H

#include <stddef.h>
#include <stdint.h>

#define ARGUS_STATIC_API __attribute__((visibility("default")))

/* 0 or a negative enum argus_reloc_error; *out_len and *consumed on success.
 * code: code_len readable bytes at fn_pc; fn_size: the symbol's size (0 when
 * unknown), for the branch-back-into-the-patch check. */
ARGUS_STATIC_API int argus_static_trampoline(int arch, const uint8_t *code, size_t code_len, size_t fn_size, uint64_t fn_pc,
			    uint64_t tramp_pc, uint64_t slot_pc, uint32_t word, uint32_t probe_id,
			    uint8_t *out, size_t out_cap, size_t *out_len, size_t *consumed);

/* The entry patch: one branch fn_pc -> tramp_pc (x86_64 jmp rel32, arm64 B).
 * Its length, or ARGUS_ERR_OUT_OF_RANGE. */
ARGUS_STATIC_API int argus_static_entry_patch(int arch, uint64_t fn_pc, uint64_t tramp_pc, uint8_t *out, size_t cap);

/* Minimum bytes the entry patch needs (what the relocator must move). */
ARGUS_STATIC_API int argus_static_patch_size(int arch);

ARGUS_STATIC_API const char *argus_static_strerror(int err);

#endif
