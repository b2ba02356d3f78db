/*
 * Log tables through the official Fluss Java client: for each log format
 * (ARROW, INDEXED, COMPACTED) create a 2-bucket log table, append rows with
 * nulls, scan everything back from the beginning and compare; optionally
 * with a projection (ARROW only: the server prunes columns).
 *
 * Usage: java flussc.smoke.JavaLog HOST:PORT FORMAT[,FORMAT...] [--project]
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class JavaLog {
    static final String DB = "java_log";
    static final int ROWS = 500;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA LOG FAILED: " + what);
            System.exit(1);
        }
    }

    static String expectName(int i) {
        return i % 7 == 0 ? null : "name-" + i;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: JavaLog HOST:PORT FORMAT[,FORMAT...] [--project]");
            System.exit(2);
        }
        boolean project = args.length > 2 && args[2].equals("--project");
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
            for (String format : args[1].split(",")) {
                TablePath path = TablePath.of(DB, "log_" + format.toLowerCase() + (project ? "_p" : ""));
                admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
                Schema schema = Schema.newBuilder()
                        .column("id", DataTypes.INT())
                        .column("name", DataTypes.STRING())
                        .column("amount", DataTypes.BIGINT())
                        .column("score", DataTypes.DOUBLE())
                        .build();
                TableDescriptor td = TableDescriptor.builder().schema(schema).distributedBy(2)
                        .property("table.log.format", format).build();
                admin.createTable(path, td, false).get(60, TimeUnit.SECONDS);
                try (Table table = conn.getTable(path)) {
                    AppendWriter writer = table.newAppend().createWriter();
                    for (int i = 0; i < ROWS; i++) {
                        GenericRow row = new GenericRow(4);
                        row.setField(0, i);
                        String n = expectName(i);
                        row.setField(1, n == null ? null : BinaryString.fromString(n));
                        row.setField(2, i % 5 == 0 ? null : (long) i * 1000L);
                        row.setField(3, i * 0.5);
                        writer.append(row);
                    }
                    writer.flush();
                    int[] cols = project ? new int[] {3, 0} : null;
                    LogScanner scanner = cols == null ? table.newScan().createLogScanner()
                            : table.newScan().project(cols).createLogScanner();
                    scanner.subscribeFromBeginning(0);
                    scanner.subscribeFromBeginning(1);
                    Map<Integer, InternalRow> seen = new HashMap<>();
                    long deadline = System.currentTimeMillis() + 60_000;
                    while (seen.size() < ROWS && System.currentTimeMillis() < deadline) {
                        ScanRecords recs = scanner.poll(Duration.ofMillis(500));
                        for (ScanRecord r : recs) {
                            InternalRow row = r.getRow();
                            int id = project ? row.getInt(1) : row.getInt(0);
                            check(!seen.containsKey(id), format + ": row " + id + " seen twice");
                            seen.put(id, row);
                        }
                    }
                    scanner.close();
                    check(seen.size() == ROWS, format + ": read " + seen.size() + " of " + ROWS);
                    for (int i = 0; i < ROWS; i++) {
                        InternalRow row = seen.get(i);
                        if (project) {
                            check(row.getFieldCount() == 2, "projected row has 2 fields");
                            check(row.getDouble(0) == i * 0.5, format + ": score of " + i);
                            continue;
                        }
                        String n = expectName(i);
                        check(n == null ? row.isNullAt(1) : row.getString(1).toString().equals(n),
                                format + ": name of " + i);
                        check(i % 5 == 0 ? row.isNullAt(2) : row.getLong(2) == (long) i * 1000L,
                                format + ": amount of " + i);
                        check(row.getDouble(3) == i * 0.5, format + ": score of " + i);
                    }
                    System.out.println("  ok: " + format + (project ? " projected" : "") + " "
                            + ROWS + " rows written and read back");
                }
                admin.dropTable(path, false).get(60, TimeUnit.SECONDS);
            }
            System.out.println("JAVA LOG OK against " + args[0]);
        } catch (Throwable t) {
            System.err.println("JAVA LOG FAILED with " + t);
            t.printStackTrace();
            System.exit(3);
        }
    }
}
