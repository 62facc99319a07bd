"""The contract between the xnu hooks (kext/xnu/argus_trace.c) and the kdebug
decoder (tracer/kdebug/kdebug_decode.c).

xnu cannot be built or booted here, so argus_trace.c is compiled on Linux
against a stub of the handful of xnu interfaces it touches (thread fields,
current_thread/current_processor, cpu_number, ml_at_interrupt_context,
VM_KERNEL_UNSLIDE_OR_PERM, and KDBG_RELEASE, which records a kd_buf the
way kdebug would: arg5 = the current thread).  A driver calls the hooks
where the patch calls them, adds the stock events xnu emits next to them,
and feeds everything to the real decoder.  This checks debugids, argument
order and flags on both sides; it says nothing about the patch's behaviour
in a real kernel (docs/macos.md: compiled against a stub only)."""
import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERM_KEY = 0x5A5A0000

STUBS = {
    "kern/kern_types.h": """
#pragma once
#include <stdbool.h>
#include <stdint.h>
typedef uint64_t event64_t;
struct waitq { int unused; };
typedef union { struct waitq *wq_q; } waitq_t;
typedef struct thread *thread_t;
typedef struct processor *processor_t;
typedef int boolean_t;
#define THREAD_NULL ((thread_t)0)
""",
    "kern/thread.h": """
#pragma once
#include <kern/kern_types.h>
#define TH_WAIT  0x01
#define TH_UNINT 0x08
struct thread { uint64_t tid; event64_t wait_event; waitq_t waitq; int state; bool wait_timer_armed; };
thread_t current_thread(void);
uint64_t thread_tid(thread_t t);
""",
    "kern/processor.h": """
#pragma once
#include <kern/kern_types.h>
struct processor { thread_t idle_thread; };
processor_t current_processor(void);
""",
    "kern/cpu_number.h": "#pragma once\nint cpu_number(void);\n",
    "kern/misc_protos.h": "#pragma once\n",
    "mach/vm_param.h": f"#pragma once\n#define VM_KERNEL_UNSLIDE_OR_PERM(v) ((uintptr_t)(v) ^ {PERM_KEY:#x}u)\n",
    "machine/machine_routines.h": "#pragma once\n#include <kern/kern_types.h>\nboolean_t ml_at_interrupt_context(void);\n",
    "sys/kdebug.h": """
#pragma once
#include <stdint.h>
#define MACHDBG_CODE(sub, code) ((1u << 24) | (((sub) & 0xffu) << 16) | (((code) & 0x3fffu) << 2))
void stub_kdbg(uint32_t id, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4);
#define KDBG_RELEASE(id, a1, a2, a3, a4) stub_kdbg((id), (a1), (a2), (a3), (a4))
""",
}

DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include <kern/argus_trace.h>
#include <kern/processor.h>
#include <kern/thread.h>
#include "kdebug_decode.h"
#include "argus_event.h"

static struct thread user = { .tid = 0x102001 }, waiter = { .tid = 0x101001 }, idle = { .tid = 11 };
static struct processor cpu0 = { .idle_thread = &idle };
static thread_t cur = &user;
static int in_intr, now = 1000;
static struct kd_buf64 evs[64];
static size_t nev;

thread_t current_thread(void) { return cur; }
uint64_t thread_tid(thread_t t) { return t->tid; }
processor_t current_processor(void) { return &cpu0; }
int cpu_number(void) { return 0; }
boolean_t ml_at_interrupt_context(void) { return in_intr; }

static void raw(uint32_t id, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct kd_buf64 *k = &evs[nev++];
	memset(k, 0, sizeof *k);
	k->timestamp = (uint64_t)(now += 10);
	k->arg1 = a1; k->arg2 = a2; k->arg3 = a3; k->arg4 = a4;
	k->arg5 = cur->tid;
	k->debugid = id;
}
void stub_kdbg(uint32_t id, uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4) { raw(id, a1, a2, a3, a4); }

static void waiter_blocks(uint64_t event)
{
	cur = &waiter;
	waiter.wait_event = event;
	waiter.state = TH_WAIT;
	argus_trace_wait(&waiter);                       /* thread_block_reason */
	raw(KDE_MACH_BLOCK, 0, 0, 0, 0);
	raw(KDE_MACH_SCHED, 0, user.tid, 31, 31);
	cur = &user;
}

static void woken(void)                              /* thread_clear_waitq_state, then thread_go */
{
	argus_trace_wakeup(&waiter);
	waiter.wait_event = 0;
	raw(KDE_MACH_MAKE_RUNNABLE, waiter.tid, 31, 0, 1);
}

static int print(void *ctx, const void *rec, uint32_t size)
{
	const struct argus_event_header *h = rec;
	(void)ctx; (void)size;
	if (h->type == ARGUS_EV_WAKEUP) {
		const struct argus_ev_wakeup *w = rec;
		printf("wakeup %u %u %u %u\n", h->tid, w->wakee_tid, w->context, w->irq_kind);
	} else if (h->type == ARGUS_EV_SWITCH_OUT) {
		const struct argus_ev_switch_out *s = rec;
		printf("switch_out %u %u %llu\n", h->tid, s->state, (unsigned long long)s->wait_obj);
	}
	return 0;
}

int main(void)
{
	waiter_blocks(0xE0);
	in_intr = 1;                                     /* a timer interrupt lands on `user` */
	argus_trace_timer_expire(&waiter);               /* thread_timer_expire */
	woken();
	in_intr = 0;
	waiter_blocks(0xE1);
	woken();                                         /* `user` really wakes it */
	waiter_blocks(0xE2);
	cur = &idle;                                     /* woken from the idle thread */
	woken();
	cur = &user;

	struct kdd_config cfg = { 1, 1, 0, 1 };
	struct kdd *d = kdd_create(&cfg, print, NULL);
	if (!d || kdd_feed(d, evs, nev) < 0)
		return 1;
	kdd_destroy(d);
	return 0;
}
"""


def test_hooks_and_decoder_agree(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (scripts/setup.sh installs build-essential)")
    inc = tmp_path / "include"
    for rel, text in STUBS.items():
        (inc / rel).parent.mkdir(parents=True, exist_ok=True)
        (inc / rel).write_text(text)
    shutil.copy(os.path.join(REPO, "kext/xnu/argus_trace.h"), inc / "kern/argus_trace.h")
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    cmd = [cc, "-std=gnu11", "-Wall", "-Werror", "-I", str(inc), "-I", os.path.join(REPO, "tracer/kdebug"),
           "-I", os.path.join(REPO, "tracer/ringbuf"),
           "-o", str(exe), os.path.join(REPO, "kext/xnu/argus_trace.c"), str(tmp_path / "driver.c"),
           os.path.join(REPO, "tracer/kdebug/kdebug_decode.c")]
    build = subprocess.run(cmd, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    wakes = [tuple(int(x) for x in l.split()[1:]) for l in lines if l.startswith("wakeup")]
    outs = [tuple(int(x) for x in l.split()[1:]) for l in lines if l.startswith("switch_out")]
    HARDIRQ, IDLE, TASK = 1, 4, 0
    IRQ_NONE, IRQ_TIMER = 0, 1
    # one WAKEUP per wakeup: the stock MAKE_RUNNABLE after each hook is absorbed
    assert wakes == [
        (0x102001, 0x101001, HARDIRQ, IRQ_TIMER),   # the timeout, not a causal edge from `user`
        (0x102001, 0x101001, TASK, IRQ_NONE),
        (0, 0x101001, IDLE, IRQ_NONE),            # the idle thread is tid 0
    ]
    # the wait event at block time (permuted like MACH_WAIT) becomes wait_obj
    assert outs == [(0x101001, 1, 0xE0 ^ PERM_KEY), (0x101001, 1, 0xE1 ^ PERM_KEY), (0x101001, 1, 0xE2 ^ PERM_KEY)]
