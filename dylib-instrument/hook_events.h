/* SPDX-License-Identifier: Apache-2.0 */
/* The C side of the thunks (hook_events.c), with the host's frames. */
#ifndef ARGUS_HOOK_EVENTS_H
#define ARGUS_HOOK_EVENTS_H

#include "hook.h"
#include "arch/frames.h"

void argus_hook_on_enter(struct argus_hook *h, argus_enter_frame *f);
/* Returns (and writes into the frame) the caller's return address. */
uint64_t argus_hook_on_return(struct argus_hook *h, argus_return_frame *f);

#endif
