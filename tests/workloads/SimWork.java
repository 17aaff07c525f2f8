// A second workload for the simulator's end-to-end tests: streams and
// lambdas (invokedynamic), a string switch (lookupswitch on hashCode),
// synchronized methods and blocks with a wait/notify handoff between two
// threads, an exception thrown four frames down, interface default
// methods, a static initializer, StringBuilder and collections.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

public class SimWork {
	static final int[] TABLE;
	static {
		TABLE = new int[16];
		for (int i = 0; i < TABLE.length; i++)
			TABLE[i] = i * i + 1;
	}

	interface Op { int apply(int x); default int twice(int x) { return apply(apply(x)); } }
	static final class Inc implements Op { public int apply(int x) { return x + 1; } }
	static final class Dbl implements Op { public int apply(int x) { return x * 2; } }

	static int word(String s) {
		switch (s) {
		case "alpha": return 1;
		case "beta": return 2;
		case "gamma": return 3;
		default: return s.length();
		}
	}

	static int depth(int n) {
		if (n == 0)
			throw new IllegalStateException("bottom");
		return depth(n - 1) + 1;
	}

	static int guarded(int n) {
		try {
			return depth(n);
		} catch (IllegalStateException e) {
			return -n;
		}
	}

	static final class Box {
		private int value;
		private boolean full;
		synchronized void put(int v) throws InterruptedException {
			while (full)
				wait();
			value = v;
			full = true;
			notifyAll();
		}
		synchronized int take() throws InterruptedException {
			while (!full)
				wait();
			full = false;
			notifyAll();
			return value;
		}
	}

	static int compute(int rounds) {
		String[] words = { "alpha", "beta", "gamma", "delta", "epsilon" };
		Op[] ops = { new Inc(), new Dbl() };
		Map<String, Integer> counts = new HashMap<>();
		List<Integer> seen = new ArrayList<>();
		int acc = 0;
		for (int i = 0; i < rounds; i++) {
			String w = words[i % words.length];
			acc += word(w);
			counts.merge(w, 1, Integer::sum);
			acc += ops[i % 2].twice(i & 15);
			acc += TABLE[i & 15];
			if (i % 10 == 0)
				acc += guarded(4);
			if (i % 25 == 0)
				seen.add(acc);
		}
		acc += IntStream.range(0, rounds).filter(x -> x % 3 == 0).map(x -> x * 2).sum();
		String joined = seen.stream().map(String::valueOf).collect(Collectors.joining(","));
		return acc + joined.length() + counts.size();
	}

	public static void main(String[] args) throws Exception {
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
		Box box = new Box();
		Thread producer = new Thread(() -> {
			try {
				for (int i = 0; i < 20; i++)
					box.put(compute(rounds / 10) + i);
				box.put(-1);
			} catch (InterruptedException e) {
				Thread.currentThread().interrupt();
			}
		}, "sim-producer");
		producer.start();
		long sum = 0;
		for (int v; (v = box.take()) != -1;)
			sum += v;
		producer.join();
		StringBuilder sb = new StringBuilder("result ");
		sb.append(sum).append(' ').append(compute(rounds));
		System.out.println(sb);
	}
}
