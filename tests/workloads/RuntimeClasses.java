// Classes that no class loader can give back as a resource, as a late
// attach meets them (docs/AGENT.md, "Late attach"): two classes defined from
// bytes by a loader without resources (one run before the attach, one
// linked only after it), a dynamic proxy and, on JDK 17, a reflection
// accessor (generated after 15 Method.invoke calls).
//   java RuntimeClasses GOFILE   sets them up and prints "ready", runs
//                                them until GOFILE exists, then links and
//                                runs the second class and prints the sums
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntUnaryOperator;

public class RuntimeClasses {
    public static class Payload {
        // A handler in the loop: its exception table is what a class file
        // rebuilt from JVMTI lacks.
        public static int work(int n) {
            int s = 0;
            for (int i = 0; i < n; i++) {
                try {
                    s += 100 / (i % 5);
                } catch (ArithmeticException e) {
                    s += 1;
                }
            }
            return s;
        }
    }

    public static class Later {
        public static int work(int n) {
            int s = 0;
            for (int i = 0; i < n; i++)
                s += i % 3 == 0 ? i : -1;
            return s;
        }
    }

    // The bootstrap loader as parent: no loader in the chain has the
    // bytes as a resource.
    static class BytesLoader extends ClassLoader {
        BytesLoader() {
            super(null);
        }

        Class<?> define(String name) throws Exception {
            byte[] b;
            try (InputStream in = RuntimeClasses.class.getResourceAsStream(
                     "/" + name + ".class")) {
                b = in.readAllBytes();
            }
            return defineClass(name, b, 0, b.length);
        }
    }

    static int round(Method work, IntUnaryOperator proxy) throws Exception {
        return (Integer) work.invoke(null, 1000) + proxy.applyAsInt(7);
    }

    public static void main(String[] args) throws Exception {
        BytesLoader loader = new BytesLoader();
        Method work = loader.define("RuntimeClasses$Payload")
            .getMethod("work", int.class);
        Class<?> later = loader.define("RuntimeClasses$Later");
        IntUnaryOperator proxy = (IntUnaryOperator) Proxy.newProxyInstance(
            RuntimeClasses.class.getClassLoader(),
            new Class<?>[] { IntUnaryOperator.class },
            (p, m, a) -> m.getName().equals("applyAsInt")
                ? (Integer) a[0] + 1 : 0);
        long sum = 0;
        for (int i = 0; i < 20; i++)
            sum += round(work, proxy);
        System.out.println("ready");
        Path go = Path.of(args[0]);
        long end = System.nanoTime() + 30_000_000_000L;
        while (!Files.exists(go) && System.nanoTime() < end) {
            sum += round(work, proxy);
            Thread.sleep(10);
        }
        int l = (Integer) later.getMethod("work", int.class).invoke(null, 900);
        System.out.println("RuntimeClasses payload=" + round(work, proxy)
                           + " later=" + l);
    }
}
