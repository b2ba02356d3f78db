/*
 * Smoke test: the official Fluss Java client's Admin API against a server.
 *
 * Usage: java flussc.smoke.JavaSmoke HOST:PORT
 * Exit 0 on success; 1 when a check fails; 2 on usage errors; 3 when a call
 * throws unexpectedly (the message names the step).
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.exception.TableNotExistException;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.DatabaseInfo;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.SchemaInfo;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypes;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

public final class JavaSmoke {

    static final String DB = "java_smoke";
    static final String TABLE = "smoke_pk";
    static final int BUCKETS = 3;
    static final long CALL_TIMEOUT_S = 60;

    /** A failed check. */
    static final class CheckFailed extends RuntimeException {
        CheckFailed(String msg) {
            super(msg);
        }
    }

    static String step = "start";

    static void check(boolean ok, String what, Object expected, Object actual) {
        if (!ok) {
            throw new CheckFailed(
                    what + ": expected <" + expected + "> but got <" + actual + ">");
        }
        System.out.println("  ok: " + what + " = " + actual);
    }

    static void checkEq(String what, Object expected, Object actual) {
        check(Objects.equals(expected, actual), what, expected, actual);
    }

    static <T> T await(String what, CompletableFuture<T> f) throws Exception {
        step = what;
        System.out.println("- " + what);
        try {
            return f.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    static Schema schema() {
        return Schema.newBuilder()
                .column("id", DataTypes.INT())
                .withComment("primary key")
                .column("name", DataTypes.STRING())
                .column("price", DataTypes.DECIMAL(10, 2))
                .column("qty", DataTypes.BIGINT())
                .column("ratio", DataTypes.DOUBLE())
                .column("active", DataTypes.BOOLEAN())
                .column("born", DataTypes.DATE())
                .column("ts", DataTypes.TIMESTAMP(3))
                .column("ts_ltz", DataTypes.TIMESTAMP_LTZ(6))
                .column("payload", DataTypes.BYTES())
                .column("code", DataTypes.CHAR(4))
                .column("tags", DataTypes.ARRAY(DataTypes.STRING()))
                .column("attrs", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))
                .column(
                        "addr",
                        DataTypes.ROW(
                                DataTypes.FIELD("city", DataTypes.STRING()),
                                DataTypes.FIELD("zip", DataTypes.INT())))
                .primaryKey("id")
                .build();
    }

    static void run(Admin admin) throws Exception {
        TablePath path = TablePath.of(DB, TABLE);

        // ---------------------------------------------------------- database
        await(
                "createDatabase " + DB,
                admin.createDatabase(
                        DB,
                        DatabaseDescriptor.builder()
                                .comment("fluss-c java smoke")
                                .customProperty("owner", "smoke")
                                .build(),
                        true));
        checkEq("databaseExists(" + DB + ")", true, await("databaseExists", admin.databaseExists(DB)));
        List<String> dbs = await("listDatabases", admin.listDatabases());
        check(dbs.contains(DB), "listDatabases contains " + DB, DB, dbs);
        DatabaseInfo dbInfo = await("getDatabaseInfo", admin.getDatabaseInfo(DB));
        checkEq("database name", DB, dbInfo.getDatabaseName());
        checkEq(
                "database comment",
                "fluss-c java smoke",
                dbInfo.getDatabaseDescriptor().getComment().orElse(null));
        checkEq(
                "database custom property owner",
                "smoke",
                dbInfo.getDatabaseDescriptor().getCustomProperties().get("owner"));

        // ---------------------------------------------------------- table
        Schema schema = schema();
        TableDescriptor descriptor =
                TableDescriptor.builder()
                        .schema(schema)
                        .distributedBy(BUCKETS, "id")
                        .comment("pk table from the java smoke test")
                        .customProperty("origin", "java-smoke")
                        .build();
        await("dropTable (leftover, ignoreIfNotExists)", admin.dropTable(path, true));
        await("createTable " + path, admin.createTable(path, descriptor, false));
        checkEq("tableExists", true, await("tableExists", admin.tableExists(path)));

        TableInfo info = await("getTableInfo", admin.getTableInfo(path));
        checkEq("table path", path, info.getTablePath());
        check(info.getTableId() >= 0, "table id >= 0", ">= 0", info.getTableId());
        checkEq("schema id", 1, info.getSchemaId());
        checkEq("primary key", List.of("id"), info.getPrimaryKeys());
        checkEq("bucket key", List.of("id"), info.getBucketKeys());
        checkEq("bucket count", BUCKETS, info.getNumBuckets());
        checkEq("partitioned", false, info.isPartitioned());
        checkEq("comment", "pk table from the java smoke test", info.getComment().orElse(null));
        checkEq(
                "custom property origin",
                "java-smoke",
                info.getCustomProperties().toMap().get("origin"));
        check(
                info.getCreatedTime() > 0 && info.getModifiedTime() >= info.getCreatedTime(),
                "created/modified time",
                "0 < created <= modified",
                info.getCreatedTime() + "/" + info.getModifiedTime());

        Schema got = info.getSchema();
        checkEq("column names", schema.getColumnNames(), got.getColumnNames());
        List<String> expectedTypes = new ArrayList<>();
        List<String> gotTypes = new ArrayList<>();
        for (int i = 0; i < schema.getColumns().size(); i++) {
            // The server forces primary-key columns NOT NULL; compare nullable-insensitively
            // here and check the nullability of the key separately.
            expectedTypes.add(schema.getColumns().get(i).getDataType().copy(true).asSummaryString());
            gotTypes.add(got.getColumns().get(i).getDataType().copy(true).asSummaryString());
        }
        checkEq("column types", expectedTypes, gotTypes);
        DataType idType = got.getColumn("id").getDataType();
        checkEq("id nullable (PK columns are NOT NULL)", false, idType.isNullable());
        checkEq("id column comment", "primary key", got.getColumn("id").getComment().orElse(null));
        checkEq("primary key in schema", List.of("id"), got.getPrimaryKeyColumnNames());

        SchemaInfo schemaInfo = await("getTableSchema", admin.getTableSchema(path));
        checkEq("getTableSchema schema id", 1, schemaInfo.getSchemaId());
        checkEq("getTableSchema column names", schema.getColumnNames(), schemaInfo.getSchema().getColumnNames());

        List<String> tables = await("listTables", admin.listTables(DB));
        checkEq("listTables", List.of(TABLE), tables);

        // ---------------------------------------------------------- an error case
        step = "getTableInfo of a missing table";
        System.out.println("- " + step);
        try {
            admin.getTableInfo(TablePath.of(DB, "no_such_table")).get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
            throw new CheckFailed("getTableInfo of a missing table succeeded");
        } catch (ExecutionException e) {
            check(
                    e.getCause() instanceof TableNotExistException,
                    "missing table error",
                    "TableNotExistException",
                    e.getCause());
        }

        // ---------------------------------------------------------- cleanup
        await("dropTable " + path, admin.dropTable(path, false));
        checkEq("tableExists after drop", false, await("tableExists", admin.tableExists(path)));
        await("dropDatabase " + DB + " (no cascade)", admin.dropDatabase(DB, false, false));
        checkEq("databaseExists after drop", false, await("databaseExists", admin.databaseExists(DB)));
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: JavaSmoke HOST:PORT");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        conf.setString("client.request-timeout", "60 s");
        int rc;
        try (Connection conn = ConnectionFactory.createConnection(conf);
                Admin admin = conn.getAdmin()) {
            run(admin);
            System.out.println("JAVA SMOKE OK against " + args[0]);
            rc = 0;
        } catch (CheckFailed e) {
            System.err.println("JAVA SMOKE FAILED at step '" + step + "': " + e.getMessage());
            rc = 1;
        } catch (Throwable e) {
            System.err.println(
                    "JAVA SMOKE ERROR at step '" + step + "': " + e.getClass().getName() + ": " + e.getMessage());
            e.printStackTrace();
            rc = 3;
        }
        // Client threads are not all daemons; exit explicitly.
        System.exit(rc);
    }

    private JavaSmoke() {}
}
