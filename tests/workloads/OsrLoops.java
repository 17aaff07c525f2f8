// On-stack replacement at known places, for agent_level.sh: each method
// runs one long loop in a single call, so the JVM compiles it for entry
// at that loop's back-edge target (PrintCompilation "% ... @ BCI"); the
// loops start at different bytecode indexes, and two() has two loops,
// entered by two calls, so one method gets two entry bcis.
//   java OsrLoops [N]   prints "OsrLoops sum S"
public class OsrLoops {
    static long first(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i ^ (s >>> 3);
        return s;
    }

    static long later(int n) {
        long s = n * 31L;
        s ^= s << 5;
        s += Long.numberOfTrailingZeros(s | 1);
        for (int i = 0; i < n; i++)
            s += (i * 17L) ^ (s >>> 7);
        return s;
    }

    static long two(int n, int m) {
        long s = 1;
        for (int i = 0; i < n; i++)
            s += i * s;
        s = s * 3 + 1;
        for (int j = 0; j < m; j++)
            s ^= j + (s << 1);
        return s;
    }

    static long whileLoop(int n) {
        long s = 5;
        int i = 0;
        while (true) {
            s += i * 3L + (s & 7);
            if (++i >= n)
                break;
        }
        return s;
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 4_000_000;
        long s = first(n) + later(n) + two(n, 0) + two(0, n) + whileLoop(n);
        System.out.println("OsrLoops sum " + s);
    }
}
