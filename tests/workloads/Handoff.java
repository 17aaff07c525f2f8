// SPDX-License-Identifier: MIT
// A context-switch-heavy workload: N threads in a ring, each taking a token
// from its inbox, doing a little work and handing it to the next thread's
// inbox, so every hop is a block/wake-up pair.  Also JIT-compiles its hot
// methods (code-cache events) and, after LATE_MS, starts one more thread
// ("late-starter") so tests can check threads born during a recording.
// With REPORT_MS > 0 it prints "hops MONOTONIC_MS TOTAL" that often, so a
// benchmark can compare rates within one run.  WORK (default 200) is the
// loop count of the work done per hop: larger values mean fewer context
// switches per second.
//   java Handoff [seconds] [threads] [late_ms] [report_ms] [work]
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

public class Handoff {
    static final AtomicLong hops = new AtomicLong();

    static int workIters = 200;

    static long work(long x) {
        for (int i = 0; i < workIters; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        int secs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        long lateMs = args.length > 2 ? Long.parseLong(args[2]) : -1;
        long reportMs = args.length > 3 ? Long.parseLong(args[3]) : 0;
        if (args.length > 4)
            workIters = Integer.parseInt(args[4]);
        long end = System.nanoTime() + secs * 1_000_000_000L;
        @SuppressWarnings("unchecked")
        BlockingQueue<Long>[] q = new BlockingQueue[n];
        for (int i = 0; i < n; i++)
            q[i] = new ArrayBlockingQueue<>(4);
        Thread[] t = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int me = i;
            t[i] = new Thread(() -> {
                try {
                    while (System.nanoTime() < end) {
                        Long v = q[me].poll(50, java.util.concurrent.TimeUnit.MILLISECONDS);
                        if (v == null)
                            continue;
                        q[(me + 1) % n].put(work(v));
                        hops.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "handoff-" + i);
            t[i].start();
        }
        for (int i = 0; i < n; i += 2)
            q[i].put((long) i);
        if (reportMs > 0) {
            Thread rep = new Thread(() -> {
                while (System.nanoTime() < end) {
                    try { Thread.sleep(reportMs); } catch (InterruptedException e) { return; }
                    System.out.println("hops " + System.nanoTime() / 1_000_000 + " " + hops.get());
                    System.out.flush();
                }
            }, "reporter");
            rep.setDaemon(true);
            rep.start();
        }
        Thread late = null;
        if (lateMs >= 0) {
            Thread.sleep(lateMs);
            late = new Thread(() -> {
                long x = 1;
                while (System.nanoTime() < end) {
                    x = work(x);
                    try { Thread.sleep(5); } catch (InterruptedException e) { return; }
                }
                if (x == 42) System.out.print("");
            }, "late-starter");
            late.start();
        }
        for (Thread th : t)
            th.join();
        if (late != null)
            late.join();
        System.out.println("hops " + hops.get());
    }
}
