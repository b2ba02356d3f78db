/*
 * Auto-increment columns and lookups with insertIfNotExists through the
 * official Fluss Java client (pyfluss has no insertIfNotExists).
 *
 *   create  creates java_autoinc.t (id INT PK, name STRING, uid BIGINT
 *           auto-increment, 2 buckets, cache-size 10), upserts ids 0..19
 *           naming (id, name), updates id 0, inserts ids 100..109 with
 *           lookup().enableInsertIfNotExists(), reads the changelog
 *   more    after a restart: inserts ids 200..209 (insertIfNotExists) and
 *           300..309 (upsert)
 *
 * Both print "UID <id> <uid>" for every row they can see, for the caller
 * to compare across the restart. Exit 0 ok, 1 a check failed, 3 an
 * unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.record.ChangeType;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

public final class JavaAutoInc {
    static final TablePath PATH = TablePath.of("java_autoinc", "t");

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA AUTOINC FAILED: " + what);
            System.exit(1);
        }
    }

    static InternalRow get(Lookuper lk, int id) throws Exception {
        return lk.lookup(GenericRow.of(id)).get(60, TimeUnit.SECONDS).getSingletonRow();
    }

    static void upsert(Table table, int from, int to, String prefix) throws Exception {
        UpsertWriter w = table.newUpsert().partialUpdate("id", "name").createWriter();
        for (int i = from; i < to; i++)
            w.upsert(GenericRow.of(i, BinaryString.fromString(prefix + i), null));
        w.flush();
    }

    /* uid of every id, checked present and distinct. */
    static Map<Integer, Long> uids(Lookuper lk, int[][] ranges) throws Exception {
        Map<Integer, Long> out = new HashMap<>();
        Set<Long> seen = new HashSet<>();
        for (int[] r : ranges) {
            for (int i = r[0]; i < r[1]; i++) {
                InternalRow row = get(lk, i);
                check(row != null, "row " + i + " missing");
                check(!row.isNullAt(2), "uid of " + i + " is null");
                long uid = row.getLong(2);
                check(uid >= 1 && seen.add(uid), "uid " + uid + " of " + i + " repeats");
                out.put(i, uid);
                System.out.println("UID " + i + " " + uid);
            }
        }
        return out;
    }

    static void create(Connection conn) throws Exception {
        Admin admin = conn.getAdmin();
        admin.createDatabase(PATH.getDatabaseName(), DatabaseDescriptor.EMPTY, true)
                .get(60, TimeUnit.SECONDS);
        admin.dropTable(PATH, true).get(60, TimeUnit.SECONDS);
        Schema schema = Schema.newBuilder()
                .column("id", DataTypes.INT())
                .column("name", DataTypes.STRING())
                .column("uid", DataTypes.BIGINT())
                .primaryKey("id")
                .enableAutoIncrement("uid")
                .build();
        TableDescriptor td = TableDescriptor.builder().schema(schema).distributedBy(2)
                .property("table.auto-increment.cache-size", "10").build();
        admin.createTable(PATH, td, false).get(60, TimeUnit.SECONDS);
        check(admin.getTableInfo(PATH).get(60, TimeUnit.SECONDS).getSchema()
                .getAutoIncrementColumnNames().contains("uid"), "schema lost the column");
        try (Table table = conn.getTable(PATH)) {
            upsert(table, 0, 20, "n");
            Lookuper lk = table.newLookup().createLookuper();
            Map<Integer, Long> before = uids(lk, new int[][] {{0, 20}});
            upsert(table, 0, 1, "again");
            InternalRow zero = get(lk, 0);
            check(zero.getString(1).toString().equals("again0"), "update of 0 lost");
            check(zero.getLong(2) == before.get(0), "update changed the uid of 0");
            check(get(lk, 100) == null, "a plain lookup inserted");
            Lookuper ins = table.newLookup().enableInsertIfNotExists().createLookuper();
            Set<Long> old = new HashSet<>(before.values());
            for (int i = 100; i < 110; i++) {
                InternalRow row = get(ins, i);
                check(row != null && row.getInt(0) == i, "insertIfNotExists gave no row " + i);
                check(row.isNullAt(1), "inserted row " + i + " has a name");
                check(!row.isNullAt(2) && !old.contains(row.getLong(2)), "uid of inserted " + i);
                InternalRow again = get(ins, i);
                check(again.getLong(2) == row.getLong(2), "second insert lookup changed " + i);
            }
            check(get(ins, 5).getLong(2) == before.get(5), "insertIfNotExists touched 5");
            Map<Integer, Long> all = uids(lk, new int[][] {{0, 20}, {100, 110}});
            // the changelog: one +I per row, carrying its uid
            LogScanner sc = table.newScan().createLogScanner();
            sc.subscribeFromBeginning(0);
            sc.subscribeFromBeginning(1);
            Map<Integer, Long> inserted = new HashMap<>();
            long deadline = System.currentTimeMillis() + 60_000;
            while (inserted.size() < all.size() && System.currentTimeMillis() < deadline) {
                for (ScanRecord r : sc.poll(Duration.ofMillis(500))) {
                    if (r.getChangeType() != ChangeType.INSERT) continue;
                    int id = r.getRow().getInt(0);
                    check(!inserted.containsKey(id), "+I twice for " + id);
                    inserted.put(id, r.getRow().getLong(2));
                }
            }
            sc.close();
            check(inserted.equals(all), "changelog +I " + inserted + " != rows " + all);
        }
        System.out.println("JAVA AUTOINC CREATE OK");
    }

    static void more(Connection conn) throws Exception {
        try (Table table = conn.getTable(PATH)) {
            Lookuper ins = table.newLookup().enableInsertIfNotExists().createLookuper();
            for (int i = 200; i < 210; i++) check(get(ins, i) != null, "no row " + i);
            upsert(table, 300, 310, "m");
            uids(table.newLookup().createLookuper(),
                    new int[][] {{0, 20}, {100, 110}, {200, 210}, {300, 310}});
        }
        System.out.println("JAVA AUTOINC MORE OK");
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: JavaAutoInc HOST:PORT create|more");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            if (args[1].equals("create")) create(conn);
            else more(conn);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
