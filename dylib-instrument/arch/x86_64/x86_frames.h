/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack layouts the x86_64 thunks hand to the C side (lowest address
 * first).  The enter frame is what the 9 pushes leave below the return
 * address: every register a SysV callee may find an argument in or that a C
 * call may clobber (vector registers excepted: the C side never uses them).
 */
#ifndef ARGUS_X86_FRAMES_H
#define ARGUS_X86_FRAMES_H

#include <stdint.h>

struct argus_x86_enter_frame {
	uint64_t r11, r10, rax, r9, r8, rcx, rdx, rsi, rdi;
	uint64_t ret;            /* the caller's return address; a return hook replaces it */
};

struct argus_x86_return_frame {
	uint64_t align;
	uint64_t rdx, rax;       /* the function's return values */
	uint64_t ret;            /* the C side writes the caller's return address here */
};

#endif
