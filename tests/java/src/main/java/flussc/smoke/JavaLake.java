/*
 * A lake table through the official Java client, against a server started
 * with datalake.format=iceberg (tests/interop/test_java_lake.py):
 *
 *   create DB      creates DB.events (log, 3 buckets, id as bucket key,
 *                  table.datalake.enabled, freshness 500 ms); checks that
 *                  its TableInfo shows table.datalake.format=iceberg and
 *                  the lake options as table.datalake.iceberg.* (what the
 *                  Flink connector opens the lake catalog from); writes
 *                  300 rows (the Java client buckets them with Iceberg's
 *                  bucket transform)
 *   snapshot DB N  waits until getLatestLakeSnapshot's bucket offsets add
 *                  up to N; checks getReadableLakeSnapshot and
 *                  getLakeSnapshot(id) answer the same; prints
 *                  "SNAPSHOT <id>" and "OFFSET <bucket> <offset>" lines
 *
 * Prints "JAVA LAKE <STEP> OK". Exit 0 on success, 1 when a check fails,
 * 2 on bad usage, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.metadata.LakeSnapshot;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

public final class JavaLake {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA LAKE FAILED: " + what);
            System.exit(1);
        }
    }

    static void create(Admin admin, Connection conn, String db) throws Exception {
        admin.createDatabase(db, DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
        TablePath path = TablePath.of(db, "events");
        Schema schema = Schema.newBuilder()
                .column("id", DataTypes.BIGINT().copy(false))
                .column("name", DataTypes.STRING())
                .build();
        TableDescriptor d = TableDescriptor.builder()
                .schema(schema)
                .distributedBy(3, "id")
                .property("table.datalake.enabled", "true")
                .property("table.datalake.freshness", "500ms")
                .build();
        admin.createTable(path, d, false).get(60, TimeUnit.SECONDS);
        TableInfo info = admin.getTableInfo(path).get(60, TimeUnit.SECONDS);
        Map<String, String> props = info.getProperties().toMap();
        check("iceberg".equals(props.get("table.datalake.format")), "format: " + props);
        check("hadoop".equals(props.get("table.datalake.iceberg.type")), "type: " + props);
        check(props.get("table.datalake.iceberg.warehouse") != null, "warehouse: " + props);
        System.out.println("WAREHOUSE " + props.get("table.datalake.iceberg.warehouse"));
        try (Table table = conn.getTable(path)) {
            AppendWriter w = table.newAppend().createWriter();
            for (long i = 0; i < 300; i++)
                w.append(GenericRow.of(i, BinaryString.fromString("n" + i)));
            w.flush();
        }
        System.out.println("JAVA LAKE CREATE OK");
    }

    static long total(LakeSnapshot s) {
        long n = 0;
        for (long o : s.getTableBucketsOffset().values()) n += o;
        return n;
    }

    static void snapshot(Admin admin, String db, long want) throws Exception {
        TablePath path = TablePath.of(db, "events");
        long deadline = System.currentTimeMillis() + 60_000;
        LakeSnapshot s = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                s = admin.getLatestLakeSnapshot(path).get(60, TimeUnit.SECONDS);
                if (total(s) >= want) break;
            } catch (Exception e) {
                // LakeTableSnapshotNotExistException until the first round commits
            }
            Thread.sleep(200);
        }
        check(s != null && total(s) == want, "lake offsets " + s + ", want " + want);
        LakeSnapshot readable = admin.getReadableLakeSnapshot(path).get(60, TimeUnit.SECONDS);
        check(readable.getSnapshotId() == s.getSnapshotId(), "readable " + readable);
        LakeSnapshot byId =
                admin.getLakeSnapshot(path, s.getSnapshotId()).get(60, TimeUnit.SECONDS);
        check(byId.getTableBucketsOffset().equals(s.getTableBucketsOffset()), "by id " + byId);
        System.out.println("SNAPSHOT " + s.getSnapshotId());
        Map<Integer, Long> byBucket = new TreeMap<>();
        for (Map.Entry<TableBucket, Long> e : s.getTableBucketsOffset().entrySet())
            byBucket.put(e.getKey().getBucket(), e.getValue());
        for (Map.Entry<Integer, Long> e : byBucket.entrySet())
            System.out.println("OFFSET " + e.getKey() + " " + e.getValue());
        System.out.println("JAVA LAKE SNAPSHOT OK");
    }

    public static void main(String[] args) {
        if (args.length < 3) {
            System.err.println("usage: JavaLake HOST:PORT create|snapshot DB [N]");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Admin admin = conn.getAdmin()) {
            switch (args[1]) {
                case "create":
                    create(admin, conn, args[2]);
                    break;
                case "snapshot":
                    snapshot(admin, args[2], Long.parseLong(args[3]));
                    break;
                default:
                    System.err.println("unknown step " + args[1]);
                    System.exit(2);
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
