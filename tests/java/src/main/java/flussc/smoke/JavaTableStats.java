/*
 * Admin.getTableStats through the official Java client (GET_TABLE_STATS,
 * what fluss-flink's COUNT(*) pushdown asks in batch mode), in steps a test
 * runs around server restarts, all on the tables of database DB:
 *
 *   write DB   creates pk (3 buckets), parted (a PK table partitioned by
 *              day, 2 buckets), log (2 buckets) and wal (changelog image
 *              WAL); writes and checks pk = 160 (200 upserts, 50 updates,
 *              40 deletes of present and 10 of missing keys), parted = 45,
 *              log = 123; the wal table refused with InvalidTableException;
 *              the lake snapshot of pk: LakeTableSnapshotNotExistException
 *   check DB PK PARTED LOG   the three counts are exactly these
 *   more DB    10 new keys and 5 deletes in pk (165), one partition key
 *              deleted and one inserted in parted (45), 7 appends (130)
 *
 * Prints "JAVA TABLE STATS <STEP> OK". Exit 0 on success, 1 when a check
 * fails, 2 on bad usage, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

public final class JavaTableStats {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA TABLE STATS FAILED: " + what);
            System.exit(1);
        }
    }

    static long rows(Admin admin, TablePath path) throws Exception {
        return admin.getTableStats(path).get(60, TimeUnit.SECONDS).getRowCount();
    }

    /** The simple class names of t and its causes. */
    static String causes(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (; t != null; t = t.getCause()) sb.append(t.getClass().getSimpleName()).append(' ');
        return sb.toString();
    }

    static void expectFailure(CompletableFuture<?> f, String exception, String what) {
        try {
            f.get(60, TimeUnit.SECONDS);
            check(false, what + ": no exception");
        } catch (Exception e) {
            check(causes(e).contains(exception), what + ": " + causes(e) + e);
        }
    }

    static GenericRow pkRow(int id, String v) {
        return GenericRow.of(id, v == null ? null : BinaryString.fromString(v));
    }

    static GenericRow partedRow(int id, String day, String v) {
        return GenericRow.of(id, BinaryString.fromString(day),
                v == null ? null : BinaryString.fromString(v));
    }

    static void create(Admin admin, TablePath path, Schema schema, TableDescriptor.Builder d)
            throws Exception {
        admin.createTable(path, d.schema(schema).build(), false).get(60, TimeUnit.SECONDS);
    }

    static void write(Connection conn, Admin admin, String db) throws Exception {
        admin.createDatabase(db, DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
        Schema kv = Schema.newBuilder().column("id", DataTypes.INT()).column("v", DataTypes.STRING())
                .primaryKey("id").build();
        Schema parted = Schema.newBuilder().column("id", DataTypes.INT())
                .column("day", DataTypes.STRING()).column("v", DataTypes.STRING())
                .primaryKey("id", "day").build();
        Schema log = Schema.newBuilder().column("id", DataTypes.INT())
                .column("v", DataTypes.STRING()).build();
        create(admin, TablePath.of(db, "pk"), kv, TableDescriptor.builder().distributedBy(3));
        create(admin, TablePath.of(db, "parted"), parted,
                TableDescriptor.builder().distributedBy(2).partitionedBy("day"));
        create(admin, TablePath.of(db, "log"), log, TableDescriptor.builder().distributedBy(2));
        create(admin, TablePath.of(db, "wal"), kv, TableDescriptor.builder().distributedBy(1)
                .property("table.changelog.image", "WAL"));
        check(rows(admin, TablePath.of(db, "pk")) == 0, "an empty table counts 0");

        try (Table t = conn.getTable(TablePath.of(db, "pk"))) {
            UpsertWriter w = t.newUpsert().createWriter();
            for (int i = 0; i < 200; i++) w.upsert(pkRow(i, "v" + i));
            w.flush();
            check(rows(admin, TablePath.of(db, "pk")) == 200, "200 upserts");
            for (int i = 0; i < 50; i++) w.upsert(pkRow(i, "again"));
            for (int i = 0; i < 200; i += 5) w.delete(pkRow(i, null));
            for (int i = 5000; i < 5010; i++) w.delete(pkRow(i, null));
            w.flush();
        }
        try (Table t = conn.getTable(TablePath.of(db, "parted"))) {
            UpsertWriter w = t.newUpsert().createWriter();
            for (int i = 0; i < 30; i++) w.upsert(partedRow(i, "d1", "x"));
            for (int i = 0; i < 20; i++) w.upsert(partedRow(i, "d2", "y"));
            for (int i = 0; i < 5; i++) w.delete(partedRow(i, "d1", null));
            w.flush();
        }
        try (Table t = conn.getTable(TablePath.of(db, "log"))) {
            AppendWriter w = t.newAppend().createWriter();
            for (int i = 0; i < 123; i++) w.append(pkRow(i, "l"));
            w.flush();
        }
        try (Table t = conn.getTable(TablePath.of(db, "wal"))) {
            UpsertWriter w = t.newUpsert().createWriter();
            w.upsert(pkRow(1, "w"));
            w.flush();
        }
        counts(admin, db, 160, 45, 123);
        expectFailure(admin.getTableStats(TablePath.of(db, "wal")), "InvalidTableException",
                "row count of a WAL changelog table");
        expectFailure(admin.getLatestLakeSnapshot(TablePath.of(db, "pk")),
                "LakeTableSnapshotNotExistException", "lake snapshot of a table without one");
    }

    static void counts(Admin admin, String db, long pk, long parted, long log) throws Exception {
        long[] got = {rows(admin, TablePath.of(db, "pk")), rows(admin, TablePath.of(db, "parted")),
            rows(admin, TablePath.of(db, "log"))};
        System.out.println("counts pk=" + got[0] + " parted=" + got[1] + " log=" + got[2]);
        check(got[0] == pk && got[1] == parted && got[2] == log,
                "want pk=" + pk + " parted=" + parted + " log=" + log);
    }

    static void more(Connection conn, Admin admin, String db) throws Exception {
        try (Table t = conn.getTable(TablePath.of(db, "pk"))) {
            UpsertWriter w = t.newUpsert().createWriter();
            for (int i = 1000; i < 1010; i++) w.upsert(pkRow(i, "new"));
            for (int i : new int[] {1, 2, 3, 4, 6, 0}) w.delete(pkRow(i, null)); /* 0: gone */
            w.flush();
        }
        try (Table t = conn.getTable(TablePath.of(db, "parted"))) {
            UpsertWriter w = t.newUpsert().createWriter();
            w.delete(partedRow(7, "d2", null));
            w.upsert(partedRow(7, "d1", "z")); /* an update */
            w.upsert(partedRow(99, "d2", "z"));
            w.flush();
        }
        try (Table t = conn.getTable(TablePath.of(db, "log"))) {
            AppendWriter w = t.newAppend().createWriter();
            for (int i = 0; i < 7; i++) w.append(pkRow(i, "m"));
            w.flush();
        }
        counts(admin, db, 165, 45, 130);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: JavaTableStats HOST:PORT write|check|more DB [PK PARTED LOG]");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        String step = args[1], db = args[2];
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            if (step.equals("write")) {
                write(conn, admin, db);
            } else if (step.equals("check") && args.length == 6) {
                counts(admin, db, Long.parseLong(args[3]), Long.parseLong(args[4]),
                        Long.parseLong(args[5]));
            } else if (step.equals("more")) {
                more(conn, admin, db);
            } else {
                System.exit(2);
            }
            System.out.println("JAVA TABLE STATS " + step.toUpperCase() + " OK against " + args[0]);
        } catch (Throwable t) {
            System.err.println("JAVA TABLE STATS FAILED with " + t);
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
