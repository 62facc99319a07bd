/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86_64 thunks.  Stack alignment (SysV: rsp % 16 == 0 at a call):
 *   enter:  at a function's entry rsp % 16 == 8; 9 pushes make it 0.
 *   return: after the function's ret rsp % 16 == 0 (the caller's value);
 *           slot + 2 pushes + 8 bytes of padding keep it 0.
 */
#include "x86_thunk.h"
#include "x86_frames.h"
#include "../../hook_events.h"
#include "x86_writer.h"

static const enum x86_reg saved[] = {X86_RDI, X86_RSI, X86_RDX, X86_RCX, X86_R8,
				     X86_R9, X86_RAX, X86_R10, X86_R11};
#define NSAVED (sizeof(saved) / sizeof(saved[0]))

_Static_assert(sizeof(struct argus_x86_enter_frame) == (NSAVED + 1) * 8, "enter frame = pushes + ret");

static void put_call_c(struct argus_writer *w, struct argus_hook *h, void *fn)
{
	x86_put_mov_reg_imm64(w, X86_RDI, (uint64_t)h);
	x86_put_mov_reg_reg(w, X86_RSI, X86_RSP);
	x86_put_mov_reg_imm64(w, X86_RAX, (uint64_t)fn);
	x86_put_call_reg(w, X86_RAX);
}

static void put_return_thunk(struct argus_writer *w, struct argus_hook *h)
{
	x86_put_sub_rsp_imm8(w, 8);          /* slot for the caller's return address */
	x86_put_push(w, X86_RAX);
	x86_put_push(w, X86_RDX);
	x86_put_sub_rsp_imm8(w, 8);          /* alignment */
	put_call_c(w, h, (void *)argus_hook_on_return);
	x86_put_add_rsp_imm8(w, 8);
	x86_put_pop(w, X86_RDX);
	x86_put_pop(w, X86_RAX);
	x86_put_ret(w);                      /* to the slot's address */
}

int argus_x86_build_thunks(struct argus_hook *h, uint8_t *page, size_t page_size,
			   const uint8_t *code, size_t code_len, struct argus_reloc_result *res)
{
	struct argus_writer w;
	argus_writer_init(&w, page, page_size, (uint64_t)page);

	h->enter_thunk = page;
	for (size_t i = 0; i < NSAVED; i++)
		x86_put_push(&w, saved[i]);
	put_call_c(&w, h, (void *)argus_hook_on_enter);
	for (size_t i = NSAVED; i-- > 0;)
		x86_put_pop(&w, saved[i]);
	if (w.overflow)
		return ARGUS_ERR_NO_SPACE;

	int err = argus_relocate(ARGUS_ARCH_X86_64, code, code_len, (uint64_t)h->target, h->patch_len,
				 argus_writer_pc(&w), w.base + w.len, w.cap - w.len, res);
	if (err)
		return err;
	w.len += res->out_len;
	if (!res->ended)
		x86_put_jmp(&w, (uint64_t)h->target + res->consumed);

	if (h->spec.return_type) {
		while (w.len % 16)
			argus_put_u8(&w, 0xCC);      /* int3 padding: never executed */
		h->return_thunk = page + w.len;
		put_return_thunk(&w, h);
	}
	return w.overflow ? ARGUS_ERR_NO_SPACE : 0;
}
