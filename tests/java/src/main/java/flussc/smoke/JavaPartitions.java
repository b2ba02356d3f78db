/*
 * Partitioned log table through the official Java client: the writer
 * creates the partitions it needs (GET_METADATA answers 36, the client calls
 * CREATE_PARTITION), rows are read back per partition, a dropped partition
 * disappears from listPartitionInfos.
 *
 * Usage: java flussc.smoke.JavaPartitions HOST:PORT
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.PartitionSpec;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

public final class JavaPartitions {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA PARTITIONS FAILED: " + what);
            System.exit(1);
        }
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        String[] days = {"2026-01-01", "2026-01-02", "2026-01-03"};
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            admin.createDatabase("java_part", DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
            TablePath path = TablePath.of("java_part", "events");
            admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
            Schema schema = Schema.newBuilder().column("id", DataTypes.INT())
                    .column("dt", DataTypes.STRING()).build();
            admin.createTable(path, TableDescriptor.builder().schema(schema).distributedBy(2)
                    .partitionedBy("dt").build(), false).get(60, TimeUnit.SECONDS);
            try (Table table = conn.getTable(path)) {
                AppendWriter w = table.newAppend().createWriter();
                for (int i = 0; i < 300; i++) {
                    GenericRow r = new GenericRow(2);
                    r.setField(0, i);
                    r.setField(1, BinaryString.fromString(days[i % 3]));
                    w.append(r);
                }
                w.flush();
                List<PartitionInfo> infos = admin.listPartitionInfos(path).get(60, TimeUnit.SECONDS);
                TreeMap<String, Long> ids = new TreeMap<>();
                for (PartitionInfo p : infos) ids.put(p.getPartitionName(), p.getPartitionId());
                check(ids.keySet().equals(new java.util.TreeSet<>(java.util.Arrays.asList(days))),
                        "partitions created by the writer: " + ids);
                for (int d = 0; d < 3; d++) {
                    LogScanner sc = table.newScan().createLogScanner();
                    long pid = ids.get(days[d]);
                    sc.subscribeFromBeginning(pid, 0);
                    sc.subscribeFromBeginning(pid, 1);
                    int n = 0;
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (n < 100 && System.currentTimeMillis() < deadline) {
                        for (ScanRecord rec : sc.poll(Duration.ofMillis(500))) {
                            check(rec.getRow().getString(1).toString().equals(days[d]),
                                    "row of another partition in " + days[d]);
                            check(rec.getRow().getInt(0) % 3 == d, "row id in " + days[d]);
                            n++;
                        }
                    }
                    sc.close();
                    check(n == 100, days[d] + ": read " + n + " of 100 rows");
                }
                admin.dropPartition(path, new PartitionSpec(Collections.singletonMap("dt", days[0])),
                        false).get(60, TimeUnit.SECONDS);
                check(admin.listPartitionInfos(path).get(60, TimeUnit.SECONDS).size() == 2,
                        "a dropped partition is gone");
            }
            admin.dropTable(path, false).get(60, TimeUnit.SECONDS);
            System.out.println("JAVA PARTITIONS OK against " + args[0]);
        } catch (Throwable t) {
            System.err.println("JAVA PARTITIONS FAILED with " + t);
            t.printStackTrace();
            System.exit(3);
        }
    }
}
