/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The call a static trampoline makes into the recorder (static_probe.c):
 *
 *   argus_static_enter(word, probe_id, fn, arg0, frame, return_stub)
 *
 * word packs what the hook records (argus instrument computes it from the
 * hook spec, static_tramp.c bakes it into the trampoline as a constant):
 *   bits  0-15  the entry record type (0: none)
 *   bits 16-23  the return record type (0: no return hook; then frame and
 *               return_stub are not passed)
 *   bits 24-26  the return record's obj: 0 the return value, 1-6 argument
 *               0-5 kept at entry, 7 the process key (hook.h's return_obj)
 *   bit  27     keep the low 32 bits of obj (the spec's obj_bits 32)
 *   bit  31     set by the return stub: this call is the function returning
 * At entry of a return hook, frame is the saved registers below the return
 * address (struct argus_x86_enter_frame, the run-time thunk's layout) and
 * return_stub the trampoline's return stub, which the recorder puts in
 * place of the return address.  The stub calls again with bit 31 set, the
 * result as arg0 and frame = struct argus_x86_return_frame; the recorder
 * writes the caller's return address into it.  Libraries instrumented
 * before return hooks existed pass a word below 1 << 16 and four arguments.
 */
#ifndef ARGUS_STATIC_ABI_H
#define ARGUS_STATIC_ABI_H

#define ARGUS_STATIC_ENTER_TYPE(w) ((w) & 0xFFFFu)
#define ARGUS_STATIC_RET_TYPE(w) (((w) >> 16) & 0xFFu)
#define ARGUS_STATIC_RET_OBJ(w) (((w) >> 24) & 0x7u)
#define ARGUS_STATIC_OBJ32 (1u << 27)
#define ARGUS_STATIC_RETURNING (1u << 31)

#endif
