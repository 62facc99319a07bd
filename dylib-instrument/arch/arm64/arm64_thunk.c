/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64 thunks (built on every host; they run on arm64 only, and are tested
 * here as data: arm64_thunk_test.c).  sp stays 16-aligned: the enter
 * frame is 160 bytes, the return frame 80.  x16/x17 (IP0/IP1) carry the
 * handler address and the far jump back, as a linker veneer would.
 */
#include "arm64_thunk.h"
#include "arm64_frames.h"
#include "arm64_writer.h"

#define POOL_SIZE 32    /* hook, on_enter, on_return, pad */

_Static_assert(sizeof(struct argus_arm64_enter_frame) == 160, "enter frame");
_Static_assert(sizeof(struct argus_arm64_return_frame) == 80, "return frame");

static void put_call(struct argus_writer *w, uint64_t pool, uint64_t handler_literal)
{
	a64_put_mov_from_sp(w, 1);                       /* x1 = the frame */
	a64_put_ldr_literal_at(w, 0, pool);              /* x0 = the hook */
	a64_put_ldr_literal_at(w, A64_X16, handler_literal);
	a64_put_blr(w, A64_X16);
}

static void put_enter_thunk(struct argus_writer *w, uint64_t pool)
{
	a64_put_sub_sp(w, 160);
	for (unsigned r = 0; r < 18; r += 2)
		a64_put_stp_sp(w, r, r + 1, r * 8);
	a64_put_str_sp(w, A64_LR, 144);
	put_call(w, pool, pool + 8);
	a64_put_ldr_sp(w, A64_LR, 144);                  /* maybe the return thunk now */
	for (unsigned r = 0; r < 18; r += 2)
		a64_put_ldp_sp(w, r, r + 1, r * 8);
	a64_put_add_sp(w, 160);
}

static void put_return_thunk(struct argus_writer *w, uint64_t pool)
{
	a64_put_sub_sp(w, 80);
	for (unsigned r = 0; r < 8; r += 2)
		a64_put_stp_sp(w, r, r + 1, r * 8);
	put_call(w, pool, pool + 16);
	a64_put_ldr_sp(w, A64_LR, 64);                   /* the caller's return address */
	for (unsigned r = 0; r < 8; r += 2)
		a64_put_ldp_sp(w, r, r + 1, r * 8);
	a64_put_add_sp(w, 80);
	a64_put_ret(w);
}

int argus_arm64_build_thunks(struct argus_hook *h, uint8_t *buf, uint64_t buf_pc, size_t size,
			     const uint8_t *code, size_t code_len, const struct argus_thunk_calls *calls,
			     struct argus_reloc_result *res)
{
	struct argus_writer w;
	argus_writer_init(&w, buf, size, buf_pc);
	argus_put_u64(&w, calls->hook);
	argus_put_u64(&w, calls->on_enter);
	argus_put_u64(&w, calls->on_return);
	argus_put_u64(&w, 0);

	h->enter_thunk = buf + w.len;
	put_enter_thunk(&w, buf_pc);
	if (w.overflow)
		return ARGUS_ERR_NO_SPACE;
	int err = argus_relocate(ARGUS_ARCH_ARM64, code, code_len, (uint64_t)h->target, h->patch_len,
				 argus_writer_pc(&w), w.base + w.len, w.cap - w.len, res);
	if (err)
		return err;
	w.len += res->out_len;
	if (!res->ended) {
		uint64_t back = (uint64_t)h->target + res->consumed;
		if (a64_branch_fits(&w, back, 26))
			a64_put_b(&w, back);
		else
			a64_put_jmp_abs(&w, back);
	}
	if (h->spec.return_type) {
		h->return_thunk = buf + w.len;
		put_return_thunk(&w, buf_pc);
	}
	return w.overflow ? ARGUS_ERR_NO_SPACE : 0;
}
