// An HTTP server in Go (net/http): each handler runs on a goroutine, and
// hands its job to a pool of worker goroutines over a channel, then waits
// for the answer.  A "/slow" job computes for the seconds given as the
// first argument; "/fast" ones answer at once.  The runtime moves these
// goroutines among its threads (Ms) as it likes, so no OS thread is "the
// handler".  Prints {"pid", "port"} first.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

type job struct {
	slow  bool
	reply chan int
}

func worker(jobs chan job, seconds float64) {
	for j := range jobs {
		x := 0
		if j.slow {
			end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
			for time.Now().Before(end) {
				for k := 0; k < 20000; k++ {
					x += k * k
				}
			}
		}
		j.reply <- x
	}
}

func main() {
	seconds, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: go_http_server SECONDS")
		os.Exit(2)
	}
	jobs := make(chan job)
	for k := 0; k < 4; k++ {
		go worker(jobs, seconds)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	handle := func(slow bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			j := job{slow, make(chan int)}
			jobs <- j
			fmt.Fprintf(w, "%d\n", <-j.reply)
		}
	}
	http.HandleFunc("/fast", handle(false))
	http.HandleFunc("/slow", handle(true))
	out, _ := json.Marshal(map[string]int{"pid": os.Getpid(), "port": ln.Addr().(*net.TCPAddr).Port})
	fmt.Println(string(out))
	os.Stdout.Sync()
	http.Serve(ln, nil)
}
