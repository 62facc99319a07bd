// A Java program whose main thread hangs entering a synchronized block: the
// main thread and a worker first share one lock object for short critical
// sections (so HotSpot inflates its monitor and both threads block on it and
// are woken through it), then the worker enters the monitor and computes on
// the CPU for SECONDS while holding it; the main thread blocks on the monitor
// until the worker leaves it.
//   java MonitorHolder.java SECONDS
// Prints {"pid", "tid", "worker_tid"} first: tid is the Java main thread's
// native tid, which is not the pid (the launcher runs main on a new thread).
import java.nio.file.Files;
import java.nio.file.Path;

public class MonitorHolder {
    static final Object lock = new Object();
    static long counter;
    // set by the main thread when the churn is over / by the worker once it
    // holds the monitor for the long computation
    static volatile boolean goSlow, holding;
    static volatile int workerTid;

    // Java 17 has no API for a thread's native tid: /proc/thread-self is a
    // symlink to "PID/task/TID" of the thread that reads it.
    static int nativeTid() throws Exception {
        String link = Files.readSymbolicLink(Path.of("/proc/thread-self")).toString();
        return Integer.parseInt(link.substring(link.lastIndexOf('/') + 1));
    }

    static void critical(long nanos) {
        synchronized (lock) {
            long end = System.nanoTime() + nanos;
            while (System.nanoTime() < end) {
                counter++;
            }
        }
    }

    // A pure CPU loop (an LCG) for about `seconds`; the clock is read through
    // the vDSO every million steps, so the thread makes no system call.
    static long compute(double seconds) {
        long x = 1, end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1_000_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        long[] result = new long[1];
        Thread worker = new Thread(() -> {
            try {
                workerTid = nativeTid();
                while (!goSlow) {
                    critical(2_000_000);
                    Thread.sleep(1);
                }
                synchronized (lock) {
                    holding = true;
                    result[0] = compute(seconds);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "worker");
        worker.start();
        while (workerTid == 0) {
            Thread.sleep(1);
        }
        System.out.println("{\"pid\": " + ProcessHandle.current().pid() + ", \"tid\": " + nativeTid()
                           + ", \"worker_tid\": " + workerTid + "}");
        System.out.flush();
        long tSlow = System.nanoTime() + 1_500_000_000L;
        while (System.nanoTime() < tSlow) {
            critical(2_000_000);
            Thread.sleep(1);
        }
        goSlow = true;
        // Enter only once the worker holds the monitor, so the main thread is
        // the one that blocks (not the worker behind a last short section).
        while (!holding) {
            Thread.sleep(1);
        }
        long t0 = System.nanoTime();
        synchronized (lock) {
            counter++;
        }
        worker.join();
        System.out.println("{\"blocked_s\": " + (System.nanoTime() - t0) / 1e9 + ", \"result\": " + result[0]
                           + ", \"counter\": " + counter + "}");
    }
}
