// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of hang_index.c: records fed as argusd's observe() sees them,
 * the index file read back the way tracer/ringindex.py reads it.
 *
 *   waits     a main thread's blocking wait of 0.5 s or more is one ring
 *             entry (reason, syscall, object, comm), ending at its wakeup
 *             (else its switch-in); a shorter one, a POLL
 *             wait, a child wait, a kernel thread's wait and another
 *             thread's wait are none; a spurious wakeup continues the wait
 *   open      a wait still going on is in the open table, flagged ongoing,
 *             ending at the latest record; the seqlock generation is even
 *   file      0600, in the directory given, header naming the buffer
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hang_index.h"

#define MS 1000000ull

struct fixture {
	char dir[64];
	int dir_fd;
	struct hang_index *hx;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	snprintf(f->dir, sizeof(f->dir), "/tmp/hxtest.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dir_fd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->dir_fd >= 0);
	f->hx = hang_index_create(f->dir_fd, f->dir, 4242, 777, err, sizeof(err));
	assert_non_null(f->hx);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];

	hang_index_free(f->hx);
	snprintf(path, sizeof(path), "%s/ring-4242.idx", f->dir);
	unlink(path);
	close(f->dir_fd);
	rmdir(f->dir);
	free(f);
	return 0;
}

#define KTHREADD_PID_TEST 2

static void hdr(struct argus_event_header *h, uint16_t type, uint16_t size, uint32_t pid, uint32_t tid, uint64_t ts)
{
	memset(h, 0, size);
	h->type = type;
	h->size = size;
	h->pid = pid;
	h->tid = tid;
	h->ts_ns = ts;
}

static void snapshot(struct hang_index *hx, uint32_t pid, uint32_t ppid, const char *comm)
{
	struct argus_ev_proc_snapshot s;

	hdr(&s.h, ARGUS_EV_PROC_SNAPSHOT, sizeof(s), pid, pid, 1);
	s.ppid = ppid;
	s.is_main_thread = 1;
	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	hang_index_observe(hx, &s.h);
}

static void out(struct hang_index *hx, uint32_t pid, uint32_t tid, uint64_t ts, uint8_t reason, uint32_t nr,
		uint64_t obj)
{
	struct argus_ev_switch_out e;

	hdr(&e.h, ARGUS_EV_SWITCH_OUT, 40, pid, tid, ts);
	e.state = ARGUS_STATE_BLOCKED;
	e.wait_reason = reason;
	e.syscall_nr = nr;
	e.wait_obj = obj;
	hang_index_observe(hx, &e.h);
}

static void in(struct hang_index *hx, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct argus_ev_switch_in e;

	hdr(&e.h, ARGUS_EV_SWITCH_IN, sizeof(e), pid, tid, ts);
	hang_index_observe(hx, &e.h);
}

static void wakeup(struct hang_index *hx, uint32_t waker, uint32_t wakee, uint64_t ts)
{
	struct argus_ev_wakeup e;

	hdr(&e.h, ARGUS_EV_WAKEUP, sizeof(e), waker, waker, ts);
	e.wakee_pid = e.wakee_tid = wakee;
	hang_index_observe(hx, &e.h);
}

static void sys_exit(struct hang_index *hx, uint32_t pid, uint64_t ts)
{
	struct argus_event_header h;

	hdr(&h, ARGUS_EV_SYSCALL_EXIT, sizeof(h), pid, pid, ts);
	hang_index_observe(hx, &h);
}

/* The file as a reader sees it: header, open table, ring. */
static void *read_file(struct fixture *f, struct hx_header **h)
{
	char path[128];
	struct stat st;
	void *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/ring-4242.idx", f->dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	buf = malloc((size_t)st.st_size);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*h = buf;
	assert_memory_equal((*h)->magic, HX_MAGIC, sizeof(HX_MAGIC));
	assert_int_equal((*h)->buffer_ino, 4242);
	assert_int_equal((*h)->buffer_created_ns, 777);
	assert_int_equal((uint64_t)st.st_size,
			 sizeof(struct hx_header) + ((uint64_t)(*h)->nopen + (*h)->nentries) * sizeof(struct hx_entry));
	return buf;
}

static const struct hx_entry *ring(const struct hx_header *h, uint64_t n)
{
	return (const struct hx_entry *)((const char *)h + sizeof(*h)) + h->nopen + n % h->nentries;
}

static void test_long_waits_of_main_threads_only(void **state)
{
	struct fixture *f = *state;
	struct hx_header *h;
	const struct hx_entry *e;
	void *buf;

	snapshot(f->hx, 100, 1, "app");
	snapshot(f->hx, 50, 2, "kworker/0:1");
	out(f->hx, 100, 100, 1000 * MS, ARGUS_WAIT_READ, 0, 3);      /* 1 s read: kept */
	in(f->hx, 100, 100, 2000 * MS);
	sys_exit(f->hx, 100, 2001 * MS);
	out(f->hx, 100, 100, 2100 * MS, ARGUS_WAIT_READ, 0, 3);      /* 0.1 s: too short */
	in(f->hx, 100, 100, 2200 * MS);
	sys_exit(f->hx, 100, 2201 * MS);
	out(f->hx, 100, 100, 2300 * MS, ARGUS_WAIT_POLL, 7, 4);      /* poll: the detector's */
	in(f->hx, 100, 100, 3000 * MS);
	out(f->hx, 50, 50, 1000 * MS, ARGUS_WAIT_OTHER_SYSCALL, 1, 0);  /* a kernel thread */
	in(f->hx, 50, 50, 3000 * MS);
	out(f->hx, 100, 101, 1000 * MS, ARGUS_WAIT_FUTEX, 202, 8);   /* not the main thread */
	in(f->hx, 100, 101, 3000 * MS);
	/* a spurious wakeup: woken, then blocked again in the same syscall, no syscall record between */
	out(f->hx, 100, 100, 3000 * MS, ARGUS_WAIT_FUTEX, 202, 0x1000);
	in(f->hx, 100, 100, 3200 * MS);
	out(f->hx, 100, 100, 3201 * MS, ARGUS_WAIT_FUTEX, 202, 0x1000);
	wakeup(f->hx, 300, 100, 3990 * MS);                         /* the wait ends at its wakeup */
	in(f->hx, 100, 100, 4000 * MS);
	sys_exit(f->hx, 100, 4001 * MS);

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 2);
	e = ring(h, 0);
	assert_int_equal(e->seq, 1);
	assert_int_equal(e->start_ns, 1000 * MS);
	assert_int_equal(e->end_ns, 2000 * MS);
	assert_int_equal(e->pid, 100);
	assert_int_equal(e->kind, HX_KIND_WAIT);
	assert_int_equal(e->reason, ARGUS_WAIT_READ);
	assert_int_equal(e->obj, 3);
	assert_string_equal(e->comm, "app");
	e = ring(h, 1);
	assert_int_equal(e->seq, 2);
	assert_int_equal(e->start_ns, 3000 * MS);   /* one wait across the spurious wakeup */
	assert_int_equal(e->end_ns, 3990 * MS);
	assert_int_equal(e->reason, ARGUS_WAIT_FUTEX);
	free(buf);
}

static void test_an_ongoing_wait_is_in_the_open_table(void **state)
{
	struct fixture *f = *state;
	const struct hx_entry *open;
	struct hx_header *h;
	void *buf;

	snapshot(f->hx, 100, 1, "app");
	out(f->hx, 100, 100, 1000 * MS, ARGUS_WAIT_FUTEX, 202, 8);
	in(f->hx, 200, 200, 2500 * MS);                              /* time goes on elsewhere */
	assert_true(hang_index_open_begin(f->hx, 2500 * MS));
	hang_index_open_end(f->hx);
	assert_false(hang_index_open_begin(f->hx, 2550 * MS));      /* at most every 100 ms */

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 0);
	assert_int_equal(h->open_count, 1);
	assert_int_equal(h->open_gen % 2, 0);
	open = (const struct hx_entry *)((const char *)h + sizeof(*h));
	assert_int_equal(open->pid, 100);
	assert_int_equal(open->start_ns, 1000 * MS);
	assert_int_equal(open->end_ns, 2500 * MS);
	assert_true(open->flags & HX_FLAG_ONGOING);
	free(buf);
}

static void fork_of(struct hang_index *hx, uint32_t parent, uint32_t child, uint64_t ts, const char *comm)
{
	struct argus_ev_fork e;

	hdr(&e.h, ARGUS_EV_FORK, sizeof(e), parent, parent, ts);
	e.child_pid = e.child_tid = child;
	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	hang_index_observe(hx, &e.h);
}

/* pid_max 32768: a kernel thread's pid, once free, goes to a new process,
 * whose waits are indexed; kthreadd's children stay out. */
static void test_a_reused_kernel_thread_pid_is_indexed(void **state)
{
	struct fixture *f = *state;
	struct hx_header *h;
	void *buf;

	snapshot(f->hx, 50, 2, "kworker/0:1");
	fork_of(f->hx, KTHREADD_PID_TEST, 60, 500 * MS, "kworker/1:0");
	fork_of(f->hx, 100, 50, 900 * MS, "demo-app");               /* 50 exited, reused */
	out(f->hx, 50, 50, 1000 * MS, ARGUS_WAIT_READ, 0, 3);
	in(f->hx, 50, 50, 2000 * MS);
	sys_exit(f->hx, 50, 2001 * MS);
	out(f->hx, 60, 60, 1000 * MS, ARGUS_WAIT_OTHER_SYSCALL, 1, 0);
	in(f->hx, 60, 60, 3000 * MS);
	sys_exit(f->hx, 60, 3001 * MS);

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 1);
	assert_int_equal(ring(h, 0)->pid, 50);
	assert_string_equal(ring(h, 0)->comm, "demo-app");
	free(buf);
}

/* Records lost under load: the wait's wakeup and switch-in never arrive; the
 * thread's next syscall ends it (an upper bound) instead of a new wait
 * replacing it unwritten. */
static void test_a_wait_whose_end_was_lost_is_still_written(void **state)
{
	struct fixture *f = *state;
	struct hx_header *h;
	void *buf;

	snapshot(f->hx, 100, 1, "app");
	out(f->hx, 100, 100, 1000 * MS, ARGUS_WAIT_READ, 0, 3);
	sys_exit(f->hx, 100, 4000 * MS);                            /* it ran: wakeup and switch-in lost */
	out(f->hx, 100, 100, 4100 * MS, ARGUS_WAIT_FUTEX, 202, 8);  /* the next wait */
	in(f->hx, 100, 100, 4200 * MS);

	/* a switch-out drained after the switch-in and syscall that followed it
	 * (staged on another CPU): no wait begins, so no run is taken for one */
	sys_exit(f->hx, 100, 4300 * MS);
	out(f->hx, 100, 100, 4250 * MS, ARGUS_WAIT_FUTEX, 202, 9);
	sys_exit(f->hx, 100, 5500 * MS);
	out(f->hx, 100, 100, 5600 * MS, ARGUS_WAIT_READ, 0, 3);
	in(f->hx, 100, 100, 5700 * MS);
	sys_exit(f->hx, 100, 5701 * MS);

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 1);
	assert_int_equal(ring(h, 0)->start_ns, 1000 * MS);
	assert_int_equal(ring(h, 0)->end_ns, 4000 * MS);
	assert_int_equal(ring(h, 0)->reason, ARGUS_WAIT_READ);
	free(buf);
}

/* An event loop's wait is one that came after the loop turned: a thread that
 * polled once upon a time and now only waits in futexes is no loop there. */
static void test_a_wait_is_a_loops_only_after_the_loop_turned(void **state)
{
	struct fixture *f = *state;
	struct hx_header *h;
	void *buf;
	uint64_t ts = 100 * MS;

	snapshot(f->hx, 100, 1, "app");
	for (int i = 0; i < 5; i++, ts += 20 * MS) {
		out(f->hx, 100, 100, ts, ARGUS_WAIT_POLL, 7, 4);
		in(f->hx, 100, 100, ts + 10 * MS);
	}
	out(f->hx, 100, 100, 1000 * MS, ARGUS_WAIT_FUTEX, 202, 8);  /* after the loop: a loop's */
	in(f->hx, 100, 100, 2000 * MS);
	sys_exit(f->hx, 100, 2001 * MS);
	out(f->hx, 100, 100, 2100 * MS, ARGUS_WAIT_FUTEX, 202, 9);  /* no poll since: not */
	in(f->hx, 100, 100, 3000 * MS);
	sys_exit(f->hx, 100, 3001 * MS);

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 2);
	assert_true(ring(h, 0)->flags & HX_FLAG_LOOP);
	assert_false(ring(h, 1)->flags & HX_FLAG_LOOP);
	free(buf);
}

/* Drain order is not time order: the wakeup of a spurious wake, staged on
 * the waker's CPU, arrives after the thread's switch-in and its switch-out
 * back into the same wait; it must not end that wait (the demo's 3 s read,
 * lost under load). */
static void test_a_late_wakeup_does_not_end_the_wait(void **state)
{
	struct fixture *f = *state;
	struct hx_header *h;
	void *buf;

	snapshot(f->hx, 100, 1, "app");
	out(f->hx, 100, 100, 1000 * MS, ARGUS_WAIT_READ, 0, 3);
	in(f->hx, 100, 100, 1003 * MS);                              /* its CPU's records first */
	out(f->hx, 100, 100, 1004 * MS, ARGUS_WAIT_READ, 0, 3);
	wakeup(f->hx, 300, 100, 1002 * MS);                         /* then the waker's, late */
	wakeup(f->hx, 300, 100, 4000 * MS);
	in(f->hx, 100, 100, 4001 * MS);
	sys_exit(f->hx, 100, 4002 * MS);

	buf = read_file(f, &h);
	assert_int_equal(h->next_seq, 1);
	assert_int_equal(ring(h, 0)->start_ns, 1000 * MS);
	assert_int_equal(ring(h, 0)->end_ns, 4000 * MS);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_long_waits_of_main_threads_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_ongoing_wait_is_in_the_open_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_reused_kernel_thread_pid_is_indexed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_wait_whose_end_was_lost_is_still_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_wait_is_a_loops_only_after_the_loop_turned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_late_wakeup_does_not_end_the_wait, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
