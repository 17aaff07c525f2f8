// JIT-heavy workload: small hot methods that C1/C2 inline into their
// callers, for compiled-method and inline-stack tests.
//   java HotInline [seconds]   (default 2)
public class HotInline {
    static int sq(int x) { return x * x; }
    static int mix(int a, int b) { return sq(a) ^ (b >>> 3); }
    static long step(long acc, int i) { return acc * 31 + mix(i, (int) acc); }

    static long kernel(int n) {
        long acc = 1;
        for (int i = 0; i < n; i++)
            acc = step(acc, i);
        return acc;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        long end = System.nanoTime() + (long) (secs * 1e9);
        long sink = 0;
        int rounds = 0;
        while (System.nanoTime() < end) {
            sink += kernel(10000);
            rounds++;
        }
        System.out.println("HotInline rounds=" + rounds + " sink=" + sink);
    }
}
