/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stack layouts the arm64 thunks hand to the C side (lowest address first).
 * Enter: every register an AAPCS64 callee may find an argument in (x0-x7,
 * x8 the indirect result) or a C call may clobber (x9-x17), and the link
 * register; vector registers excepted (the C side never uses them).
 */
#ifndef ARGUS_ARM64_FRAMES_H
#define ARGUS_ARM64_FRAMES_H

#include <stdint.h>

struct argus_arm64_enter_frame {     /* 160 bytes: sp stays 16-aligned */
	uint64_t x[18];
	uint64_t lr;             /* x30, the caller's return address; a return hook replaces it */
	uint64_t pad;
};

struct argus_arm64_return_frame {    /* 80 bytes */
	uint64_t x[8];           /* the function's return values */
	uint64_t lr;             /* the C side writes the caller's return address here */
	uint64_t pad;
};

#endif
