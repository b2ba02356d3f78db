/*
 * Writes a log table through the official Java client 0.9.1 in the shape
 * tests/interop/test_filter_pushdown.py checks: BATCHES flushes of ROWS rows
 * (id BIGINT = i*ROWS+k, name STRING "n<iii>_<k>", score DOUBLE = i, tag
 * STRING "t<i>" or null in odd batches), one bucket, so each flush is one
 * magic 0 batch. The table is created with the given properties.
 *
 * Usage: java flussc.smoke.JavaWriteRows HOST:PORT DATABASE TABLE BATCHES ROWS [k=v ...]
 * Exit 0 on success, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

public final class JavaWriteRows {
    public static void main(String[] args) {
        try {
            Configuration conf = new Configuration();
            conf.setString("bootstrap.servers", args[0]);
            TablePath path = TablePath.of(args[1], args[2]);
            int batches = Integer.parseInt(args[3]);
            int rows = Integer.parseInt(args[4]);
            try (Connection conn = ConnectionFactory.createConnection(conf);
                    Admin admin = conn.getAdmin()) {
                Schema schema = Schema.newBuilder()
                        .column("id", DataTypes.BIGINT())
                        .column("name", DataTypes.STRING())
                        .column("score", DataTypes.DOUBLE())
                        .column("tag", DataTypes.STRING())
                        .build();
                TableDescriptor.Builder d = TableDescriptor.builder().schema(schema).distributedBy(1);
                for (int i = 5; i < args.length; i++) {
                    String[] kv = args[i].split("=", 2);
                    d.property(kv[0], kv[1]);
                }
                admin.createTable(path, d.build(), false).get();
                try (Table table = conn.getTable(path)) {
                    AppendWriter w = table.newAppend().createWriter();
                    for (int i = 0; i < batches; i++) {
                        for (int k = 0; k < rows; k++) {
                            GenericRow r = new GenericRow(4);
                            r.setField(0, (long) i * rows + k);
                            r.setField(1, BinaryString.fromString(String.format("n%03d_%d", i, k)));
                            r.setField(2, (double) i);
                            r.setField(3, i % 2 == 1 ? null : BinaryString.fromString("t" + i));
                            w.append(r);
                        }
                        w.flush();
                    }
                }
            }
            System.out.println("ok: " + batches + " batches written");
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
    }
}
