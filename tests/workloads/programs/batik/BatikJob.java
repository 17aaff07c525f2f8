// Apache Batik (Debian libbatik-java): parse a generated SVG document
// (paths, gradients, text-free shapes, transforms, opacity), build the GVT
// tree and rasterise it to PNG in memory with the PNG transcoder.
import java.io.ByteArrayOutputStream;
import java.io.StringReader;

import org.apache.batik.transcoder.TranscoderException;
import org.apache.batik.transcoder.TranscoderInput;
import org.apache.batik.transcoder.TranscoderOutput;
import org.apache.batik.transcoder.image.PNGTranscoder;

public class BatikJob {
	static String svg(int n) {
		StringBuilder sb = new StringBuilder();
		sb.append("<svg xmlns='http://www.w3.org/2000/svg' width='96' height='72' viewBox='0 0 96 72'>\n")
		  .append("<defs><linearGradient id='g' x1='0' y1='0' x2='1' y2='1'>")
		  .append("<stop offset='0' stop-color='#3060c0'/><stop offset='1' stop-color='#f0a020'/>")
		  .append("</linearGradient></defs>\n<rect width='96' height='72' fill='url(#g)'/>\n");
		for (int i = 0; i < n; i++) {
			int x = (i * 37) % 90, y = (i * 23) % 66;
			sb.append("<g transform='rotate(").append((i * 29) % 360).append(' ')
			  .append(x).append(' ').append(y).append(")' opacity='0.").append(3 + i % 6).append("'>")
			  .append("<path d='M").append(x).append(' ').append(y)
			  .append(" q 6 -9 12 0 t 12 0 l -6 8 z' fill='#")
			  .append(Integer.toHexString(0x100000 + (i * 0x2f3a17) % 0xefffff))
			  .append("' stroke='black' stroke-width='0.5'/>")
			  .append("<circle cx='").append(x + 3).append("' cy='").append(y + 4)
			  .append("' r='").append(2 + i % 4).append("' fill='none' stroke='white'/></g>\n");
		}
		return sb.append("</svg>\n").toString();
	}

	static long job(int n) throws TranscoderException {
		PNGTranscoder t = new PNGTranscoder();
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		t.transcode(new TranscoderInput(new StringReader(svg(n))), new TranscoderOutput(out));
		byte[] png = out.toByteArray();
		long sum = png.length;
		for (byte b : png)
			sum = sum * 31 + b;
		return sum;
	}

	static long traced(int n) throws TranscoderException {
		return job(n);
	}

	public static void main(String[] args) throws TranscoderException {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 12;
		job(1);
		System.out.println("result " + traced(n));
	}
}
