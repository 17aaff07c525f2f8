// H2 (Debian libh2-java): an in-memory database; create a table with an
// index, insert rows through a prepared statement, then an aggregate query
// with GROUP BY and an indexed range query.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public class H2Job {
	static long job(String db, int rows) throws SQLException {
		long sum = 0;
		try (Connection c = DriverManager.getConnection("jdbc:h2:mem:" + db, "sa", "")) {
			try (Statement s = c.createStatement()) {
				s.execute("CREATE TABLE item(id INT PRIMARY KEY, grp INT, name VARCHAR(40), price DECIMAL(10,2))");
				s.execute("CREATE INDEX item_grp ON item(grp)");
			}
			try (PreparedStatement p = c.prepareStatement("INSERT INTO item VALUES(?, ?, ?, ?)")) {
				for (int i = 0; i < rows; i++) {
					p.setInt(1, i);
					p.setInt(2, (i * 7) % 10);
					p.setString(3, "item-" + Integer.toString(i * 2654435761L > 0 ? i : -i, 36));
					p.setBigDecimal(4, java.math.BigDecimal.valueOf((i * 37) % 1000, 2));
					p.executeUpdate();
				}
			}
			try (Statement s = c.createStatement();
			     ResultSet r = s.executeQuery("SELECT grp, COUNT(*), SUM(price) FROM item GROUP BY grp ORDER BY grp")) {
				while (r.next())
					sum = sum * 31 + r.getInt(1) * 1000 + r.getInt(2) + r.getBigDecimal(3).unscaledValue().longValue();
			}
			try (PreparedStatement p = c.prepareStatement("SELECT name FROM item WHERE grp = ? AND id BETWEEN ? AND ? ORDER BY id")) {
				p.setInt(1, 3);
				p.setInt(2, rows / 4);
				p.setInt(3, rows / 2);
				try (ResultSet r = p.executeQuery()) {
					while (r.next())
						sum = sum * 17 + r.getString(1).hashCode();
				}
			}
		}
		return sum;
	}

	static long traced(int rows) throws SQLException {
		return job("traced", rows);
	}

	public static void main(String[] args) throws SQLException {
		int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200;
		job("warm", 10);
		System.out.println("result " + traced(rows));
	}
}
