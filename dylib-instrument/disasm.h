/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The disassembler seam: the only interface through which the trampoline
 * engine sees capstone (disasm.c is the only file that includes it).  One
 * call decodes one instruction into an architecture-neutral description of
 * what makes it position dependent; the relocators never look at capstone
 * structures, so swapping the decoder touches one file.
 *
 * Invariants:
 *   - size is 1..15 on x86_64 and 4 on arm64.
 *   - target is absolute (already resolved against the instruction address)
 *     for every kind except INSN_PLAIN.
 *   - ends_block is set for instructions after which the next bytes need not
 *     be code of the same function (ret, indirect jmp/br, jmp, ud2, int3, hlt).
 */
#ifndef ARGUS_DISASM_H
#define ARGUS_DISASM_H

#include <stddef.h>
#include <stdint.h>

enum argus_arch {
	ARGUS_ARCH_X86_64 = 1,
	ARGUS_ARCH_ARM64 = 2,
};

enum argus_insn_kind {
	INSN_PLAIN = 0,      /* position independent: copied as is */
	INSN_PC_MEM,         /* x86: a RIP-relative memory operand (disp_offset/disp_size) */
	INSN_JMP,            /* unconditional relative branch */
	INSN_CALL,           /* relative call (BL on arm64) */
	INSN_JCC,            /* conditional relative branch (x86 jcc, arm64 b.cond) */
	INSN_JCXZ_LOOP,      /* x86 jrcxz/jecxz/loop/loope/loopne: rel8 only, no rel32 form */
	INSN_CBZ,            /* arm64 cbz/cbnz */
	INSN_TBZ,            /* arm64 tbz/tbnz */
	INSN_ADR,            /* arm64 adr */
	INSN_ADRP,           /* arm64 adrp: target is the 4 KiB page */
	INSN_LDR_LITERAL,    /* arm64 ldr/ldrsw/prfm (GPR) literal */
	INSN_LDR_LITERAL_FP, /* arm64 ldr s/d/q literal */
	INSN_REFUSED,        /* decodes, but we never relocate it (x86 xbegin) */
};

struct argus_insn {
	uint64_t address;
	uint64_t target;
	uint8_t bytes[16];
	uint8_t size;
	uint8_t kind;        /* enum argus_insn_kind */
	uint8_t ends_block;
	uint8_t cond;        /* INSN_JCC on x86: the condition code 0..15 (0x70 + cond) */
	uint8_t disp_offset; /* INSN_PC_MEM: where the rel32 displacement sits */
	uint8_t is_lea;      /* INSN_PC_MEM: lea r64, [rip+disp] (can become mov r64, imm64) */
	uint8_t lea_reg;     /* INSN_PC_MEM lea: destination register number 0..15 */
	char mnemonic[32];   /* for messages only */
};

/* Decodes the instruction at code (len bytes available) that runs at address.
 * Returns 0, or -1 when the bytes are not a valid instruction. */
int argus_disasm_one(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t address,
		     struct argus_insn *out);

#endif
