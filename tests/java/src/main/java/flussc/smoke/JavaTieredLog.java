/*
 * A log table whose older segments live in remote storage (tiered), read
 * through the official Fluss Java client from the earliest offset: the
 * server answers the old offsets with remote log fetch info and the client
 * downloads those segments itself, then goes on with the local ones. The
 * table (id BIGINT, name STRING) was written by the pytest driver
 * (tests/interop/test_tiered_log.py) with ids 0..ROWS-1 and name
 * "n<id>" followed by PAD 'x's.
 *
 * Usage: java flussc.smoke.JavaTieredLog HOST:PORT DB TABLE ROWS BUCKETS PAD
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.InternalRow;

import java.time.Duration;
import java.util.BitSet;

public final class JavaTieredLog {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA TIERED LOG FAILED: " + what);
            System.exit(1);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: JavaTieredLog HOST:PORT DB TABLE ROWS BUCKETS PAD");
            System.exit(2);
        }
        int rows = Integer.parseInt(args[3]);
        int buckets = Integer.parseInt(args[4]);
        String pad = "x".repeat(Integer.parseInt(args[5]));
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Table table = conn.getTable(TablePath.of(args[1], args[2]))) {
            LogScanner scanner = table.newScan().createLogScanner();
            for (int b = 0; b < buckets; b++) scanner.subscribeFromBeginning(b);
            BitSet seen = new BitSet(rows);
            int count = 0;
            long deadline = System.currentTimeMillis() + 90_000;
            while (count < rows && System.currentTimeMillis() < deadline) {
                ScanRecords recs = scanner.poll(Duration.ofMillis(500));
                for (ScanRecord r : recs) {
                    InternalRow row = r.getRow();
                    long id = row.getLong(0);
                    check(id >= 0 && id < rows, "unexpected id " + id);
                    check(!seen.get((int) id), "row " + id + " seen twice");
                    check(row.getString(1).toString().equals("n" + id + pad), "name of " + id);
                    seen.set((int) id);
                    count++;
                }
            }
            scanner.close();
            check(count == rows, "read " + count + " of " + rows + " rows");
            System.out.println("JAVA TIERED LOG OK: " + rows + " rows from the earliest offset");
        } catch (Throwable t) {
            System.err.println("JAVA TIERED LOG FAILED with " + t);
            t.printStackTrace();
            System.exit(3);
        }
    }
}
