/*
 * split_poll: a poll loop whose one check of a flag gcc -O1 splits into two
 * branch sites.  The compiler rotates `while (!split_ready) {...}` into a
 * test before the loop (`jne` out of a call whose flag is already set) and a
 * test at its bottom (`je` back while it spins), so a normal call and the
 * spinning loop share no branch: `argus flags` has to find the flag by the
 * values the two instruction streams read (debugger/value_flags.py).
 *
 * Built by tests/test_flags_split.py with `cc -O1` (the layout depends on
 * the optimization level, so the test builds it and checks the two sites
 * with objdump); not part of the CMake build.
 *
 *   split_poll    prints {"pid", "flag_addr"}, then calls split_wait(), which
 *                 spins (sched_yield + usleep 1 ms) until SIGUSR2 sets the
 *                 flag; afterwards calls it again every 20 ms (normal calls:
 *                 the flag is set) until SIGUSR1.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

volatile int split_ready;
/* Read in both streams too, a new value each round: it differs between
 * them, but never consistently, so it must rank below the flag. */
volatile unsigned long split_polls;
static volatile sig_atomic_t stop;

static void on_usr2(int sig)
{
	split_ready = 1;
}

static void on_usr1(int sig)
{
	stop = 1;
}

__attribute__((noinline)) void split_wait(void)
{
	split_polls++;
	while (!split_ready) {
		split_polls++;
		sched_yield();
		usleep(1000);
	}
}

int main(void)
{
	signal(SIGUSR2, on_usr2);
	signal(SIGUSR1, on_usr1);
	printf("{\"pid\": %d, \"flag_addr\": %lu}\n", (int)getpid(), (unsigned long)&split_ready);
	fflush(stdout);
	split_wait();
	while (!stop) {
		usleep(20000);
		split_wait();
	}
	return 0;
}
