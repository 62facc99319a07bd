"""C source of one case (gen.Case): a prelude of helpers, then per link the
snippets below with "@" replaced by the link's number.

Per mechanism: decl (globals), setup (in main, before any fork or thread),
hold (R(i) at its start, before it reports ready), serve (R(i) after ready:
a pool worker waits for its job), wait (R(i-1) blocks), poll (R(i-1) tries
without blocking, then sleeps 5 ms), release (R(i) when its own wait is
over).  A token link's release / wait pair may repeat (baselines).
"""
PRELUDE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static int ready_pipe[2], go_pipe[2];
static pthread_t thr[8];

static void die(const char *what)
{
	fprintf(stderr, "failed to %s: %s\n", what, strerror(errno));
	_exit(3);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void msleep(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void ready(int role)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%d %d %d\n", role, getpid(), gettid());
	if (write(ready_pipe[1], b, n) != n)
		die("write ready line");
	/* no role goes downstream before every role holds its link */
	if (read(go_pipe[0], b, 1) != 1)
		die("read go byte");
}

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void read1(int fd, int len)
{
	char b[8];
	if (read(fd, b, len) != len)
		die("read link");
}

static void write1(int fd, int len)
{
	uint64_t one = 1;
	if (write(fd, &one, len) != len)
		die("write link");
}

static void poll_read(int fd, int len)
{
	char b[8];
	set_nonblock(fd);
	while (read(fd, b, len) != len) {
		if (errno != EAGAIN)
			die("read link");
		msleep(5);
	}
}

static void stream_pair(int family, int type, int *waiter, int *holder, const char *name)
{
	int lst = socket(family, type, 0);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr *sa = family == AF_UNIX ? (struct sockaddr *)&un : (struct sockaddr *)&in;
	socklen_t len = family == AF_UNIX ? sizeof(un) : sizeof(in);
	if (lst < 0)
		die("create socket");
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/%s", dir, name);
	unlink(un.sun_path);
	if (bind(lst, sa, len) || listen(lst, 4) || getsockname(lst, sa, &len))
		die("listen");
	*waiter = socket(family, type, 0);
	if (connect(*waiter, sa, len))
		die("connect");
	*holder = accept(lst, NULL, NULL);
	if (*holder < 0)
		die("accept");
	close(lst);
}

static void dgram_pair(int *waiter, int *holder, const char *name)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX}, b = {.sun_family = AF_UNIX};
	*waiter = socket(AF_UNIX, SOCK_DGRAM, 0);
	*holder = socket(AF_UNIX, SOCK_DGRAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s.w", dir, name);
	snprintf(b.sun_path, sizeof(b.sun_path), "%s/%s.h", dir, name);
	unlink(a.sun_path);
	unlink(b.sun_path);
	if (bind(*waiter, (void *)&a, sizeof(a)) || bind(*holder, (void *)&b, sizeof(b)) ||
	    connect(*holder, (void *)&a, sizeof(a)) || connect(*waiter, (void *)&b, sizeof(b)))
		die("bind datagram sockets");
}

static int open_lock_file(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		die("open lock file");
	return fd;
}

static void fcntl_lock(int fd, int type, int cmd)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET};
	while (fcntl(fd, cmd, &fl)) {
		if (cmd == F_SETLK && (errno == EAGAIN || errno == EACCES)) {
			msleep(5);
			continue;
		}
		if (errno != EINTR)
			die("lock file");
	}
}

static void root_cpu(double s)
{
	volatile unsigned long x = 0;
	double end = now() + s;
	while (now() < end)
		for (int k = 0; k < 20000; k++)
			x += k * k;
}

static void root_sleep(double s)
{
	msleep((int)(s * 1000));
}

static void root_timer(double s)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {.it_value = {(time_t)s, (long)((s - (time_t)s) * 1e9)}};
	uint64_t v;
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) || read(fd, &v, 8) != 8)
		die("wait for timer");
	close(fd);
}

static void root_yield(double s)
{
	double end = now() + s;
	while (now() < end)
		sched_yield();
}

static void root_fsync(double s)
{
	char path[512], buf[4096];
	snprintf(path, sizeof(path), "%s/fsync.dat", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double end = now() + s;
	memset(buf, 'x', sizeof(buf));
	if (fd < 0)
		die("open fsync file");
	while (now() < end)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf) || fsync(fd))
			die("fsync");
	close(fd);
}

static void *idle_loop(void *arg)
{
	int ep = epoll_create1(0), ev = eventfd(0, 0);
	struct epoll_event e = {.events = EPOLLIN}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
	for (;;)
		epoll_wait(ep, &out, 1, 200);
	return arg;
}

static void *late_writer(void *arg)
{
	msleep(15);
	write1((int)(intptr_t)arg, 1);
	return NULL;
}

/* fd reuse: a quick wait on a pipe whose numbers the links take next */
static void fd_reuse(void)
{
	for (int k = 0; k < 3; k++) {
		int p[2];
		pthread_t t;
		if (pipe(p))
			die("create pipe");
		pthread_create(&t, NULL, late_writer, (void *)(intptr_t)p[1]);
		read1(p[0], 1);
		pthread_join(t, NULL);
		close(p[0]);
		close(p[1]);
	}
}
"""

_FD = {  # mechanisms that are "the waiter reads a fd the holder writes"
    "pipe": ("static int pp@[2];", "if (pipe(pp@)) die(\"create pipe\");", "pp@[0]", "pp@[1]", 1),
    "socketpair": ("static int sp@[2];", "if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp@)) die(\"create socketpair\");",
                   "sp@[0]", "sp@[1]", 1),
    "unix_stream": ("static int us@[2];", "stream_pair(AF_UNIX, SOCK_STREAM, &us@[0], &us@[1], \"us@.sock\");",
                    "us@[0]", "us@[1]", 1),
    "unix_dgram": ("static int ud@[2];", "dgram_pair(&ud@[0], &ud@[1], \"ud@.sock\");", "ud@[0]", "ud@[1]", 1),
    "tcp": ("static int tcp@[2];", "stream_pair(AF_INET, SOCK_STREAM, &tcp@[0], &tcp@[1], \"\");",
            "tcp@[0]", "tcp@[1]", 1),
    "eventfd": ("static int efd@;", "efd@ = eventfd(0, EFD_SEMAPHORE); if (efd@ < 0) die(\"create eventfd\");", "efd@", "efd@", 8),
}

MECHS = {}
for _name, (_decl, _setup, _rfd, _wfd, _len) in _FD.items():
    MECHS[_name] = dict(decl=_decl, setup=_setup, wait=f"read1({_rfd}, {_len});",
                        poll=f"poll_read({_rfd}, {_len});", release=f"write1({_wfd}, {_len});")

_LOOP_WAIT = {
    "epoll": ("static int ep@;",
              "ep@ = epoll_create1(0); { struct epoll_event e = {.events = EPOLLIN}; "
              "if (ep@ < 0 || epoll_ctl(ep@, EPOLL_CTL_ADD, pp@[0], &e)) die(\"add to epoll\"); }",
              "{ struct epoll_event e; while (epoll_wait(ep@, &e, 1, -1) != 1) ; }"),
    "poll": ("", "", "{ struct pollfd p = {pp@[0], POLLIN}; while (poll(&p, 1, -1) != 1) ; }"),
    "select": ("", "", "{ fd_set s; do { FD_ZERO(&s); FD_SET(pp@[0], &s); } "
                       "while (select(pp@[0] + 1, &s, NULL, NULL, NULL) != 1); }"),
}
for _name, (_decl, _setup, _wait) in _LOOP_WAIT.items():
    MECHS[_name] = dict(decl="static int pp@[2];" + _decl, setup="if (pipe(pp@)) die(\"create pipe\");" + _setup,
                        wait=_wait + " read1(pp@[0], 1);", poll="poll_read(pp@[0], 1);",
                        release="write1(pp@[1], 1);")

MECHS.update({
    "mutex": dict(decl="static pthread_mutex_t mx@ = PTHREAD_MUTEX_INITIALIZER;",
                  hold="pthread_mutex_lock(&mx@);",
                  wait="pthread_mutex_lock(&mx@); pthread_mutex_unlock(&mx@);",
                  poll="while (pthread_mutex_trylock(&mx@)) msleep(5); pthread_mutex_unlock(&mx@);",
                  release="pthread_mutex_unlock(&mx@);"),
    "rwlock": dict(decl="static pthread_rwlock_t rw@ = PTHREAD_RWLOCK_INITIALIZER;",
                   hold="pthread_rwlock_wrlock(&rw@);",
                   wait="pthread_rwlock_rdlock(&rw@); pthread_rwlock_unlock(&rw@);",
                   poll="while (pthread_rwlock_tryrdlock(&rw@)) msleep(5); pthread_rwlock_unlock(&rw@);",
                   release="pthread_rwlock_unlock(&rw@);"),
    "condvar": dict(decl="static pthread_mutex_t cm@ = PTHREAD_MUTEX_INITIALIZER; "
                         "static pthread_cond_t cv@ = PTHREAD_COND_INITIALIZER; static int posted@, seen@;",
                    wait="pthread_mutex_lock(&cm@); while (posted@ == seen@) pthread_cond_wait(&cv@, &cm@); "
                         "seen@++; pthread_mutex_unlock(&cm@);",
                    poll="for (;;) { pthread_mutex_lock(&cm@); int got = posted@ != seen@; seen@ += got; "
                         "pthread_mutex_unlock(&cm@); if (got) break; msleep(5); }",
                    release="pthread_mutex_lock(&cm@); posted@++; pthread_cond_signal(&cv@); "
                            "pthread_mutex_unlock(&cm@);"),
    "semaphore": dict(decl="static sem_t sem@;", setup="sem_init(&sem@, 0, 0);",
                      wait="while (sem_wait(&sem@)) ;", poll="while (sem_trywait(&sem@)) msleep(5);",
                      release="sem_post(&sem@);"),
    "flock": dict(decl="static int flw@, flh@;",
                  setup="flw@ = open_lock_file(\"flock@\"); flh@ = open_lock_file(\"flock@\");",
                  hold="flock(flh@, LOCK_EX);", wait="flock(flw@, LOCK_EX); flock(flw@, LOCK_UN);",
                  poll="while (flock(flw@, LOCK_EX | LOCK_NB)) msleep(5); flock(flw@, LOCK_UN);",
                  release="flock(flh@, LOCK_UN);"),
    "fcntl": dict(decl="static int fcw@, fch@;",
                  setup="fcw@ = open_lock_file(\"fcntl@\"); fch@ = open_lock_file(\"fcntl@\");",
                  hold="fcntl_lock(fch@, F_WRLCK, F_SETLKW);",
                  wait="fcntl_lock(fcw@, F_WRLCK, F_SETLKW); fcntl_lock(fcw@, F_UNLCK, F_SETLK);",
                  poll="fcntl_lock(fcw@, F_WRLCK, F_SETLK); fcntl_lock(fcw@, F_UNLCK, F_SETLK);",
                  release="fcntl_lock(fch@, F_UNLCK, F_SETLK);"),
    "waitpid": dict(wait="{ int st; while (waitpid(child@, &st, 0) < 0 && errno == EINTR) ; }",
                    poll="{ int st; while (waitpid(child@, &st, WNOHANG) == 0) msleep(5); }",
                    release="_exit(0);"),
    "signal": dict(wait="{ int sig; sigset_t s; sigemptyset(&s); sigaddset(&s, SIGUSR1); sigwait(&s, &sig); }",
                   poll="{ sigset_t s; struct timespec z = {0, 0}; sigemptyset(&s); sigaddset(&s, SIGUSR1); "
                        "while (sigtimedwait(&s, NULL, &z) < 0) msleep(5); }",
                   release="pthread_kill(thr[WAITER], SIGUSR1);"),
    "future": dict(decl="static pthread_mutex_t fm@ = PTHREAD_MUTEX_INITIALIZER; "
                        "static pthread_cond_t fc@ = PTHREAD_COND_INITIALIZER; static int job@, done@;",
                   serve="pthread_mutex_lock(&fm@); while (!job@) pthread_cond_wait(&fc@, &fm@); "
                         "pthread_mutex_unlock(&fm@);",
                   wait="pthread_mutex_lock(&fm@); job@ = 1; pthread_cond_broadcast(&fc@); "
                        "while (!done@) pthread_cond_wait(&fc@, &fm@); pthread_mutex_unlock(&fm@);",
                   poll="pthread_mutex_lock(&fm@); job@ = 1; pthread_cond_broadcast(&fc@); "
                        "pthread_mutex_unlock(&fm@); for (;;) { pthread_mutex_lock(&fm@); int d = done@; "
                        "pthread_mutex_unlock(&fm@); if (d) break; msleep(5); }",
                   release="pthread_mutex_lock(&fm@); done@ = 1; pthread_cond_broadcast(&fc@); "
                           "pthread_mutex_unlock(&fm@);"),
})


def _snip(mech, part, i):
    return MECHS[mech].get(part, "").replace("@", str(i)).replace("WAITER", str(i - 1))


def render(case):
    d = case.depth
    nb = 5 if case.noise.get("baselines") else 0
    out = [PRELUDE]
    for i, mech in enumerate(case.links, 1):
        out.append(_snip(mech, "decl", i))
        if case.placement[i] == "process":
            out.append(f"static pid_t child{i};")
    out.append(f"static const double HOLD = {case.hold_s};")
    # roles: hold, ready, serve, baselines, downstream, release
    for r in range(d, -1, -1):
        body = [f"thr[{r}] = pthread_self();"]
        if r >= 1:
            body.append(_snip(case.links[r - 1], "hold", r))
        body.append(f"ready({r});" if r >= 1 else "")
        if r >= 1:
            body.append(_snip(case.links[r - 1], "serve", r))
            if nb and r == 1 and _token(case.links[0]):
                body.append(f"msleep(300); for (int b = 0; b < {nb}; b++) {{ msleep(40); "
                            f"{_snip(case.links[r - 1], 'release', r)} }}")
        if r < d:
            nxt = case.links[r]
            reps = nb if nb and r == 0 and _token(nxt) else 0
            if reps:
                body.append(f"for (int b = 0; b < {reps}; b++) {{ {_snip(nxt, 'wait', r + 1)} }}")
            part = "poll" if (r == 0 and case.hung_mode == "poll") else "wait"
            body.append(_snip(nxt, part, r + 1))
        else:
            body.append(f"root_{case.root}(HOLD);")
        if r >= 1:
            body.append(_snip(case.links[r - 1], "release", r))
        out.append(f"static void role{r}(void)\n{{\n\t" + "\n\t".join(b for b in body if b) + "\n}")
        out.append(f"static void *thread{r}(void *arg)\n{{\n\trole{r}();\n\treturn arg;\n}}")
    out.append(_main(case))
    return "\n".join(out) + "\n"


def _token(mech):
    from gen import BY_NAME
    return BY_NAME[mech].token


def _main(case):
    d = case.depth
    lines = ["int main(int argc, char **argv)", "{",
             "\tsigset_t blocked;",
             "\tdir = argc > 1 ? argv[1] : \".\";",
             "\tsigemptyset(&blocked); sigaddset(&blocked, SIGUSR1);",
             "\tpthread_sigmask(SIG_BLOCK, &blocked, NULL);  /* every thread and child inherits it */",
             "\tsetvbuf(stdout, NULL, _IOLBF, 0);",
             "\tpid_t load = 0;"]
    if case.noise.get("fd_reuse"):
        lines.append("\tfd_reuse();")
    lines.append("\tif (pipe(ready_pipe) || pipe(go_pipe)) die(\"create pipe\");")
    for i, mech in enumerate(case.links, 1):
        s = _snip(mech, "setup", i)
        if s:
            lines.append("\t" + s)
    if case.noise.get("load"):
        lines.append("\tload = fork(); if (load == 0) { root_cpu(HOLD + 1); _exit(0); }")
    # processes: consecutive roles; process k's main forks process k+1 before its threads start
    groups = [[0]]
    for r in range(1, d + 1):
        if case.placement[r] == "process":
            groups.append([r])
        else:
            groups[-1].append(r)
    for gi, group in enumerate(groups):
        lead = group[0]
        if gi + 1 < len(groups):
            nxt = groups[gi + 1][0]
            lines.append(f"\tchild{nxt} = fork(); if (child{nxt} < 0) die(\"fork\");")
            lines.append(f"\tif (child{nxt} == 0) goto proc{gi + 1};")
        lines.append(f"\tgoto run{gi};")
        lines.append(f"proc{gi + 1}:" if gi + 1 < len(groups) else "")
    # bodies per process, after the forks: label runK starts the threads and the lead role
    body = []
    for gi, group in enumerate(groups):
        body.append(f"run{gi}:")
        if gi == 0 and case.noise.get("idle"):
            body.append("\t{ pthread_t t; pthread_create(&t, NULL, idle_loop, NULL); }")
        for r in group[1:]:
            body.append(f"\tif (pthread_create(&thr[{r}], NULL, thread{r}, NULL)) die(\"create thread\");")
        if gi == 0:
            body.append(f"\tfor (int n = 0; n < {d}; n++) {{ char c; int role, pid, tid, k = 0; char line[64]; "
                        "while (read(ready_pipe[0], &c, 1) == 1 && c != '\\n' && k < 63) line[k++] = c; "
                        "line[k] = 0; if (sscanf(line, \"%d %d %d\", &role, &pid, &tid) != 3) die(\"read ready line\"); "
                        "ids[role][0] = pid; ids[role][1] = tid; }")
            body.append("\tids[0][0] = getpid(); ids[0][1] = gettid();")
            body.append(f"\tfor (int n = 0; n < {d}; n++) write1(go_pipe[1], 1);")
            body.append("\tprintf(\"{\\\"roles\\\": [\");")
            body.append(f"\tfor (int r = 0; r <= {d}; r++) printf(\"%s[%d, %d]\", r ? \", \" : \"\", ids[r][0], ids[r][1]);")
            body.append("\tprintf(\"], \\\"load\\\": %d}\\n\", load);")
        body.append(f"\trole{group[0]}();")
        if gi == 0:
            body.append("\treturn 0;")
        else:
            # a process whose lead role is done waits for its other roles' threads
            for r in group[1:]:
                body.append(f"\tpthread_join(thr[{r}], NULL);")
            body.append("\t_exit(0);")
    lines.insert(3, f"\tint ids[{d + 1}][2];")
    return "\n".join([x for x in lines if x] + body + ["}"])
