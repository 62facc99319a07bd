/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Static trampolines (static_tramp.h).  Register saving follows the run-time
 * thunks (arch/x86_64/x86_thunk.c, arch/arm64/arm64_thunk.c); what differs is
 * the call: arguments are constants of this hook and the recorder's address
 * is loaded from a slot, PC-relative, so the code is position independent.
 */
#include "static_tramp.h"
#include "static_abi.h"

#include <string.h>
#include "../reloc.h"
#include "../reader.h"
#include "../arch/x86_64/x86_writer.h"
#include "../arch/arm64/arm64_writer.h"

static const enum x86_reg x86_saved[] = {X86_RDI, X86_RSI, X86_RDX, X86_RCX, X86_R8,
					 X86_R9, X86_RAX, X86_R10, X86_R11};
#define X86_NSAVED (sizeof(x86_saved) / sizeof(x86_saved[0]))

/* REX.W <op> reg, [rip+disp32] (lea 8D / mov 8B): the writer has no such
 * form since run-time thunks use absolute addresses */
static void x86_put_rip_op(struct argus_writer *w, uint8_t op, enum x86_reg reg, uint64_t target)
{
	uint8_t insn[3] = {0x48 | (reg >= 8 ? 4 : 0), op, (uint8_t)(0x05 | ((reg & 7) << 3))};
	argus_put_bytes(w, insn, 3);
	argus_put_u32(w, (uint32_t)(int32_t)(target - (argus_writer_pc(w) + 4)));
}

/* mov rdi, word; mov rsi, probe_id; lea rdx, [rip+fn]: the first three
 * arguments of every call into the recorder */
static int x86_put_hook_args(struct argus_writer *w, uint32_t word, uint32_t probe_id, uint64_t fn_pc)
{
	x86_put_mov_reg_imm64(w, X86_RDI, word);
	x86_put_mov_reg_imm64(w, X86_RSI, probe_id);
	if (!x86_rel32_fits(w, 7, fn_pc))
		return ARGUS_ERR_OUT_OF_RANGE;
	x86_put_rip_op(w, 0x8D, X86_RDX, fn_pc);
	return 0;
}

/* The return stub (x86_thunk.c's return thunk, with the recorder reached
 * through the slot): after the function's ret rsp % 16 == 0; a slot for the
 * caller's return address, rax and rdx (the result) and 8 bytes of padding
 * keep it so and leave struct argus_x86_return_frame at rsp. */
static int x86_return_stub(struct argus_writer *w, uint32_t word, uint32_t probe_id, uint64_t fn_pc,
			   uint64_t slot_pc)
{
	x86_put_sub_rsp_imm8(w, 8);
	x86_put_push(w, X86_RAX);
	x86_put_push(w, X86_RDX);
	x86_put_sub_rsp_imm8(w, 8);
	x86_put_mov_reg_reg(w, X86_RCX, X86_RAX);   /* the result -> 4th argument */
	if (x86_put_hook_args(w, word | ARGUS_STATIC_RETURNING, probe_id, fn_pc))
		return ARGUS_ERR_OUT_OF_RANGE;
	x86_put_mov_reg_reg(w, X86_R8, X86_RSP);    /* the return frame */
	if (!x86_rel32_fits(w, 7, slot_pc))
		return ARGUS_ERR_OUT_OF_RANGE;
	/* the slot is bound: the entry went through it to put this stub in place */
	x86_put_rip_op(w, 0x8B, X86_RAX, slot_pc);
	x86_put_call_reg(w, X86_RAX);
	x86_put_add_rsp_imm8(w, 8);
	x86_put_pop(w, X86_RDX);
	x86_put_pop(w, X86_RAX);
	x86_put_ret(w);                              /* to the address the recorder wrote */
	return 0;
}

static int x86_trampoline(struct argus_writer *w, const uint8_t *code, size_t code_len, uint64_t fn_pc,
			  uint64_t slot_pc, uint32_t word, uint32_t probe_id, size_t *consumed)
{
	size_t stub_disp = 0;          /* where lea r9, [rip+stub] keeps its displacement */

	for (size_t i = 0; i < X86_NSAVED; i++)
		x86_put_push(w, x86_saved[i]);       /* 9 pushes: rsp 16-aligned */
	x86_put_mov_reg_reg(w, X86_RCX, X86_RDI);   /* arg0 -> 4th argument */
	if (x86_put_hook_args(w, word, probe_id, fn_pc) || !x86_rel32_fits(w, 7, slot_pc))
		return ARGUS_ERR_OUT_OF_RANGE;
	if (ARGUS_STATIC_RET_TYPE(word)) {
		x86_put_mov_reg_reg(w, X86_R8, X86_RSP);   /* the enter frame (saved registers + return address) */
		x86_put_rip_op(w, 0x8D, X86_R9, argus_writer_pc(w));   /* lea r9, [rip+stub]: fixed below */
		stub_disp = w->len - 4;
	}
	x86_put_rip_op(w, 0x8B, X86_RAX, slot_pc);  /* mov rax, [rip+slot] */
	argus_put_bytes(w, "\x48\x85\xC0\x74\x02", 5);   /* test rax, rax; jz over the call */
	x86_put_call_reg(w, X86_RAX);
	for (size_t i = X86_NSAVED; i-- > 0;)
		x86_put_pop(w, x86_saved[i]);
	if (w->overflow)
		return ARGUS_ERR_NO_SPACE;

	struct argus_reloc_result res;
	int err = argus_relocate(ARGUS_ARCH_X86_64, code, code_len, fn_pc, X86_JMP_REL32_SIZE,
				 argus_writer_pc(w), w->base + w->len, w->cap - w->len, &res);
	if (err)
		return err;
	w->len += res.out_len;
	if (!res.ended)
		x86_put_jmp(w, fn_pc + res.consumed);
	*consumed = res.consumed;
	if (stub_disp) {
		uint64_t stub = argus_writer_pc(w);
		if (x86_return_stub(w, word, probe_id, fn_pc, slot_pc))
			return ARGUS_ERR_OUT_OF_RANGE;
		if (w->overflow)
			return ARGUS_ERR_NO_SPACE;
		int32_t disp = (int32_t)(stub - (w->pc + stub_disp + 4));
		memcpy(w->base + stub_disp, &disp, 4);
	}
	return 0;
}

static int a64_trampoline(struct argus_writer *w, const uint8_t *code, size_t code_len, uint64_t fn_pc,
			  uint64_t slot_pc, uint32_t word, uint32_t probe_id, size_t *consumed)
{
	word &= ~(0xFFu << 16);                      /* entry only: no return stub on arm64 yet */
	a64_put_sub_sp(w, 160);                      /* x0-x17 and lr, 16-aligned */
	for (unsigned r = 0; r < 18; r += 2)
		a64_put_stp_sp(w, r, r + 1, r * 8);
	a64_put_str_sp(w, A64_LR, 144);
	a64_put_mov(w, 3, 0);                        /* arg0 -> 4th argument */
	a64_put_load_u64(w, 0, word);
	a64_put_load_u64(w, 1, probe_id);
	if (!a64_adrp_fits(w, fn_pc) || !a64_adrp_fits(w, slot_pc) || (slot_pc & 7))
		return ARGUS_ERR_OUT_OF_RANGE;
	a64_put_adrp(w, 2, fn_pc);
	a64_put_add_imm12(w, 2, 2, (unsigned)(fn_pc & 0xFFF));
	a64_put_adrp(w, A64_X16, slot_pc);
	/* ldr x16, [x16, #lo12] (unsigned offset, scaled by 8) */
	a64_put_insn(w, 0xF9400000u | (uint32_t)((slot_pc & 0xFFF) / 8) << 10 | A64_X16 << 5 | A64_X16);
	a64_put_with_imm19(w, 0xB4000000u | A64_X16, argus_writer_pc(w) + 8);   /* cbz x16, over blr */
	a64_put_blr(w, A64_X16);
	a64_put_ldr_sp(w, A64_LR, 144);
	for (unsigned r = 0; r < 18; r += 2)
		a64_put_ldp_sp(w, r, r + 1, r * 8);
	a64_put_add_sp(w, 160);
	if (w->overflow)
		return ARGUS_ERR_NO_SPACE;

	struct argus_reloc_result res;
	int err = argus_relocate(ARGUS_ARCH_ARM64, code, code_len, fn_pc, 4,
				 argus_writer_pc(w), w->base + w->len, w->cap - w->len, &res);
	if (err)
		return err;
	w->len += res.out_len;
	if (!res.ended) {
		if (a64_branch_fits(w, fn_pc + res.consumed, 26))
			a64_put_b(w, fn_pc + res.consumed);
		else
			a64_put_jmp_abs(w, fn_pc + res.consumed);
	}
	*consumed = res.consumed;
	return 0;
}

int argus_static_trampoline(int arch, const uint8_t *code, size_t code_len, size_t fn_size, uint64_t fn_pc,
			    uint64_t tramp_pc, uint64_t slot_pc, uint32_t word, uint32_t probe_id,
			    uint8_t *out, size_t out_cap, size_t *out_len, size_t *consumed)
{
	struct argus_writer w;
	argus_writer_init(&w, out, out_cap, tramp_pc);
	int err;
	if (arch == ARGUS_ARCH_X86_64)
		err = x86_trampoline(&w, code, code_len, fn_pc, slot_pc, word, probe_id, consumed);
	else if (arch == ARGUS_ARCH_ARM64)
		err = a64_trampoline(&w, code, code_len, fn_pc, slot_pc, word, probe_id, consumed);
	else
		return ARGUS_ERR_UNSUPPORTED;
	if (!err && w.overflow)
		err = ARGUS_ERR_NO_SPACE;
	/* like hook.c: refuse a function whose body jumps back into the patch */
	if (!err && fn_size > *consumed &&
	    argus_branches_into_patch(arch, code, fn_size < code_len ? fn_size : code_len, fn_pc, *consumed))
		err = ARGUS_ERR_BRANCH_INTO;
	*out_len = w.len;
	return err;
}

int argus_static_patch_size(int arch)
{
	return arch == ARGUS_ARCH_X86_64 ? X86_JMP_REL32_SIZE : 4;
}

int argus_static_entry_patch(int arch, uint64_t fn_pc, uint64_t tramp_pc, uint8_t *out, size_t cap)
{
	struct argus_writer w;
	argus_writer_init(&w, out, cap, fn_pc);
	if (arch == ARGUS_ARCH_X86_64) {
		if (!x86_rel32_fits(&w, X86_JMP_REL32_SIZE, tramp_pc))
			return ARGUS_ERR_OUT_OF_RANGE;
		x86_put_jmp_rel32(&w, tramp_pc);
	} else if (arch == ARGUS_ARCH_ARM64) {
		if (!a64_branch_fits(&w, tramp_pc, 26))
			return ARGUS_ERR_OUT_OF_RANGE;
		a64_put_b(&w, tramp_pc);
	} else {
		return ARGUS_ERR_UNSUPPORTED;
	}
	return w.overflow ? ARGUS_ERR_NO_SPACE : (int)w.len;
}

const char *argus_static_strerror(int err)
{
	return argus_reloc_strerror(err);
}
