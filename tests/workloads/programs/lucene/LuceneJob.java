// Apache Lucene 4.10 (Debian liblucene4.10-java): index a generated corpus
// in a RAMDirectory with the standard analyzer, then run term, boolean and
// parsed phrase queries and sum the hits.
import java.io.IOException;

import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.ParseException;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.RAMDirectory;
import org.apache.lucene.util.Version;

public class LuceneJob {
	static final String[] WORDS = { "alpha", "bravo", "charlie", "delta", "echo",
		"foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike",
		"november", "oscar", "papa", "quebec", "romeo", "sierra", "tango" };

	static String text(int doc, int len) {
		StringBuilder sb = new StringBuilder();
		int x = doc * 2654435 + 7;
		for (int i = 0; i < len; i++) {
			x = x * 1103515245 + 12345;
			sb.append(WORDS[((x >>> 16) & 0x7fff) % WORDS.length]).append(' ');
		}
		return sb.toString();
	}

	static long job(int docs) throws IOException, ParseException {
		StandardAnalyzer an = new StandardAnalyzer();
		RAMDirectory dir = new RAMDirectory();
		IndexWriterConfig cfg = new IndexWriterConfig(Version.LUCENE_4_10_4, an);
		try (IndexWriter w = new IndexWriter(dir, cfg)) {
			for (int d = 0; d < docs; d++) {
				Document doc = new Document();
				doc.add(new StringField("id", "d" + d, Field.Store.YES));
				doc.add(new TextField("body", text(d, 12 + d % 9), Field.Store.NO));
				w.addDocument(doc);
			}
		}
		long sum = 0;
		try (DirectoryReader r = DirectoryReader.open(dir)) {
			IndexSearcher s = new IndexSearcher(r);
			BooleanQuery bq = new BooleanQuery();
			bq.add(new TermQuery(new Term("body", "alpha")), BooleanClause.Occur.MUST);
			bq.add(new TermQuery(new Term("body", "tango")), BooleanClause.Occur.SHOULD);
			bq.add(new TermQuery(new Term("body", "mike")), BooleanClause.Occur.MUST_NOT);
			QueryParser qp = new QueryParser("body", an);
			org.apache.lucene.search.Query[] qs = {
				new TermQuery(new Term("body", "delta")), bq,
				qp.parse("\"echo foxtrot\" OR (kilo AND lima)") };
			for (org.apache.lucene.search.Query q : qs) {
				TopDocs td = s.search(q, 10);
				sum = sum * 31 + td.totalHits;
				for (ScoreDoc sd : td.scoreDocs)
					sum = sum * 7 + s.doc(sd.doc).get("id").hashCode();
			}
		}
		return sum;
	}

	static long traced(int docs) throws IOException, ParseException {
		return job(docs);
	}

	public static void main(String[] args) throws Exception {
		int docs = args.length > 0 ? Integer.parseInt(args[0]) : 60;
		job(5);
		System.out.println("result " + traced(docs));
	}
}
