// Apache FOP (Debian libfop-java): lay out a generated XSL-FO document (a
// title, paragraphs with inline styles, a table, page breaks) and render
// it to PDF in memory with the base-14 fonts.
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.StringReader;

import javax.xml.transform.Result;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;

import org.apache.fop.apps.Fop;
import org.apache.fop.apps.FopFactory;
import org.apache.fop.apps.FormattingResults;
import org.apache.fop.apps.MimeConstants;

public class FopJob {
	static String fo(int n) {
		StringBuilder sb = new StringBuilder();
		sb.append("<fo:root xmlns:fo='http://www.w3.org/1999/XSL/Format'>")
		  .append("<fo:layout-master-set><fo:simple-page-master master-name='a4' page-height='29.7cm' page-width='21cm' margin='2cm'>")
		  .append("<fo:region-body/></fo:simple-page-master></fo:layout-master-set>")
		  .append("<fo:page-sequence master-reference='a4'><fo:flow flow-name='xsl-region-body'>")
		  .append("<fo:block font-size='18pt' font-weight='bold' space-after='6pt'>jpbpf report</fo:block>");
		for (int i = 0; i < n; i++) {
			sb.append("<fo:block text-align='justify' space-after='4pt'>Paragraph ").append(i)
			  .append(" with <fo:inline font-style='italic'>inline emphasis</fo:inline> and ")
			  .append("<fo:inline font-family='Courier'>code ").append(i * 17 % 101).append("</fo:inline>; ");
			for (int w = 0; w < 6 + i % 5; w++)
				sb.append("lorem ipsum dolor sit amet ");
			sb.append("</fo:block>");
		}
		sb.append("<fo:table table-layout='fixed' width='100%'><fo:table-column column-width='50%'/><fo:table-column column-width='50%'/><fo:table-body>");
		for (int i = 0; i < n; i++)
			sb.append("<fo:table-row><fo:table-cell border='solid 0.5pt'><fo:block>row ").append(i)
			  .append("</fo:block></fo:table-cell><fo:table-cell border='solid 0.5pt'><fo:block text-align='end'>")
			  .append(i * i).append("</fo:block></fo:table-cell></fo:table-row>");
		return sb.append("</fo:table-body></fo:table></fo:flow></fo:page-sequence></fo:root>").toString();
	}

	static long job(FopFactory ff, int n) throws Exception {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		Fop fop = ff.newFop(MimeConstants.MIME_PDF, out);
		Transformer t = TransformerFactory.newInstance().newTransformer();
		Result res = new SAXResult(fop.getDefaultHandler());
		t.transform(new StreamSource(new StringReader(fo(n))), res);
		FormattingResults fr = fop.getResults();
		// The PDF holds a creation date; the page count and layout are what is deterministic.
		return fr.getPageCount() * 1000000L + fr.getPageSequences().size() * 1000L + n;
	}

	static long traced(FopFactory ff, int n) throws Exception {
		return job(ff, n);
	}

	public static void main(String[] args) throws Exception {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 8;
		FopFactory ff = FopFactory.newInstance(new File(".").toURI());
		job(ff, 1);
		System.out.println("result " + traced(ff, n));
	}
}
