// Apache Commons Math 3 (Debian libcommons-math3-java): an LU solve of a
// dense system, a forward and inverse FFT, and descriptive statistics over
// the solution.  job() is the measured part; main runs it once small to
// load and initialise the classes, then once at the requested size.
import org.apache.commons.math3.complex.Complex;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.DecompositionSolver;
import org.apache.commons.math3.linear.LUDecomposition;
import org.apache.commons.math3.linear.RealMatrix;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.math3.transform.DftNormalization;
import org.apache.commons.math3.transform.FastFourierTransformer;
import org.apache.commons.math3.transform.TransformType;

public class Math3Job {
	static long job(int n) {
		double[][] a = new double[n][n];
		double[] b = new double[n];
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < n; j++)
				a[i][j] = ((i * 31 + j * 17) % 23) - 11 + (i == j ? 4 * n : 0);
			b[i] = (i % 7) - 3;
		}
		RealMatrix m = new Array2DRowRealMatrix(a, false);
		DecompositionSolver s = new LUDecomposition(m).getSolver();
		RealVector x = s.solve(new ArrayRealVector(b, false));

		int len = Integer.highestOneBit(4 * n);
		double[] sig = new double[len];
		for (int i = 0; i < len; i++)
			sig[i] = Math.sin(i * 0.3) + ((i * 13) % 5) * 0.1;
		FastFourierTransformer fft = new FastFourierTransformer(DftNormalization.STANDARD);
		Complex[] f = fft.transform(sig, TransformType.FORWARD);
		Complex[] back = fft.transform(f, TransformType.INVERSE);

		DescriptiveStatistics st = new DescriptiveStatistics();
		for (int i = 0; i < n; i++)
			st.addValue(x.getEntry(i));
		for (Complex c : back)
			st.addValue(c.getReal());
		return Math.round(st.getMean() * 1e6) ^ Math.round(st.getStandardDeviation() * 1e6)
			^ Math.round(st.getPercentile(50) * 1e6) ^ Math.round(f[1].abs() * 1e3);
	}

	static long traced(int n) {
		return job(n);
	}

	public static void main(String[] args) {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 24;
		job(4);
		System.out.println("result " + traced(n));
	}
}
