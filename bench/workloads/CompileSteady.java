// For bench/fig-agent-overhead: javac (through javax.tools) compiles the
// given sources again and again, as tests/workloads/CompileLoop.java does,
// until the file STOP exists or LIMIT seconds have passed.  After each
// compile it prints "N CPU_NS MONO_NS": compiles so far, the CPU time the
// whole process has used (all threads: JIT, GC, an agent's writer) and
// System.nanoTime (CLOCK_MONOTONIC on Linux, one clock for all processes),
// so that the harness can cut the same steady-state window out of two JVMs
// run side by side, on whole compiles.
//   java CompileSteady STOP LIMIT OUTDIR SOURCE.java...
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

public class CompileSteady {
    public static void main(String[] args) throws Exception {
        File stop = new File(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        List<String> argv = new ArrayList<>();
        argv.add("-d");
        argv.add(args[2]);
        for (int i = 3; i < args.length; i++)
            argv.add(args[i]);
        String[] a = argv.toArray(new String[0]);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int n = 1; !stop.exists() && System.nanoTime() < end; n++) {
            int rc = javac.run(null, null, null, a);
            if (rc != 0)
                throw new IllegalStateException("javac failed: " + rc);
            System.out.println(n + " " + os.getProcessCpuTime() + " " + System.nanoTime());
        }
    }
}
