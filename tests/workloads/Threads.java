// Eight threads, each alternating CPU work and blocking (sleep, a shared
// lock, a queue hand-off), for scheduling and agent thread tests.
//   java Threads [seconds]   (default 3)
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

public class Threads {
    static final Object lock = new Object();
    static long shared;
    static volatile boolean running = true;

    static long spin(int n) {
        long x = 1;
        for (int i = 0; i < n; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        BlockingQueue<Long> q = new ArrayBlockingQueue<>(4);
        Thread[] ts = new Thread[8];
        for (int t = 0; t < ts.length; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                long local = 0;
                try {
                    while (running) {
                        local += spin(200000);
                        switch (id % 4) {
                        case 0: Thread.sleep(2); break;
                        case 1: synchronized (lock) { shared += local; spin(20000); } break;
                        case 2: q.put(local); break;
                        default: q.poll(); Thread.sleep(1); break;
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker-" + t);
            ts[t].start();
        }
        Thread.sleep((long) (secs * 1000));
        running = false;
        for (Thread t : ts) {
            t.interrupt();
            t.join();
        }
        System.out.println("Threads done shared=" + shared);
    }
}
