// Hidden classes at run time: lambda proxies (capturing and not), method
// references, a stream pipeline, MethodHandles (LambdaForms, species) and
// a class defined with Lookup.defineHiddenClass (LambdaSpun's bytes).
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.IntBinaryOperator;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;

public class LambdaCalls {
    static int twice(int x) { return 2 * x + 1; }

    static int viaLambdas(int n, int k) {
        IntUnaryOperator add = x -> x + k;           // capturing
        IntUnaryOperator sq = x -> (x * x) % 1009;   // non-capturing
        IntUnaryOperator ref = LambdaCalls::twice;   // method reference
        IntBinaryOperator mix = (a, b) -> a ^ (b << 1);
        int acc = 0;
        for (int i = 0; i < n; i++)
            acc = mix.applyAsInt(acc, ref.applyAsInt(sq.applyAsInt(add.applyAsInt(i))));
        return acc;
    }

    static int viaStream(int n) {
        return IntStream.range(0, n).map(x -> x * 3).filter(x -> (x & 1) == 0)
                        .reduce(0, (a, b) -> (a + b) % 65521);
    }

    static int viaHandles(int n) throws Throwable {
        MethodHandle mh = MethodHandles.lookup().findStatic(LambdaCalls.class, "twice",
                MethodType.methodType(int.class, int.class));
        MethodHandle bound = MethodHandles.insertArguments(
                MethodHandles.lookup().findStatic(Math.class, "max",
                        MethodType.methodType(int.class, int.class, int.class)), 0, 7);
        int acc = 0;
        for (int i = 0; i < n; i++)
            acc += (int) mh.invokeExact(i) + (int) bound.invokeExact(i & 15);
        return acc;
    }

    // LambdaSpun's bytes defined again as a hidden class.
    static MethodHandle spun() throws Throwable {
        byte[] bytes;
        try (var in = LambdaCalls.class.getResourceAsStream("/LambdaSpun.class")) {
            bytes = in.readAllBytes();
        }
        Class<?> k = MethodHandles.lookup().defineHiddenClass(bytes, true).lookupClass();
        return MethodHandles.lookup().findStatic(k, "work",
                MethodType.methodType(int.class, int.class));
    }

    public static void main(String[] args) throws Throwable {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        MethodHandle work = spun();
        long sum = 0;
        for (int r = 0; r < rounds; r++)
            sum += viaLambdas(200, r) + viaStream(200) + viaHandles(50)
                   + (int) work.invokeExact(r);
        if (args.length > 1)
            awaitGo(java.nio.file.Path.of(args[1]));
        System.out.println("LambdaCalls rounds=" + rounds + " sum=" + sum);
    }

    /* A late-attach test attaches between "ready" and its go file: on a
     * quiet machine the rounds alone end before an attach does. */
    static void awaitGo(java.nio.file.Path go) throws InterruptedException {
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + 30_000_000_000L;
        while (!java.nio.file.Files.exists(go) && System.nanoTime() < end)
            Thread.sleep(10);
    }
}

// Never loaded by name: LambdaCalls.spun defines its bytes as a hidden class.
class LambdaSpun {
    static int work(int n) {
        int acc = 0;
        for (int i = 0; i < n % 50; i++)
            acc += LambdaCalls.twice(i) % 7;
        return acc;
    }
}
