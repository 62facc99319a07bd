"""Go source of one case: every role is a goroutine of one process, on Go's
own scheduler.  R0 is the main goroutine, locked to the main thread (so the
hung thread is the process's main thread); another role is locked to an OS
thread only when case.pinned says so, and then reports its tid; an unpinned
role reports tid 0 (any thread of the process but the hung one may stand for
it).  A future role is a goroutine started when the waiter submits its job.
Standard library only; "@" is the link number, WAITER the waiting role."""
import gen

PRELUDE = '''package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

var _ = signal.Notify // the imports every case may use
var _ sync.Mutex

var dir = "."
var readyCh = make(chan [3]int, 16)
var goCh = make(chan struct{})
var hold = time.Duration(%d) * time.Millisecond

func init() { runtime.LockOSThread() } // the main goroutine stays on the main thread

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "failed to %%s: %%v\\n", what, err)
		os.Exit(3)
	}
}

func ready(role int, pinned bool) {
	tid := 0
	if pinned {
		tid = syscall.Gettid()
	}
	readyCh <- [3]int{role, os.Getpid(), tid}
	<-goCh // no role goes downstream before every role holds its link
}

func read1(f interface{ Read([]byte) (int, error) }) {
	b := make([]byte, 1)
	_, err := f.Read(b)
	must(err, "read link")
}

func write1(f interface{ Write([]byte) (int, error) }) {
	_, err := f.Write([]byte("x"))
	must(err, "write link")
}

func streamPair(network, addr string) [2]net.Conn {
	if network == "unix" {
		os.Remove(addr)
	}
	lst, err := net.Listen(network, addr)
	must(err, "listen")
	w, err := net.Dial(network, lst.Addr().String())
	must(err, "connect")
	h, err := lst.Accept()
	must(err, "accept")
	lst.Close()
	return [2]net.Conn{w, h}
}

func dgramPair(name string) [2]*net.UnixConn {
	a := &net.UnixAddr{Name: filepath.Join(dir, name+".w"), Net: "unixgram"}
	b := &net.UnixAddr{Name: filepath.Join(dir, name+".h"), Net: "unixgram"}
	os.Remove(a.Name)
	os.Remove(b.Name)
	w, err := net.ListenUnixgram("unixgram", a)
	must(err, "bind datagram socket")
	h, err := net.DialUnix("unixgram", b, a)
	must(err, "connect datagram socket")
	return [2]*net.UnixConn{w, h}
}

func socketPair() [2]*os.File {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	must(err, "create socketpair")
	syscall.SetNonblock(fds[0], true)
	syscall.SetNonblock(fds[1], true)
	return [2]*os.File{os.NewFile(uintptr(fds[0]), "sp0"), os.NewFile(uintptr(fds[1]), "sp1")}
}

func eventFd() int {
	fd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, 1, 0) // EFD_SEMAPHORE: one read per write
	if errno != 0 {
		must(errno, "create eventfd")
	}
	return int(fd)
}

func efdRead(fd int) {
	b := make([]byte, 8)
	_, err := syscall.Read(fd, b)
	must(err, "read eventfd")
}

func efdWrite(fd int) {
	_, err := syscall.Write(fd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	must(err, "write eventfd")
}

func lockFile(name string) int {
	fd, err := syscall.Open(filepath.Join(dir, name), syscall.O_RDWR|syscall.O_CREAT, 0600)
	must(err, "open lock file")
	return fd
}

func rootCpu(d time.Duration) {
	end, x := time.Now().Add(d), 0
	for time.Now().Before(end) {
		for k := 0; k < 20000; k++ {
			x += k * k
		}
	}
	_ = x
}

func rootSleep(d time.Duration) { time.Sleep(d) }

func rootTimer(d time.Duration) { <-time.NewTimer(d).C }

func rootYield(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

func rootFsync(d time.Duration) {
	f, err := os.Create(filepath.Join(dir, "fsync.dat"))
	must(err, "open fsync file")
	buf := make([]byte, 4096)
	for end := time.Now().Add(d); time.Now().Before(end); {
		_, err = f.Write(buf)
		must(err, "write")
		must(f.Sync(), "fsync")
	}
	f.Close()
}

func idleLoop() {
	t := time.NewTicker(200 * time.Millisecond)
	for range t.C {
	}
}

// fd reuse: a quick wait on a pipe whose numbers the links take next
func fdReuse() {
	for k := 0; k < 3; k++ {
		r, w, err := os.Pipe()
		must(err, "create pipe")
		go func() { time.Sleep(15 * time.Millisecond); write1(w) }()
		read1(r)
		r.Close()
		w.Close()
	}
}
'''

_ROOT_FN = {"cpu": "rootCpu", "sleep": "rootSleep", "timer": "rootTimer", "yield": "rootYield", "fsync": "rootFsync"}

MECHS = {
    "pipe": dict(decl="var pp@ [2]*os.File", setup="{ r, w, err := os.Pipe(); must(err, \"create pipe\"); pp@ = [2]*os.File{r, w} }",
                 wait="read1(pp@[0])", release="write1(pp@[1])"),
    "socketpair": dict(decl="var sp@ [2]*os.File", setup="sp@ = socketPair()", wait="read1(sp@[0])",
                       release="write1(sp@[1])"),
    "unix_stream": dict(decl="var us@ [2]net.Conn", setup="us@ = streamPair(\"unix\", filepath.Join(dir, \"us@.sock\"))",
                        wait="read1(us@[0])", release="write1(us@[1])"),
    "unix_dgram": dict(decl="var ud@ [2]*net.UnixConn", setup="ud@ = dgramPair(\"ud@.sock\")",
                       wait="read1(ud@[0])", release="write1(ud@[1])"),
    "tcp": dict(decl="var tcp@ [2]net.Conn", setup="tcp@ = streamPair(\"tcp\", \"127.0.0.1:0\")",
                wait="read1(tcp@[0])", release="write1(tcp@[1])"),
    "eventfd": dict(decl="var efd@ int", setup="efd@ = eventFd()", wait="efdRead(efd@)", release="efdWrite(efd@)"),
    "mutex": dict(decl="var mx@ sync.Mutex", hold="mx@.Lock()", wait="mx@.Lock(); mx@.Unlock()",
                  release="mx@.Unlock()"),
    "rwlock": dict(decl="var rw@ sync.RWMutex", hold="rw@.Lock()", wait="rw@.RLock(); rw@.RUnlock()",
                   release="rw@.Unlock()"),
    "condvar": dict(decl="var cm@ sync.Mutex\nvar cv@ = sync.NewCond(&cm@)\nvar posted@, seen@ int",
                    wait="cm@.Lock(); for posted@ == seen@ { cv@.Wait() }; seen@++; cm@.Unlock()",
                    release="cm@.Lock(); posted@++; cv@.Signal(); cm@.Unlock()"),
    "semaphore": dict(decl="var sem@ = make(chan struct{}, 16)", wait="<-sem@", release="sem@ <- struct{}{}"),
    "channel": dict(decl="var ch@ = make(chan int)", wait="<-ch@", release="ch@ <- 1"),
    "flock": dict(decl="var flw@, flh@ int", setup="flw@ = lockFile(\"flock@\"); flh@ = lockFile(\"flock@\")",
                  hold="must(syscall.Flock(flh@, syscall.LOCK_EX), \"lock file\")",
                  wait="must(syscall.Flock(flw@, syscall.LOCK_EX), \"lock file\"); syscall.Flock(flw@, syscall.LOCK_UN)",
                  release="syscall.Flock(flh@, syscall.LOCK_UN)"),
    "signal": dict(decl="var sig@ = make(chan os.Signal, 1)", setup="signal.Notify(sig@, syscall.SIGUSR1)",
                   wait="<-sig@", release="syscall.Kill(os.Getpid(), syscall.SIGUSR1)"),
    "future": dict(decl="var fut@ = make(chan int, 1)", wait="go role@(); <-fut@", release="fut@ <- 1"),
}


def _snip(mech, part, i):
    return MECHS[mech].get(part, "").replace("@", str(i)).replace("WAITER", str(i - 1))


def _token(mech):
    return gen.BY_NAME[mech].token


def pinned(case, r):
    """Role r runs locked to one OS thread (a future's goroutine never is)."""
    return r == 0 or (case.pinned[r] and case.links[r - 1] != "future")


def render(case):
    d = case.depth
    nb = gen.BASELINES if case.noise.get("baselines") else 0
    signals = [i for i, m in enumerate(case.links, 1) if m == "signal"]
    out = [PRELUDE % int(case.hold_s * 1000)]
    for i, mech in enumerate(case.links, 1):
        out.append(_snip(mech, "decl", i))
    for r in range(d, 0, -1):
        body = []
        if pinned(case, r):
            body.append("runtime.LockOSThread()")
        body.append(_snip(case.links[r - 1], "hold", r))
        if case.links[r - 1] != "future":
            body.append(f"ready({r}, {str(pinned(case, r)).lower()})")
        if r == 1 and nb and _token(case.links[0]):
            body.append(f"time.Sleep(300 * time.Millisecond); for b := 0; b < {nb}; b++ "
                        f"{{ time.Sleep(40 * time.Millisecond); {_snip(case.links[0], 'release', 1)} }}")
        body.append(_snip(case.links[r], "wait", r + 1) if r < d else f"{_ROOT_FN[case.root]}(hold)")
        body.append(_snip(case.links[r - 1], "release", r))
        out.append(f"func role{r}() {{\n\t" + "\n\t".join(b for b in body if b) + "\n}")
    m = ["func main() {", "\tif len(os.Args) > 1 { dir = os.Args[1] }", "\tload := 0"]
    if len(signals) > 1:
        # one process-wide signal: a second signal link would steal the first one's wakeup
        raise ValueError(f"{case.id}: Go renders at most one signal link")
    if case.noise.get("fd_reuse"):
        m.append("\tfdReuse()")
    for i, mech in enumerate(case.links, 1):
        s = _snip(mech, "setup", i)
        if s:
            m.append("\t" + s)
    if case.noise.get("load"):
        m.append("\tloadTid := make(chan int); go func() { runtime.LockOSThread(); loadTid <- syscall.Gettid(); "
                 "rootCpu(hold + time.Second) }(); load = <-loadTid")
    if case.noise.get("idle"):
        m.append("\tgo idleLoop()")
    for r in range(1, d + 1):
        if case.links[r - 1] == "future":
            m.append(f"\treadyCh <- [3]int{{{r}, os.Getpid(), 0}}")
        else:
            m.append(f"\tgo role{r}()")
    m += [f"\tids := make([][2]int, {d + 1})", "\tids[0] = [2]int{os.Getpid(), syscall.Gettid()}",
          f"\tfor n := 0; n < {d}; n++ {{ x := <-readyCh; ids[x[0]] = [2]int{{x[1], x[2]}} }}",
          "\tclose(goCh)",
          "\tline, _ := json.Marshal(map[string]interface{}{\"roles\": ids, \"load\": load, \"load_is_tid\": true})",
          "\tfmt.Println(string(line))"]
    if d >= 1 and nb and _token(case.links[0]):
        m.append(f"\tfor b := 0; b < {nb}; b++ {{ {_snip(case.links[0], 'wait', 1)} }}")
    m += ["\t" + _snip(case.links[0], "wait", 1), "}"]
    out.append("\n".join(m))
    return "\n\n".join(out) + "\n"
