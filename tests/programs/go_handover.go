// A hang handed over in user space, for tests/test_go_probes_e2e.py: the main
// goroutine (locked to the main thread) waits on a channel; goroutine A (not
// locked: Go's scheduler picks its thread) sends on it only once it gets a
// sync.Mutex that goroutine B (not locked either) holds while it computes for
// HOLD_MS.  No kernel record joins the three: the mutex and the channel park
// goroutines, not threads.  Prints one JSON line when every role is ready, and
// one at the end with the threads A and B last ran on.
package main

import (
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func init() { runtime.LockOSThread() }

func spin(d time.Duration) uint64 {
	var x uint64 = 1
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	hold, _ := strconv.Atoi(os.Getenv("HOLD_MS"))
	if hold <= 0 {
		hold = 3000
	}
	var mu sync.Mutex
	held := make(chan struct{})
	done := make(chan int)
	var bTid int
	var sink uint64
	mu.Lock() // taken for B, which unlocks it
	go func() { // B: the root, busy while it holds mu
		close(held)
		sink = spin(time.Duration(hold) * time.Millisecond)
		bTid = syscall.Gettid()
		mu.Unlock()
	}()
	go func() { // A: waits for mu, then answers main
		<-held
		mu.Lock()
		done <- syscall.Gettid()
		mu.Unlock()
	}()
	<-held
	time.Sleep(50 * time.Millisecond) // A is parked on mu by now
	enc := json.NewEncoder(os.Stdout)
	enc.Encode(map[string]int{"pid": os.Getpid(), "main": syscall.Gettid()})
	aTid := <-done // the hang: main waits for A, A for B
	enc.Encode(map[string]interface{}{"a": aTid, "b": bTid, "sink": sink % 2})
}
