// Program-model workload: try/catch/finally within and across methods,
// multi-catch, nested handlers, synchronized blocks.
public class ModelExceptions {
    static int depth;

    static int thrower(int x) {
        if (x < 0)
            throw new IllegalArgumentException("negative");
        if (x == 0)
            throw new ArithmeticException("zero");
        return 100 / x;
    }

    static int catcher(int x) {
        try {
            return thrower(x);
        } catch (IllegalArgumentException e) {
            return -1;
        } catch (ArithmeticException | NullPointerException e) {
            return -2;
        } finally {
            depth++;
        }
    }

    static int nested(int[] a, int i) {
        int r = 0;
        try {
            try {
                r = a[i];
            } catch (ArrayIndexOutOfBoundsException e) {
                r = -1;
                throw new IllegalStateException(e);
            }
        } catch (IllegalStateException e) {
            r -= 10;
        }
        return r;
    }

    static final Object LOCK = new Object();

    static int locked(int x) {
        synchronized (LOCK) {
            return x * 2;
        }
    }

    public static void main(String[] args) {
        int s = 0;
        for (int i = -2; i < 5; i++)
            s += catcher(i) + nested(new int[] { 1, 2 }, i) + locked(i);
        System.out.println(s + " " + depth);
    }
}
