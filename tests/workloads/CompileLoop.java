// A JIT-heavy workload for overhead measurements: javac (through
// javax.tools) compiles the given sources again and again, so the JVM keeps
// loading, compiling and running a large, branchy code base.
//   java CompileLoop SECONDS OUTDIR SOURCE.java...
// Prints "compiles N seconds S rate R cpu C" (compiles per second after a
// warm-up that is not counted: 3 s, or -Dwarm=SECONDS; C: CPU seconds the
// whole process used meanwhile, all threads, which other jobs on the
// machine disturb far less than the wall-clock rate).
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.lang.management.ManagementFactory;
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
        double warm = Double.parseDouble(System.getProperty("warm", "3"));
        long warmEnd = System.nanoTime() + (long) (warm * 1e9);
        while (System.nanoTime() < warmEnd)
            check(javac.run(null, null, null, a));
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        int n = 0;
        while (System.nanoTime() < end) {
            check(javac.run(null, null, null, a));
            n++;
        }
        double s = (System.nanoTime() - start) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        System.out.printf("compiles %d seconds %.3f rate %.4f cpu %.3f%n", n, s, n / s, cpu);
    }

    static void check(int rc) {
        if (rc != 0)
            throw new IllegalStateException("javac failed: " + rc);
    }
}
