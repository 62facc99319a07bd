/* SPDX-License-Identifier: Apache-2.0 */
#ifndef ARGUS_X86_THUNK_H
#define ARGUS_X86_THUNK_H

#include "../../hook.h"
#include "../../reloc.h"

/* Writes h's enter thunk (save registers, call argus_hook_on_enter, restore,
 * relocated prologue, jump back) and, with a return type, its return thunk
 * into page.  code/code_len: the function's bytes.  0 or enum argus_reloc_error. */
int argus_x86_build_thunks(struct argus_hook *h, uint8_t *page, size_t page_size,
			   const uint8_t *code, size_t code_len, struct argus_reloc_result *res);

#endif
