/*
 * A primary-key table through the official Fluss Java client, for
 * cross-checks with libfluss (tests/interop/test_cli_pk.py): upsert keys of
 * a table "id BIGINT NOT NULL, v STRING" or look them up. The Java client
 * picks each key's bucket itself (compacted key + Flink murmur), so a key
 * another client wrote is found only if both pick the same bucket.
 *
 * Usage: java flussc.smoke.JavaKv HOST:PORT DB.TABLE upsert VALUE ID...
 *        java flussc.smoke.JavaKv HOST:PORT DB.TABLE lookup ID...
 * lookup prints "ID=VALUE" or "ID missing" per key, in order.
 * Exit 0 on success, 2 on bad usage, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.lookup.LookupResult;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;

import java.util.concurrent.TimeUnit;

public final class JavaKv {
    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !args[1].contains(".")) {
            System.err.println("usage: JavaKv HOST:PORT DB.TABLE upsert VALUE ID... | lookup ID...");
            System.exit(2);
        }
        String[] path = args[1].split("\\.", 2);
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Table table = conn.getTable(TablePath.of(path[0], path[1]))) {
            if (args[2].equals("upsert")) {
                UpsertWriter w = table.newUpsert().createWriter();
                for (int i = 4; i < args.length; i++) {
                    GenericRow row = new GenericRow(2);
                    row.setField(0, Long.parseLong(args[i]));
                    row.setField(1, BinaryString.fromString(args[3]));
                    w.upsert(row);
                }
                w.flush();
                System.out.println("upserted " + (args.length - 4));
            } else if (args[2].equals("lookup")) {
                Lookuper lk = table.newLookup().createLookuper();
                for (int i = 3; i < args.length; i++) {
                    long id = Long.parseLong(args[i]);
                    LookupResult r = lk.lookup(GenericRow.of(id)).get(60, TimeUnit.SECONDS);
                    InternalRow row = r.getSingletonRow();
                    System.out.println(row == null ? id + " missing" : id + "=" + row.getString(1));
                }
            } else {
                System.exit(2);
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
