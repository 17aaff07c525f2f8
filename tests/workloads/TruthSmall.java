// Deterministic workload for ground-truth tests.  The expected bytecode
// sequences of add(), loop() and safeDiv() are written down from
// `javap -c` in tests/integration/agent_truth.sh; keep them in sync.
public class TruthSmall {
    static int add(int a, int b) {
        return a + b;
    }

    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s = add(s, i);
        return s;
    }

    static int safeDiv(int a, int b) {
        try {
            return a / b;
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    public static void main(String[] args) {
        int r = loop(3) + safeDiv(1, 0);
        System.out.println("result " + r);
    }
}
