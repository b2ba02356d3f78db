/*
 * SASL/PLAIN through the official Fluss Java client (0.9.1): for each case a
 * connection with its own client.security.* settings, then Admin calls and,
 * for the good cases, a log table written with an AppendWriter and read back
 * with a LogScanner.
 *
 * Usage: java flussc.smoke.JavaSasl HOST:PORT CASE[,CASE...] [DATABASE]
 *   good            client.security.sasl.username=admin / password=admin-pass:
 *                   create DATABASE and a log table, write ROWS rows, read
 *                   them back, drop the database
 *   good-jaas       client.security.sasl.jaas.config for bob/bob-pass:
 *                   listDatabases
 *   wrong-password  admin / not-the-password: listDatabases
 *   unknown-user    mallory / admin-pass: listDatabases
 *   no-credentials  no client.security.* at all (PLAINTEXT): listDatabases
 *
 * Prints one JSON line per case:
 *   {"case":"...","ok":true,"detail":"..."}
 *   {"case":"...","ok":false,"error_class":"...","error_message":"...",
 *    "chain":[["class","message"],...]}
 * (the error is the exception the client surfaced, the chain its causes,
 * outermost first). The caller asserts on them; exit 0 whenever every case
 * ran to its end (good or bad), 1 when a good case read back wrong rows,
 * 2 on usage errors.
 */
package flussc.smoke;

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
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

public final class JavaSasl {
    static final int ROWS = 20;
    static final long CALL_TIMEOUT_S = 30;

    /** A good case that read back something else than it wrote. */
    static final class CheckFailed extends RuntimeException {
        CheckFailed(String msg) {
            super(msg);
        }
    }

    static String json(String s) {
        return JsonText.json(s);
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    static Configuration config(String bootstrap, String kase) {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", bootstrap);
        String user = null;
        String password = null;
        switch (kase) {
            case "good":
                user = "admin";
                password = "admin-pass";
                break;
            case "good-jaas":
                conf.setString("client.security.protocol", "SASL");
                conf.setString("client.security.sasl.mechanism", "PLAIN");
                conf.setString(
                        "client.security.sasl.jaas.config",
                        "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required "
                                + "username=\"bob\" password=\"bob-pass\";");
                return conf;
            case "wrong-password":
                user = "admin";
                password = "not-the-password";
                break;
            case "unknown-user":
                user = "mallory";
                password = "admin-pass";
                break;
            case "no-credentials":
                return conf;
            default:
                throw new IllegalArgumentException("unknown case " + kase);
        }
        conf.setString("client.security.protocol", "SASL");
        conf.setString("client.security.sasl.mechanism", "PLAIN");
        conf.setString("client.security.sasl.username", user);
        conf.setString("client.security.sasl.password", password);
        return conf;
    }

    /** The good case: a database, a log table, rows written and read back. */
    static String writeAndRead(Connection conn, Admin admin, String db) throws Exception {
        TablePath path = TablePath.of(db, "sasl_log");
        await(admin.createDatabase(db, DatabaseDescriptor.EMPTY, false));
        try {
            Schema schema =
                    Schema.newBuilder()
                            .column("id", DataTypes.INT())
                            .column("name", DataTypes.STRING())
                            .build();
            await(admin.createTable(
                    path, TableDescriptor.builder().schema(schema).distributedBy(1).build(), false));
            List<String> dbs = await(admin.listDatabases());
            if (!dbs.contains(db)) {
                throw new CheckFailed("listDatabases does not list " + db + ": " + dbs);
            }
            try (Table table = conn.getTable(path)) {
                AppendWriter writer = table.newAppend().createWriter();
                for (int i = 0; i < ROWS; i++) {
                    GenericRow row = new GenericRow(2);
                    row.setField(0, i);
                    row.setField(1, BinaryString.fromString("row-" + i));
                    writer.append(row);
                }
                writer.flush();
                TreeMap<Integer, String> seen = new TreeMap<>();
                try (LogScanner scanner = table.newScan().createLogScanner()) {
                    scanner.subscribeFromBeginning(0);
                    long deadline = System.currentTimeMillis() + CALL_TIMEOUT_S * 1000;
                    while (seen.size() < ROWS && System.currentTimeMillis() < deadline) {
                        ScanRecords recs = scanner.poll(Duration.ofMillis(500));
                        for (ScanRecord r : recs) {
                            InternalRow row = r.getRow();
                            seen.put(row.getInt(0), row.getString(1).toString());
                        }
                    }
                }
                for (int i = 0; i < ROWS; i++) {
                    if (!("row-" + i).equals(seen.get(i))) {
                        throw new CheckFailed("row " + i + " read back as " + seen.get(i));
                    }
                }
                if (seen.size() != ROWS) {
                    throw new CheckFailed("read " + seen.size() + " rows, wrote " + ROWS);
                }
                return "rows_written=" + ROWS + " rows_read=" + seen.size() + " first="
                        + seen.firstEntry().getValue() + " last=" + seen.lastEntry().getValue();
            }
        } finally {
            await(admin.dropDatabase(db, true, true));
        }
    }

    static String runCase(String bootstrap, String kase, String db) throws Exception {
        try (Connection conn = ConnectionFactory.createConnection(config(bootstrap, kase))) {
            Admin admin = conn.getAdmin();
            if (kase.equals("good")) {
                return writeAndRead(conn, admin, db);
            }
            List<String> dbs = await(admin.listDatabases());
            return "listDatabases=" + dbs;
        }
    }

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: JavaSasl HOST:PORT CASE[,CASE...] [DATABASE]");
            System.exit(2);
        }
        String db = args.length > 2 ? args[2] : "java_sasl";
        boolean checksOk = true;
        for (String kase : args[1].split(",")) {
            String line;
            try {
                String detail = runCase(args[0], kase, db);
                line = "{\"case\":" + json(kase) + ",\"ok\":true,\"detail\":" + json(detail) + "}";
            } catch (CheckFailed e) {
                checksOk = false;
                line = "{\"case\":" + json(kase) + ",\"ok\":false,\"check_failed\":"
                        + json(e.getMessage()) + "}";
            } catch (Throwable t) {
                List<String> chain = new ArrayList<>();
                for (Throwable c = t; c != null && chain.size() < 10; c = c.getCause()) {
                    chain.add("[" + json(c.getClass().getName()) + "," + json(c.getMessage()) + "]");
                    if (c.getCause() == c) {
                        break;
                    }
                }
                line = "{\"case\":" + json(kase) + ",\"ok\":false,\"error_class\":"
                        + json(t.getClass().getName()) + ",\"error_message\":"
                        + json(t.getMessage()) + ",\"chain\":[" + String.join(",", chain) + "]}";
            }
            System.out.println(line);
            System.out.flush();
        }
        System.exit(checksOk ? 0 : 1);
    }
}
