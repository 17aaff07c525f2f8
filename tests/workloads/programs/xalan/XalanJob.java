// Apache Xalan-J (Debian libxalan2-java), its interpretive processor (not
// the JDK's built-in XSLTC): transform a generated order list with a
// stylesheet that sorts, groups by key, sums and formats numbers.
import java.io.StringReader;
import java.io.StringWriter;

import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerException;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

import org.apache.xalan.processor.TransformerFactoryImpl;

public class XalanJob {
	static final String XSL =
		"<xsl:stylesheet version='1.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>\n" +
		"<xsl:output method='xml' indent='yes'/>\n" +
		"<xsl:key name='by-city' match='order' use='@city'/>\n" +
		"<xsl:template match='/orders'>\n" +
		" <report total='{format-number(sum(order/@amount), \"#,##0.00\")}'>\n" +
		"  <xsl:for-each select='order[generate-id() = generate-id(key(\"by-city\", @city)[1])]'>\n" +
		"   <xsl:sort select='@city'/>\n" +
		"   <city name='{@city}' n='{count(key(\"by-city\", @city))}'>\n" +
		"    <xsl:apply-templates select='key(\"by-city\", @city)'>\n" +
		"     <xsl:sort select='@amount' data-type='number' order='descending'/>\n" +
		"    </xsl:apply-templates>\n" +
		"   </city>\n" +
		"  </xsl:for-each>\n" +
		" </report>\n" +
		"</xsl:template>\n" +
		"<xsl:template match='order'>\n" +
		" <xsl:if test='position() &lt;= 3'>\n" +
		"  <top id='{@id}'><xsl:value-of select='concat(translate(item, \"abc\", \"ABC\"), \":\", @amount)'/></top>\n" +
		" </xsl:if>\n" +
		"</xsl:template>\n" +
		"</xsl:stylesheet>\n";

	static final String[] CITIES = { "Oslo", "Lyon", "Porto", "Graz", "Turku", "Gent" };

	static String input(int n) {
		StringBuilder sb = new StringBuilder("<orders>\n");
		for (int i = 0; i < n; i++)
			sb.append("<order id='o").append(i).append("' city='")
			  .append(CITIES[(i * 5) % CITIES.length]).append("' amount='")
			  .append((i * 7919) % 1000).append('.').append(i % 100)
			  .append("'><item>abc-item-").append(i % 13).append("</item></order>\n");
		return sb.append("</orders>\n").toString();
	}

	static long job(Templates t, int n) throws TransformerException {
		Transformer tr = t.newTransformer();
		StringWriter out = new StringWriter();
		tr.transform(new StreamSource(new StringReader(input(n))), new StreamResult(out));
		return out.toString().hashCode() * 1000L + out.getBuffer().length();
	}

	static long traced(Templates t, int n) throws TransformerException {
		return job(t, n);
	}

	public static void main(String[] args) throws TransformerException {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 60;
		Templates t = new TransformerFactoryImpl().newTemplates(
			new StreamSource(new StringReader(XSL)));
		job(t, 5);
		System.out.println("result " + traced(t, n));
	}
}
