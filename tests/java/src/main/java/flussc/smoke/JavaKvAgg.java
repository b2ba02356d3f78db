/*
 * The aggregation merge engine through the official Java client, with the
 * aggregate function of each column declared in the schema (Schema.Builder
 * column(name, type, AggFunction), stored per column in the schema JSON as
 * 0.9.1 stores it): every 0.9.1 function — sum, product, max, min,
 * last_value, last_value_ignore_nulls (also the default of a column
 * without one), first_value, first_value_ignore_nulls, listagg with a
 * delimiter, string_agg, bool_and, bool_or, rbm32 and rbm64 (bitmaps built
 * and read with RoaringBitmap 1.3.0, the reference's version) — over three
 * upserts of one key with NULLs in between, then a lookup of the merged
 * row; a second key written once keeps its values; a delete is ignored
 * (the engine's default delete behaviour).
 *
 * Usage: java flussc.smoke.JavaKvAgg HOST:PORT
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.AggFunctions;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.longlong.Roaring64Bitmap;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

public final class JavaKvAgg {
    static final int COLS = 16;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA KV AGG FAILED: " + what);
            System.exit(1);
        }
    }

    static byte[] rbm32(int... v) throws Exception {
        RoaringBitmap b = RoaringBitmap.bitmapOf(v);
        ByteBuffer buf = ByteBuffer.allocate(b.serializedSizeInBytes());
        b.serialize(buf);
        return buf.array();
    }

    static byte[] rbm64(long... v) throws Exception {
        Roaring64Bitmap b = new Roaring64Bitmap();
        for (long x : v) b.addLong(x);
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        b.serialize(new DataOutputStream(bos));
        return bos.toByteArray();
    }

    static BinaryString str(String s) {
        return s == null ? null : BinaryString.fromString(s);
    }

    /** id, s, p, mx, mn, lv, lvin, dflt, fv, fvin, la, sa, ba, bo, r32, r64 */
    static GenericRow row(int id, Long s, Integer p, Integer mx, Integer mn, String lv, String lvin,
            String dflt, String fv, String fvin, String la, String sa, Boolean ba, Boolean bo,
            byte[] r32, byte[] r64) {
        GenericRow r = new GenericRow(COLS);
        Object[] v = {id, s, p, mx, mn, str(lv), str(lvin), str(dflt), str(fv), str(fvin), str(la),
            str(sa), ba, bo, r32, r64};
        for (int i = 0; i < COLS; i++) r.setField(i, v[i]);
        return r;
    }

    static String s(InternalRow r, int i) {
        return r.isNullAt(i) ? null : r.getString(i).toString();
    }

    static void eq(Object got, Object want, String what) {
        check(want == null ? got == null : want.equals(got), what + ": got " + got + ", want " + want);
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            admin.createDatabase("java_kv", DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
            TablePath path = TablePath.of("java_kv", "agg");
            admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
            Schema schema = Schema.newBuilder()
                    .column("id", DataTypes.INT())
                    .column("s", DataTypes.BIGINT(), AggFunctions.SUM())
                    .column("p", DataTypes.INT(), AggFunctions.PRODUCT())
                    .column("mx", DataTypes.INT(), AggFunctions.MAX())
                    .column("mn", DataTypes.INT(), AggFunctions.MIN())
                    .column("lv", DataTypes.STRING(), AggFunctions.LAST_VALUE())
                    .column("lvin", DataTypes.STRING(), AggFunctions.LAST_VALUE_IGNORE_NULLS())
                    .column("dflt", DataTypes.STRING())
                    .column("fv", DataTypes.STRING(), AggFunctions.FIRST_VALUE())
                    .column("fvin", DataTypes.STRING(), AggFunctions.FIRST_VALUE_IGNORE_NULLS())
                    .column("la", DataTypes.STRING(), AggFunctions.LISTAGG(";"))
                    .column("sa", DataTypes.STRING(), AggFunctions.STRING_AGG())
                    .column("ba", DataTypes.BOOLEAN(), AggFunctions.BOOL_AND())
                    .column("bo", DataTypes.BOOLEAN(), AggFunctions.BOOL_OR())
                    .column("r32", DataTypes.BYTES(), AggFunctions.RBM32())
                    .column("r64", DataTypes.BYTES(), AggFunctions.RBM64())
                    .primaryKey("id")
                    .build();
            admin.createTable(path, TableDescriptor.builder().schema(schema).distributedBy(1)
                    .property("table.merge-engine", "aggregation").build(), false)
                    .get(60, TimeUnit.SECONDS);
            // the functions come back with the schema
            Schema back = admin.getTableInfo(path).get(60, TimeUnit.SECONDS).getSchema();
            eq(back.getAggFunction("la").map(Object::toString).orElse(null),
                    schema.getAggFunction("la").map(Object::toString).orElse(null), "listagg in the schema");
            eq(back.getAggFunction("s").isPresent(), true, "sum in the schema");
            long big = 1L << 40;
            try (Table table = conn.getTable(path)) {
                UpsertWriter w = table.newUpsert().createWriter();
                w.upsert(row(1, 1L, 2, 5, 5, "a", "a", "d1", null, null, "x", "x", true, false,
                        rbm32(1, 2), rbm64(1)));
                w.upsert(row(1, 10L, 3, 9, 1, null, null, null, "f2", "f2", "y", null, true, true,
                        rbm32(3), rbm64(big)));
                w.upsert(row(1, 100L, 4, 7, 3, "c", null, "d3", "f3", "f3", null, "z", false, false,
                        rbm32(2, 5), rbm64(7)));
                w.upsert(row(2, 5L, 6, 7, 8, "only", "only", "only", "only", "only", "only", "only",
                        true, false, rbm32(9), rbm64(9)));
                w.flush();
                w.delete(row(2, 5L, 6, 7, 8, "only", "only", "only", "only", "only", "only", "only",
                        true, false, rbm32(9), rbm64(9)));
                w.flush();
                Lookuper lk = table.newLookup().createLookuper();
                GenericRow key = new GenericRow(1);
                key.setField(0, 1);
                InternalRow r = lk.lookup(key).get(60, TimeUnit.SECONDS).getSingletonRow();
                check(r != null, "key 1 not found");
                eq(r.getLong(1), 111L, "sum");
                eq(r.getInt(2), 24, "product");
                eq(r.getInt(3), 9, "max");
                eq(r.getInt(4), 1, "min");
                eq(s(r, 5), "c", "last_value");
                eq(s(r, 6), "a", "last_value_ignore_nulls");
                eq(s(r, 7), "d3", "default (last_value_ignore_nulls)");
                /* 0.9.1: a NULL accumulator takes the next value (FieldFirstValueAgg) */
                eq(s(r, 8), "f2", "first_value after a first NULL");
                eq(s(r, 9), "f2", "first_value_ignore_nulls");
                eq(s(r, 10), "x;y", "listagg(';')");
                eq(s(r, 11), "x,z", "string_agg");
                eq(r.getBoolean(12), false, "bool_and");
                eq(r.getBoolean(13), true, "bool_or");
                RoaringBitmap b32 = new RoaringBitmap();
                b32.deserialize(ByteBuffer.wrap(r.getBytes(14)));
                eq(Arrays.toString(b32.toArray()), "[1, 2, 3, 5]", "rbm32");
                Roaring64Bitmap b64 = new Roaring64Bitmap();
                b64.deserialize(ByteBuffer.wrap(r.getBytes(15)));
                eq(Arrays.toString(b64.toArray()), Arrays.toString(new long[] {1, 7, big}), "rbm64");
                key.setField(0, 2);
                InternalRow r2 = lk.lookup(key).get(60, TimeUnit.SECONDS).getSingletonRow();
                check(r2 != null, "key 2 was deleted (aggregation ignores deletes by default)");
                eq(s(r2, 10), "only", "a single row's listagg");
                eq(r2.getLong(1), 5L, "a single row's sum");
            }
            System.out.println("JAVA KV AGG OK");
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
