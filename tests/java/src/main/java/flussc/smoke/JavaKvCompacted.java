/*
 * A primary-key table whose changelog is COMPACTED (table.log.format, as
 * 0.9.1 allows for a COMPACTED kv format), through the official Java
 * client: upserts, updates and deletes of rows with an ARRAY<STRING> and
 * a ROW column; the changelog read from the start has the exact change
 * types and values, nested ones included (an ARROW changelog of ours
 * cannot carry them yet); lookups agree with the changelog folded.
 *
 * With the argument INDEXED the table is INDEXED for both its kv and its
 * log format (the other row-format pairing 0.9.1 allows).
 *
 * Usage: java flussc.smoke.JavaKvCompacted HOST:PORT [INDEXED]
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericArray;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalArray;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

public final class JavaKvCompacted {
    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA KV COMPACTED FAILED: " + what);
            System.exit(1);
        }
    }

    static GenericRow row(int id, String name, String[] tags, int inner) {
        GenericRow r = new GenericRow(4);
        r.setField(0, id);
        r.setField(1, BinaryString.fromString(name));
        if (tags != null) {
            Object[] t = new Object[tags.length];
            for (int i = 0; i < tags.length; i++) t[i] = tags[i] == null ? null : BinaryString.fromString(tags[i]);
            r.setField(2, new GenericArray(t));
        }
        GenericRow nested = new GenericRow(2);
        nested.setField(0, inner);
        nested.setField(1, BinaryString.fromString("in" + inner));
        r.setField(3, nested);
        return r;
    }

    static String show(InternalRow r) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.getInt(0)).append('|').append(r.getString(1)).append('|');
        if (r.isNullAt(2)) sb.append("null");
        else {
            InternalArray a = r.getArray(2);
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) xs.add(a.isNullAt(i) ? "null" : a.getString(i).toString());
            sb.append(xs);
        }
        InternalRow n = r.getRow(3, 2);
        sb.append('|').append(n.getInt(0)).append(',').append(n.getString(1));
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        String format = args.length > 1 ? args[1] : "COMPACTED";
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            admin.createDatabase("java_kv", DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
            TablePath path = TablePath.of("java_kv", format.toLowerCase() + "_log");
            admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
            Schema schema = Schema.newBuilder()
                    .column("id", DataTypes.INT())
                    .column("name", DataTypes.STRING())
                    .column("tags", DataTypes.ARRAY(DataTypes.STRING()))
                    .column("inner", DataTypes.ROW(DataTypes.FIELD("n", DataTypes.INT()),
                            DataTypes.FIELD("s", DataTypes.STRING())))
                    .primaryKey("id")
                    .build();
            TableDescriptor.Builder td = TableDescriptor.builder().schema(schema).distributedBy(1)
                    .property("table.log.format", format);
            if (format.equals("INDEXED")) td.property("table.kv.format", "INDEXED");
            admin.createTable(path, td.build(), false)
                    .get(60, TimeUnit.SECONDS);
            List<String> want = new ArrayList<>();
            Map<Integer, String> state = new TreeMap<>();
            try (Table table = conn.getTable(path)) {
                UpsertWriter w = table.newUpsert().createWriter();
                GenericRow a1 = row(1, "a", new String[] {"x", null, "y"}, 10);
                GenericRow b1 = row(2, "b", null, 20);
                GenericRow a2 = row(1, "a2", new String[] {}, 11);
                w.upsert(a1);
                w.upsert(b1);
                w.upsert(a2);
                w.delete(b1);
                w.flush();
                want.add("+I " + show(a1));
                want.add("+I " + show(b1));
                want.add("-U " + show(a1));
                want.add("+U " + show(a2));
                want.add("-D " + show(b1));
                List<String> got = new ArrayList<>();
                try (LogScanner s = table.newScan().createLogScanner()) {
                    s.subscribeFromBeginning(0);
                    long deadline = System.currentTimeMillis() + 60_000;
                    while (got.size() < want.size()) {
                        check(System.currentTimeMillis() < deadline, "changelog so far: " + got);
                        ScanRecords recs = s.poll(Duration.ofMillis(500));
                        for (ScanRecord r : recs) {
                            got.add(r.getChangeType().shortString() + " " + show(r.getRow()));
                            int id = r.getRow().getInt(0);
                            if (r.getChangeType().shortString().equals("-D")) state.remove(id);
                            else if (!r.getChangeType().shortString().equals("-U")) state.put(id, show(r.getRow()));
                        }
                    }
                }
                check(got.equals(want), "changelog " + got + " != " + want);
                Lookuper lk = table.newLookup().createLookuper();
                for (int id = 1; id <= 2; id++) {
                    GenericRow key = new GenericRow(1);
                    key.setField(0, id);
                    InternalRow r = lk.lookup(key).get(60, TimeUnit.SECONDS).getSingletonRow();
                    String have = r == null ? null : show(r);
                    check(have == null ? !state.containsKey(id) : have.equals(state.get(id)),
                            "lookup " + id + ": " + have + " vs changelog " + state.get(id));
                }
            }
            System.out.println("JAVA KV " + format + " OK");
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
