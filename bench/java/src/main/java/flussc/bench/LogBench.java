/*
 * Log-table benchmark driven by the official Fluss Java client, so the
 * client cost is the same whichever server it runs against
 * (bench/run_log.sh runs it against flussd and the reference in one run).
 *
 *   produce  ROWS rows of ~1 KiB (id INT, payload STRING) into a 1-bucket
 *            table: MB/s and records/s from first append to flush.
 *   scan     a 50-column table (ints, doubles, strings) of ROWS rows read
 *            from the beginning, all columns vs 5 columns (projection pushed
 *            to the server): rows/s.
 *   latency  one row appended and flushed, polled by a subscribed scanner:
 *            append-to-poll p50/p99 over N round trips.
 *
 * Prints one JSON object per workload on stdout.
 * Usage: java flussc.bench.LogBench HOST:PORT produce|wide-load|scan-all|scan-5|latency N
 */
package flussc.bench;

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
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

public final class LogBench {
    static final String DB = "bench";
    static final int WIDE_COLUMNS = 50;

    static Admin admin;
    static Connection conn;

    static TablePath fresh(String name, Schema schema, int buckets) throws Exception {
        TablePath path = TablePath.of(DB, name);
        admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
        admin.createTable(path, TableDescriptor.builder().schema(schema).distributedBy(buckets).build(),
                false).get(60, TimeUnit.SECONDS);
        return path;
    }

    static void produce(int rows) throws Exception {
        Schema schema = Schema.newBuilder().column("id", DataTypes.INT())
                .column("payload", DataTypes.STRING()).build();
        TablePath path = fresh("produce", schema, 1);
        char[] chars = new char[1020];
        Arrays.fill(chars, 'x');
        BinaryString payload = BinaryString.fromString(new String(chars));
        try (Table table = conn.getTable(path)) {
            AppendWriter w = table.newAppend().createWriter();
            long t0 = System.nanoTime();
            for (int i = 0; i < rows; i++) {
                GenericRow r = new GenericRow(2);
                r.setField(0, i);
                r.setField(1, payload);
                w.append(r);
            }
            w.flush();
            double s = (System.nanoTime() - t0) / 1e9;
            double mb = rows * 1024.0 / (1024 * 1024);
            System.out.printf("{\"workload\":\"produce\",\"rows\":%d,\"seconds\":%.3f,\"mb_per_s\":%.1f,"
                    + "\"records_per_s\":%.0f}%n", rows, s, mb / s, rows / s);
        }
    }

    static int scanAll(Table table, int rows, int[] projection) throws Exception {
        LogScanner sc = projection == null ? table.newScan().createLogScanner()
                : table.newScan().project(projection).createLogScanner();
        sc.subscribeFromBeginning(0);
        int seen = 0;
        long deadline = System.currentTimeMillis() + 300_000;
        while (seen < rows && System.currentTimeMillis() < deadline) {
            ScanRecords recs = sc.poll(Duration.ofMillis(500));
            seen += recs.count();
        }
        sc.close();
        return seen;
    }

    static void wideLoad(int rows) throws Exception {
        Schema.Builder b = Schema.newBuilder();
        for (int c = 0; c < WIDE_COLUMNS; c++) {
            switch (c % 3) {
                case 0: b.column("c" + c, DataTypes.BIGINT()); break;
                case 1: b.column("c" + c, DataTypes.DOUBLE()); break;
                default: b.column("c" + c, DataTypes.STRING()); break;
            }
        }
        TablePath path = fresh("wide", b.build(), 1);
        try (Table table = conn.getTable(path)) {
            AppendWriter w = table.newAppend().createWriter();
            for (int i = 0; i < rows; i++) {
                GenericRow r = new GenericRow(WIDE_COLUMNS);
                for (int c = 0; c < WIDE_COLUMNS; c++) {
                    switch (c % 3) {
                        case 0: r.setField(c, (long) i * c); break;
                        case 1: r.setField(c, i * 0.25 + c); break;
                        default: r.setField(c, BinaryString.fromString("value-" + i + "-" + c)); break;
                    }
                }
                w.append(r);
            }
            w.flush();
        }
    }

    /* Bytes this JVM has read through read() calls (sockets, during a scan). */
    static long readBytes() throws Exception {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/io"))) {
            if (line.startsWith("rchar:")) return Long.parseLong(line.substring(6).trim());
        }
        return -1;
    }

    static void wideScan(int rows, boolean projected) throws Exception {
        try (Table table = conn.getTable(TablePath.of(DB, "wide"))) {
            int[] proj = projected ? new int[] {0, 1, 2, 3, 4} : null;
            long r0 = readBytes();
            long t0 = System.nanoTime();
            int seen = scanAll(table, rows, proj);
            double s = (System.nanoTime() - t0) / 1e9;
            long r1 = readBytes();
            System.out.printf("{\"workload\":\"scan\",\"columns\":%d,\"rows\":%d,\"seconds\":%.3f,"
                    + "\"rows_per_s\":%.0f,\"client_read_bytes\":%d}%n", projected ? 5 : WIDE_COLUMNS,
                    seen, s, seen / s, r1 - r0);
        }
    }

    static void latency(int n) throws Exception {
        Schema schema = Schema.newBuilder().column("id", DataTypes.INT())
                .column("sent_ns", DataTypes.BIGINT()).build();
        TablePath path = fresh("latency", schema, 1);
        try (Table table = conn.getTable(path)) {
            AppendWriter w = table.newAppend().createWriter();
            LogScanner sc = table.newScan().createLogScanner();
            sc.subscribeFromBeginning(0);
            long[] lat = new long[n];
            for (int i = 0; i < n + 20; i++) {
                GenericRow r = new GenericRow(2);
                r.setField(0, i);
                long t0 = System.nanoTime();
                r.setField(1, t0);
                w.append(r);
                w.flush();
                boolean got = false;
                while (!got) {
                    for (ScanRecord rec : sc.poll(Duration.ofMillis(1000))) {
                        if (rec.getRow().getInt(0) == i) got = true;
                    }
                }
                if (i >= 20) lat[i - 20] = System.nanoTime() - t0; /* first 20: warm-up */
            }
            sc.close();
            Arrays.sort(lat);
            System.out.printf("{\"workload\":\"latency\",\"n\":%d,\"p50_ms\":%.2f,\"p99_ms\":%.2f}%n",
                    n, lat[n / 2] / 1e6, lat[(int) (n * 0.99)] / 1e6);
        }
    }

    public static void main(String[] args) throws Exception {
        Configuration c = new Configuration();
        c.setString("bootstrap.servers", args[0]);
        conn = ConnectionFactory.createConnection(c);
        admin = conn.getAdmin();
        admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
        int n = Integer.parseInt(args[2]);
        switch (args[1]) {
            case "produce": produce(n); break;
            case "wide-load": wideLoad(n); break;
            case "scan-all": wideScan(n, false); break;
            case "scan-5": wideScan(n, true); break;
            case "latency": latency(n); break;
            default: throw new IllegalArgumentException(args[1]);
        }
        conn.close();
    }
}
