/*
 * Reads a log table through the official Java client 0.9.1 from the
 * beginning and checks its BIGINT first column holds exactly 0..N-1 — for
 * tables another client wrote (e.g. pyfluss with table.statistics.columns,
 * whose batches the server must send a 0.9.1 reader as magic 0).
 *
 * Usage: java flussc.smoke.JavaReadIds HOST:PORT DATABASE TABLE N [--project]
 * With --project only the first column is fetched (the server prunes).
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

import java.time.Duration;
import java.util.BitSet;

public final class JavaReadIds {
    public static void main(String[] args) {
        try {
            Configuration conf = new Configuration();
            conf.setString("bootstrap.servers", args[0]);
            TablePath path = TablePath.of(args[1], args[2]);
            int n = Integer.parseInt(args[3]);
            boolean project = args.length > 4 && args[4].equals("--project");
            try (Connection conn = ConnectionFactory.createConnection(conf);
                    Table table = conn.getTable(path)) {
                int buckets = table.getTableInfo().getNumBuckets();
                LogScanner scanner = project ? table.newScan().project(new int[] {0}).createLogScanner()
                        : table.newScan().createLogScanner();
                for (int b = 0; b < buckets; b++) {
                    scanner.subscribeFromBeginning(b);
                }
                BitSet seen = new BitSet(n);
                int rows = 0;
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (rows < n && System.nanoTime() < deadline) {
                    ScanRecords recs = scanner.poll(Duration.ofMillis(500));
                    for (ScanRecord r : recs) {
                        long id = r.getRow().getLong(0);
                        if (id < 0 || id >= n || seen.get((int) id)) {
                            System.out.println("FAIL: unexpected or repeated id " + id);
                            System.exit(1);
                        }
                        if (!project && r.getRow().isNullAt(1)) {
                            System.out.println("FAIL: null name at id " + id);
                            System.exit(1);
                        }
                        seen.set((int) id);
                        rows++;
                    }
                }
                scanner.close();
                if (rows != n) {
                    System.out.println("FAIL: read " + rows + " of " + n + " rows");
                    System.exit(1);
                }
                System.out.println("ok: " + n + " ids read" + (project ? " (projected)" : ""));
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
    }
}
