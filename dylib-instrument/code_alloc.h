/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pages for trampolines within +-2 GiB of the code they serve, so the patch
 * is a 5-byte jmp rel32 and RIP-relative prologue operands still reach.
 * One page per hook: it goes from writable to executable once and is never
 * written again while code may run in it (W^X without a shared pool).
 */
#ifndef ARGUS_CODE_ALLOC_H
#define ARGUS_CODE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* A writable page as near to `near` as found (within max_distance when
 * possible; else anywhere: the caller checks the distance), or NULL. */
void *argus_code_page_near(uint64_t near, uint64_t max_distance);
/* Makes the page read + execute.  0 or -errno. */
int argus_code_page_seal(void *page);
/* Writes len bytes over live code at addr (mprotect around the write;
 * an aligned 8-byte window is replaced with one atomic store), with the
 * other threads stopped outside those bytes (quiesce.h). 0 or -errno. */
int argus_code_patch(void *addr, const void *bytes, size_t len);
/* Puts back the bytes a patch replaced: no stop when one atomic store does. */
int argus_code_unpatch(void *addr, const void *saved, size_t len);

#endif
