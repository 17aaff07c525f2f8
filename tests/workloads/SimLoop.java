// A small workload for the simulator's end-to-end test: loops, nested
// conditionals, a tableswitch and a lookupswitch, recursion, virtual and
// interface calls with several receivers, identical getters, exceptions
// across frames, a lambda, string building and a second thread.
import java.util.function.IntUnaryOperator;

public class SimLoop {
	interface Shape { int area(); }
	static final class Sq implements Shape { final int s; Sq(int s) { this.s = s; } public int area() { return s * s; } }
	static final class Rect implements Shape { final int w, h; Rect(int w, int h) { this.w = w; this.h = h; } public int area() { return w * h; } }
	static class Box { int v; Box(int v) { this.v = v; } int get() { return v; } }
	static class Box2 extends Box { Box2(int v) { super(v); } @Override int get() { return v + 1; } }

	static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

	static int classify(int x) {
		switch (x % 5) {
		case 0: return 10;
		case 1: return 11;
		case 2: return 12;
		default: break;
		}
		switch (x) {
		case 100: return 1;
		case 1000: return 2;
		case 77777: return 3;
		default: return x > 50 ? (x % 2 == 0 ? 4 : 5) : 6;
		}
	}

	static int check(int a, int b) {
		if (b == 0)
			throw new IllegalArgumentException("zero");
		return a / b;
	}

	static int safe(int a, int b) {
		try {
			return check(a, b);
		} catch (IllegalArgumentException e) {
			return -1;
		}
	}

	static int work(int rounds) {
		int sum = 0;
		Shape[] shapes = { new Sq(3), new Rect(2, 5), new Sq(4) };
		Box[] boxes = { new Box(1), new Box2(2) };
		IntUnaryOperator twice = v -> v * 2;
		for (int i = 0; i < rounds; i++) {
			sum += classify(i);
			sum += shapes[i % shapes.length].area();
			sum += boxes[i % 2].get();
			sum += safe(i, i % 7);
			sum = twice.applyAsInt(sum) % 100003;
			if (i % 50 == 0)
				sum += fib(8);
		}
		return sum;
	}

	public static void main(String[] args) throws Exception {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
		int[] out = new int[1];
		Thread t = new Thread(() -> out[0] = work(rounds / 2), "sim-worker");
		t.start();
		int mine = work(rounds);
		t.join();
		StringBuilder sb = new StringBuilder("result ");
		sb.append(mine).append(' ').append(out[0]);
		System.out.println(sb);
	}
}
