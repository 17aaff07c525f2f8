// Program-model workload: loops, nested conditionals, both switch kinds,
// a wide local, and a static initializer.
public class ModelControl {
    static final int[] TABLE;
    static int counter;

    static {
        TABLE = new int[8];
        for (int i = 0; i < TABLE.length; i++)
            TABLE[i] = i * i;
    }

    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            if (i % 3 == 0)
                s += i;
            else if (i % 5 == 0)
                s -= 1;
            else
                s ^= i;
        }
        while (s > 1000)
            s /= 2;
        return s;
    }

    static int dense(int k) {
        switch (k) {
        case 1: return 10;
        case 2: return 20;
        case 3: return 30;
        case 4: return 40;
        default: return -1;
        }
    }

    static int sparse(int k) {
        switch (k) {
        case -100: return 1;
        case 7: return 2;
        case 100000: return 3;
        default: return 0;
        }
    }

    static int nested(int a, int b, int c) {
        if (a > 0) {
            if (b > 0) {
                return c > 0 ? 1 : 2;
            } else if (c < 0) {
                return 3;
            }
        } else {
            do {
                a++;
            } while (a < b);
        }
        return a + b + c;
    }

    static long manyLocals(long x) {
        long v0 = x, v1 = x + 1, v2 = x + 2, v3 = x + 3, v4 = x + 4;
        long v5 = x + 5, v6 = x + 6, v7 = x + 7, v8 = x + 8, v9 = x + 9;
        long w0 = v0 + v1, w1 = v2 + v3, w2 = v4 + v5, w3 = v6 + v7;
        long w4 = v8 + v9, w5 = w0 * w1, w6 = w2 * w3, w7 = w4 * w5;
        long u0 = w6 + w7, u1 = u0 * 3, u2 = u1 - w0, u3 = u2 + w1;
        long u4 = u3 ^ w2, u5 = u4 | w3, u6 = u5 & w4, u7 = u6 + w5;
        long big = u7;
        for (int i = 0; i < 300; i += 200)
            big += i;
        return big + u0 + u1 + u2 + u3 + u4 + u5 + u6;
    }

    public static void main(String[] args) {
        int s = 0;
        for (int i = 0; i < 100; i++)
            s += loop(i) + dense(i % 6) + sparse(i) + nested(i - 50, i, 3);
        counter = s;
        System.out.println(s + manyLocals(s) + TABLE[3]);
    }
}
