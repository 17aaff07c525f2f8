// For bench/fig-attribution: four threads that run disjoint code (each
// its own class and methods), so an event given to the wrong thread is
// one that thread's truth does not hold, and `jpbpf eval`'s attribution
// (placed events found in the thread's own truth) measures it.
//   java Attribution [N]   N rounds per thread (default 2000)

public class Attribution {
	static final class Alpha {
		static long sq(long x) { return x * x; }
		static long run(int n) {
			long s = 0;
			for (int i = 0; i < n; i++)
				s += (i & 1) == 0 ? sq(i) : -i;
			return s;
		}
	}

	static final class Beta {
		static int mix(int h, char c) { return h * 31 + c; }
		static long run(int n) {
			char[] text = "the quick brown fox jumps over the lazy dog".toCharArray();
			long s = 0;
			for (int i = 0; i < n; i++) {
				int h = i;
				for (char c : text)
					h = mix(h, c);
				s += h;
			}
			return s;
		}
	}

	static final class Gamma {
		static void sort(int[] a) {
			for (int i = 1; i < a.length; i++)
				for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
					int t = a[j]; a[j] = a[j - 1]; a[j - 1] = t;
				}
		}
		static long run(int n) {
			int[] a = new int[12];
			long s = 0;
			for (int i = 0; i < n; i++) {
				for (int k = 0; k < a.length; k++)
					a[k] = (k * 7919 + i) % 97;
				sort(a);
				s += a[i % a.length];
			}
			return s;
		}
	}

	static final class Delta {
		static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
		static long run(int n) {
			long s = 0;
			for (int i = 0; i < n; i++)
				s += fib(8 + (i & 3));
			return s;
		}
	}

	public static void main(String[] args) throws Exception {
		final int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
		final long[] out = new long[4];
		Thread[] ts = {
			new Thread(() -> out[0] = Alpha.run(n * 40), "alpha"),
			new Thread(() -> out[1] = Beta.run(n), "beta"),
			new Thread(() -> out[2] = Gamma.run(n), "gamma"),
			new Thread(() -> out[3] = Delta.run(n / 2), "delta"),
		};
		for (Thread t : ts)
			t.start();
		for (Thread t : ts)
			t.join();
		System.out.println("Attribution " + out[0] + " " + out[1] + " " + out[2] + " " + out[3]);
	}
}
