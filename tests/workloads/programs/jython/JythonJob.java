// Jython 2.7 (Debian jython): run a small Python program (a sieve, a dict
// word count, a class with methods, a generator, string formatting) in an
// embedded interpreter; the script is compiled to JVM bytecode by Jython.
import org.python.core.PyObject;
import org.python.util.PythonInterpreter;

public class JythonJob {
	static final String SCRIPT =
		"def sieve(n):\n" +
		"    flags = [True] * (n + 1)\n" +
		"    out = []\n" +
		"    for i in range(2, n + 1):\n" +
		"        if flags[i]:\n" +
		"            out.append(i)\n" +
		"            for j in range(i * i, n + 1, i):\n" +
		"                flags[j] = False\n" +
		"    return out\n" +
		"class Acc(object):\n" +
		"    def __init__(self):\n" +
		"        self.total = 0\n" +
		"    def add(self, v):\n" +
		"        self.total += v\n" +
		"        return self\n" +
		"def words(n):\n" +
		"    for i in range(n):\n" +
		"        yield ['ab', 'cd', 'ef', 'gh'][(i * 7) % 4] + str(i % 5)\n" +
		"def run(n):\n" +
		"    counts = {}\n" +
		"    for w in words(n):\n" +
		"        counts[w] = counts.get(w, 0) + 1\n" +
		"    acc = Acc()\n" +
		"    for p in sieve(n):\n" +
		"        acc.add(p)\n" +
		"    s = '%d:%s' % (acc.total, ','.join('%s=%d' % kv for kv in sorted(counts.items())))\n" +
		"    return hash(s) & 0xffffff\n";

	static long job(PythonInterpreter py, int n) {
		PyObject r = py.eval("run(" + n + ")");
		return r.asLong();
	}

	static long traced(PythonInterpreter py, int n) {
		return job(py, n);
	}

	public static void main(String[] args) {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 300;
		try (PythonInterpreter py = new PythonInterpreter()) {
			py.exec(SCRIPT);
			job(py, 10);
			System.out.println("result " + traced(py, n));
		}
	}
}
