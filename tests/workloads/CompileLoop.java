// A JIT-heavy workload for overhead measurements: javac (through
// javax.tools) compiles the given sources again and again, so the JVM keeps
// loading, compiling and running a large, branchy code base.
//   java CompileLoop SECONDS OUTDIR SOURCE.java...
// Prints "compiles N seconds S rate R" (compiles per second after a 3 s
// warm-up that is not counted).
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.util.ArrayList;
import java.util.List;

public class CompileLoop {
    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        List<String> argv = new ArrayList<>();
        argv.add("-d");
        argv.add(args[1]);
        for (int i = 2; i < args.length; i++)
            argv.add(args[i]);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String[] a = argv.toArray(new String[0]);
        long warmEnd = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < warmEnd)
            check(javac.run(null, null, null, a));
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        int n = 0;
        while (System.nanoTime() < end) {
            check(javac.run(null, null, null, a));
            n++;
        }
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf("compiles %d seconds %.3f rate %.4f%n", n, s, n / s);
    }

    static void check(int rc) {
        if (rc != 0)
            throw new IllegalStateException("javac failed: " + rc);
    }
}
