/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host architecture's thunk frames, behind the few accessors the C side
 * (hook_events.c) needs.  "caller_sp" is the caller's stack pointer once the
 * hooked call has returned: the same value at entry and at return, which is
 * what the shadow stack matches on.
 */
#ifndef ARGUS_FRAMES_H
#define ARGUS_FRAMES_H

#if defined(__x86_64__)
#include "x86_64/x86_frames.h"
typedef struct argus_x86_enter_frame argus_enter_frame;
typedef struct argus_x86_return_frame argus_return_frame;
#define FRAME_ARG0(f) ((f)->rdi)
/* integer argument n (0-5: rdi rsi rdx rcx r8 r9) */
#define FRAME_ARG(f, n) ((n) == 0 ? (f)->rdi : (n) == 1 ? (f)->rsi : (n) == 2 ? (f)->rdx : \
			 (n) == 3 ? (f)->rcx : (n) == 4 ? (f)->r8 : (f)->r9)
#define FRAME_RET(f) ((f)->ret)                    /* return address, both frames */
#define FRAME_RETVAL(f) ((f)->rax)
#define ENTER_CALLER_SP(f) ((uint64_t)(&(f)->ret + 1))   /* past the pushed return address */
#define RETURN_CALLER_SP(f) ((uint64_t)((f) + 1))
#elif defined(__aarch64__)
#include "arm64/arm64_frames.h"
typedef struct argus_arm64_enter_frame argus_enter_frame;
typedef struct argus_arm64_return_frame argus_return_frame;
#define FRAME_ARG0(f) ((f)->x[0])
#define FRAME_ARG(f, n) ((f)->x[(n)])                   /* x0-x5, as on x86_64 */
#define FRAME_RET(f) ((f)->lr)
#define FRAME_RETVAL(f) ((f)->x[0])
#define ENTER_CALLER_SP(f) ((uint64_t)((f) + 1))   /* the return address is in lr, not on the stack */
#define RETURN_CALLER_SP(f) ((uint64_t)((f) + 1))
#else
#error "no trampoline frames for this architecture"
#endif

#endif
