/*
 * JavaNested — nested values of a primary-key table through the Java
 * client, to check libfluss's BinaryArray / BinaryMap / nested-row
 * encoding both ways (tests/interop/test_cli_nested.py):
 *
 *   JavaNested BOOTSTRAP write DB.TABLE   upserts the rows of rows() into an
 *                                         existing table of SCHEMA below
 *   JavaNested BOOTSTRAP read DB.TABLE ID...
 *                                         looks the ids up and prints one JSON
 *                                         line per row ("null" when missing)
 *
 * Table: id INT NOT NULL (PK), tags ARRAY<STRING>, m MAP<STRING, BIGINT>,
 * r ROW<x INT, s STRING>, dec ARRAY<DECIMAL(20, 3)>, ts ARRAY<TIMESTAMP(6)>,
 * ar ARRAY<ROW<q BIGINT, w STRING>>. Prints "JAVA NESTED OK" at the end.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.Decimal;
import org.apache.fluss.row.GenericArray;
import org.apache.fluss.row.GenericMap;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalArray;
import org.apache.fluss.row.InternalMap;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.row.TimestampNtz;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class JavaNested {
    static BinaryString s(String v) {
        return v == null ? null : BinaryString.fromString(v);
    }

    static GenericRow inner(long q, String w) {
        GenericRow r = new GenericRow(2);
        r.setField(0, q);
        r.setField(1, s(w));
        return r;
    }

    /* The rows both sides write (test_cli_nested.py has the same as CSV). */
    static List<GenericRow> rows() {
        List<GenericRow> out = new ArrayList<>();
        GenericRow a = new GenericRow(7);
        a.setField(0, 1);
        a.setField(1, new GenericArray(new Object[] {s("a"), null, s("a string longer than seven")}));
        Map<Object, Object> m = new LinkedHashMap<>();
        m.put(s("k"), 1L);
        m.put(s("a longer map key"), null);
        a.setField(2, new GenericMap(m));
        GenericRow r = new GenericRow(2);
        r.setField(0, 5);
        r.setField(1, s("hi"));
        a.setField(3, r);
        a.setField(4, new GenericArray(new Object[] {
            Decimal.fromBigDecimal(new BigDecimal("12345678901234567.125"), 20, 3), null,
            Decimal.fromBigDecimal(new BigDecimal("-1.500"), 20, 3)}));
        a.setField(5, new GenericArray(new Object[] {
            TimestampNtz.fromLocalDateTime(LocalDateTime.parse("2024-01-31T10:00:01.123456")),
            null}));
        a.setField(6, new GenericArray(new Object[] {inner(7, "seven"), null,
            inner(-8, "a longer string in a nested row")}));
        out.add(a);
        GenericRow b = new GenericRow(7);
        b.setField(0, 2);
        b.setField(1, new GenericArray(new Object[0]));
        b.setField(2, new GenericMap(new LinkedHashMap<>()));
        GenericRow rb = new GenericRow(2);
        rb.setField(0, null);
        rb.setField(1, null);
        b.setField(3, rb);
        out.add(b);
        GenericRow c = new GenericRow(7);
        c.setField(0, 3);
        out.add(c);
        return out;
    }

    static String quote(String v) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : v.toCharArray()) {
            if (ch == '"' || ch == '\\') sb.append('\\');
            sb.append(ch);
        }
        return sb.append('"').toString();
    }

    static String json(InternalRow r) {
        StringBuilder sb = new StringBuilder("{");
        sb.append("\"id\": ").append(r.getInt(0));
        sb.append(", \"tags\": ");
        if (r.isNullAt(1)) sb.append("null");
        else {
            InternalArray a = r.getArray(1);
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) xs.add(a.isNullAt(i) ? "null" : quote(a.getString(i).toString()));
            sb.append("[").append(String.join(", ", xs)).append("]");
        }
        sb.append(", \"m\": ");
        if (r.isNullAt(2)) sb.append("null");
        else {
            InternalMap m = r.getMap(2);
            InternalArray k = m.keyArray(), v = m.valueArray();
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < m.size(); i++)
                xs.add(quote(k.getString(i).toString()) + ": " + (v.isNullAt(i) ? "null" : Long.toString(v.getLong(i))));
            sb.append("{").append(String.join(", ", xs)).append("}");
        }
        sb.append(", \"r\": ");
        if (r.isNullAt(3)) sb.append("null");
        else {
            InternalRow n = r.getRow(3, 2);
            sb.append("{\"x\": ").append(n.isNullAt(0) ? "null" : Integer.toString(n.getInt(0)));
            sb.append(", \"s\": ").append(n.isNullAt(1) ? "null" : quote(n.getString(1).toString())).append("}");
        }
        sb.append(", \"dec\": ");
        if (r.isNullAt(4)) sb.append("null");
        else {
            InternalArray a = r.getArray(4);
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < a.size(); i++)
                xs.add(a.isNullAt(i) ? "null" : a.getDecimal(i, 20, 3).toBigDecimal().toPlainString());
            sb.append("[").append(String.join(", ", xs)).append("]");
        }
        sb.append(", \"ts\": ");
        if (r.isNullAt(5)) sb.append("null");
        else {
            InternalArray a = r.getArray(5);
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < a.size(); i++)
                xs.add(a.isNullAt(i) ? "null" : quote(a.getTimestampNtz(i, 6).toLocalDateTime().toString()));
            sb.append("[").append(String.join(", ", xs)).append("]");
        }
        sb.append(", \"ar\": ");
        if (r.isNullAt(6)) sb.append("null");
        else {
            InternalArray a = r.getArray(6);
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) {
                if (a.isNullAt(i)) {
                    xs.add("null");
                    continue;
                }
                InternalRow n = a.getRow(i, 2);
                xs.add("{\"q\": " + n.getLong(0) + ", \"w\": " + quote(n.getString(1).toString()) + "}");
            }
            sb.append("[").append(String.join(", ", xs)).append("]");
        }
        return sb.append("}").toString();
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        String mode = args[1];
        String[] dbt = args[2].split("\\.");
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Table table = conn.getTable(TablePath.of(dbt[0], dbt[1]))) {
            if (mode.equals("write")) {
                UpsertWriter w = table.newUpsert().createWriter();
                for (GenericRow r : rows()) w.upsert(r);
                w.flush();
            } else {
                Lookuper lk = table.newLookup().createLookuper();
                for (int i = 3; i < args.length; i++) {
                    GenericRow key = new GenericRow(1);
                    key.setField(0, Integer.parseInt(args[i]));
                    InternalRow r = lk.lookup(key).get(60, TimeUnit.SECONDS).getSingletonRow();
                    System.out.println(r == null ? "null" : json(r));
                }
            }
            System.out.println("JAVA NESTED OK");
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
