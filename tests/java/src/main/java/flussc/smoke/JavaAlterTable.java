/*
 * ALTER TABLE through the official Java client (Admin.alterTable, what
 * Flink's ALTER TABLE ... SET/RESET/ADD calls):
 *
 *  - properties: the alterable ones set and reset, custom properties set
 *    and reset, visible in getTableInfo (modified time unchanged, as in
 *    0.9.1); refused
 *    changes with the reference's exception classes (a non-alterable
 *    option, enabling the data lake, a bad value, properties and columns
 *    in one request, a missing table, ignoreIfNotExists);
 *  - ADD COLUMN on a log table: rows written before (and by a writer that
 *    still has the old schema) and after read back with exact values, the
 *    old rows with NULL in the new column, by a scanner of the new schema,
 *    one of the old schema and a projected one; schema ids 1 and 2;
 *    refusals (column exists, NOT NULL);
 *  - ADD COLUMN on a primary-key table: upserts before and after (old and
 *    new writers, a partial update of the new column), lookups with the
 *    new and the old schema, the changelog with exact change types and
 *    values.
 *  - DROP / RENAME COLUMN: refused by the reference (an unmapped
 *    SchemaChangeException, UnknownServerException); fluss-c extensions
 *    otherwise (mode "ours"): rows read back by column id, projection
 *    pushdown remapped per batch, lookups of values stored under every
 *    schema id.
 *
 * Usage: java flussc.smoke.JavaAlterTable HOST:PORT ours|reference|verify
 *   verify: only reads what a previous "ours" run left (after a restart).
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
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.SchemaInfo;
import org.apache.fluss.metadata.TableChange;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataType;
import org.apache.fluss.types.DataTypeRoot;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

public final class JavaAlterTable {
    static final String DB = "java_alter";
    static final TablePath LOG = TablePath.of(DB, "log_t");
    static final TablePath PK = TablePath.of(DB, "pk_t");
    static final TablePath EVO = TablePath.of(DB, "evo_t");
    static final TablePath EVO_PK = TablePath.of(DB, "evo_pk_t");

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA ALTER FAILED: " + what);
            System.exit(1);
        }
    }

    static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** The failure of f: its cause's class name and message. */
    static Throwable failure(java.util.concurrent.CompletableFuture<?> f) throws Exception {
        try {
            f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        return null;
    }

    static void expectFailure(java.util.concurrent.CompletableFuture<?> f, String cls,
                              String msgPart, String what) throws Exception {
        Throwable t = failure(f);
        check(t != null, what + ": succeeded, expected " + cls);
        check(t.getClass().getSimpleName().equals(cls),
                what + ": " + t.getClass().getName() + ": " + t.getMessage() + ", expected " + cls);
        check(t.getMessage() != null && t.getMessage().contains(msgPart),
                what + ": message '" + t.getMessage() + "' lacks '" + msgPart + "'");
    }

    static Object field(InternalRow r, int i, DataType t) {
        if (r.isNullAt(i)) return null;
        DataTypeRoot root = t.getTypeRoot();
        switch (root) {
            case INTEGER: return r.getInt(i);
            case BIGINT: return r.getLong(i);
            case STRING: return r.getString(i).toString();
            default: throw new IllegalStateException("type " + t);
        }
    }

    static String show(InternalRow r, RowType type) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < type.getFieldCount(); i++) {
            if (i > 0) sb.append('|');
            sb.append(field(r, i, type.getTypeAt(i)));
        }
        return sb.toString();
    }

    static GenericRow row(Object... values) {
        GenericRow r = new GenericRow(values.length);
        for (int i = 0; i < values.length; i++) {
            Object v = values[i];
            r.setField(i, v instanceof String ? BinaryString.fromString((String) v) : v);
        }
        return r;
    }

    /** Every record of bucket 0 from the beginning, as "change row" strings. */
    static List<String> scanAll(Table t, RowType shownType, int[] projection, int want,
                                boolean changes) throws Exception {
        List<String> got = new ArrayList<>();
        org.apache.fluss.client.table.scanner.Scan scan = t.newScan();
        if (projection != null) scan = scan.project(projection);
        try (LogScanner s = scan.createLogScanner()) {
            s.subscribeFromBeginning(0);
            long deadline = System.currentTimeMillis() + 60_000;
            while (got.size() < want) {
                check(System.currentTimeMillis() < deadline, "scan so far: " + got);
                ScanRecords recs = s.poll(Duration.ofMillis(300));
                for (ScanRecord r : recs)
                    got.add((changes ? r.getChangeType().shortString() + " " : "")
                            + show(r.getRow(), shownType));
            }
            ScanRecords extra = s.poll(Duration.ofMillis(500));
            check(extra.count() == 0, "more records than expected after " + got);
        }
        return got;
    }

    static String lookup(Lookuper lk, int id, RowType type) throws Exception {
        InternalRow r = get(lk.lookup(row(id))).getSingletonRow();
        return r == null ? null : show(r, type);
    }

    static List<String> names(Schema s) {
        return s.getRowType().getFieldNames();
    }

    // ---- properties ----

    static void properties(Admin admin) throws Exception {
        TableInfo before = get(admin.getTableInfo(LOG));
        Thread.sleep(5); // a new modified time would differ
        get(admin.alterTable(LOG, Arrays.asList(
                TableChange.set("table.datalake.freshness", "5min"),
                TableChange.set("table.log.tiered.local-segments", "3"),
                TableChange.set("owner", "team-a"),
                TableChange.set("note", "x")), false));
        TableInfo after = get(admin.getTableInfo(LOG));
        Map<String, String> p = after.getProperties().toMap();
        check("5min".equals(p.get("table.datalake.freshness")), "freshness set: " + p);
        check("3".equals(p.get("table.log.tiered.local-segments")), "local-segments set: " + p);
        Map<String, String> cp = after.getCustomProperties().toMap();
        check("team-a".equals(cp.get("owner")) && "x".equals(cp.get("note")),
                "custom properties set: " + cp);
        check(after.getCreatedTime() == before.getCreatedTime(), "created time kept");
        // 0.9.1 answers the same modified time after ALTER TABLE
        check(after.getModifiedTime() == before.getModifiedTime(),
                "modified time: " + before.getModifiedTime() + " -> " + after.getModifiedTime());
        check(after.getSchemaId() == before.getSchemaId(), "properties leave the schema id");

        get(admin.alterTable(LOG, Arrays.asList(
                TableChange.reset("table.datalake.freshness"),
                TableChange.reset("note")), false));
        TableInfo reset = get(admin.getTableInfo(LOG));
        check(!reset.getProperties().toMap().containsKey("table.datalake.freshness"),
                "freshness reset: " + reset.getProperties().toMap());
        check("3".equals(reset.getProperties().toMap().get("table.log.tiered.local-segments")),
                "local-segments kept: " + reset.getProperties().toMap());
        check(!reset.getCustomProperties().toMap().containsKey("note")
                        && "team-a".equals(reset.getCustomProperties().toMap().get("owner")),
                "custom reset: " + reset.getCustomProperties().toMap());

        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.set("table.log.ttl", "1d")), false),
                "InvalidAlterTableException",
                "The option 'table.log.ttl' is not supported to alter yet.", "table.log.ttl");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.set("table.datalake.enabled", "true")), false),
                "InvalidAlterTableException",
                "cannot be altered for tables that were created before the Fluss cluster "
                        + "enabled datalake", "table.datalake.enabled");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.set("table.log.tiered.local-segments", "0")), false),
                "InvalidConfigException",
                "'table.log.tiered.local-segments' must be greater than 0.", "local-segments 0");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.set("table.datalake.freshness", "soon")), false),
                "InvalidConfigException", "table.datalake.freshness", "freshness 'soon'");
        expectFailure(admin.alterTable(LOG, Arrays.asList(
                        TableChange.set("owner", "b"),
                        TableChange.addColumn("z", DataTypes.INT(), null,
                                TableChange.ColumnPosition.last())), false),
                "InvalidAlterTableException",
                "Table alteration can only be applied to one of the following: table "
                        + "properties or table schema.", "properties and schema together");
        TablePath missing = TablePath.of(DB, "no_such_table");
        expectFailure(admin.alterTable(missing, Collections.singletonList(
                        TableChange.set("owner", "b")), false),
                "TableNotExistException", "does not exist", "missing table");
        get(admin.alterTable(missing, Collections.singletonList(TableChange.set("owner", "b")),
                true));
        get(admin.alterTable(missing, Collections.singletonList(TableChange.addColumn("z",
                DataTypes.INT(), null, TableChange.ColumnPosition.last())), true));
        check(!get(admin.tableExists(missing)), "ignoreIfNotExists creates nothing");
        TableInfo unchanged = get(admin.getTableInfo(LOG));
        check("team-a".equals(unchanged.getCustomProperties().toMap().get("owner")),
                "refused changes leave the table: " + unchanged.getCustomProperties().toMap());
        System.out.println("properties OK");
    }

    // ---- ADD COLUMN, log table ----

    static final List<String> LOG_ROWS = Arrays.asList(
            "1|a|null", "2|null|null", "3|c|null", "4|d|40", "5|null|null", "6|f|-6");

    static void addColumnLog(Connection conn, Admin admin) throws Exception {
        Table t1 = conn.getTable(LOG);
        AppendWriter w1 = t1.newAppend().createWriter();
        get(w1.append(row(1, "a")));
        get(w1.append(row(2, null)));
        w1.flush();

        expectFailure(admin.alterTable(LOG, Collections.singletonList(TableChange.addColumn(
                        "name", DataTypes.STRING(), null, TableChange.ColumnPosition.last())), false),
                "InvalidAlterTableException", "Column name already exists.", "add existing");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(TableChange.addColumn(
                        "nn", DataTypes.BIGINT().copy(false), null,
                        TableChange.ColumnPosition.last())), false),
                "UnknownServerException", "Column nn must be nullable.", "add NOT NULL");
        check(get(admin.getTableInfo(LOG)).getSchemaId() == 1, "refusals keep schema 1");

        get(admin.alterTable(LOG, Collections.singletonList(TableChange.addColumn(
                "score", DataTypes.BIGINT(), "added later", TableChange.ColumnPosition.last())),
                false));
        TableInfo ti = get(admin.getTableInfo(LOG));
        check(ti.getSchemaId() == 2, "schema id after ADD COLUMN: " + ti.getSchemaId());
        check(names(ti.getSchema()).equals(Arrays.asList("id", "name", "score")),
                "columns: " + names(ti.getSchema()));
        Schema.Column score = ti.getSchema().getColumns().get(2);
        check("added later".equals(score.getComment().orElse(null)), "comment: " + score);
        check(score.getColumnId() == 2 && ti.getSchema().getHighestFieldId() == 2,
                "column id 2: " + score.getColumnId() + " highest " + ti.getSchema().getHighestFieldId());
        SchemaInfo s1 = get(admin.getTableSchema(LOG, 1));
        check(s1.getSchemaId() == 1 && names(s1.getSchema()).equals(Arrays.asList("id", "name")),
                "schema 1: " + names(s1.getSchema()));
        SchemaInfo latest = get(admin.getTableSchema(LOG));
        check(latest.getSchemaId() == 2 && names(latest.getSchema()).size() == 3, "latest schema");
        expectFailure(admin.getTableSchema(LOG, 3), "SchemaNotExistException", "3", "schema 3");

        // a writer that still has schema 1
        get(w1.append(row(3, "c")));
        w1.flush();
        Table t2 = conn.getTable(LOG);
        check(t2.getTableInfo().getSchemaId() == 2, "new table handle has schema 2");
        AppendWriter w2 = t2.newAppend().createWriter();
        get(w2.append(row(4, "d", 40L)));
        get(w2.append(row(5, null, null)));
        get(w2.append(row(6, "f", -6L)));
        w2.flush();
        checkLogRows(conn, t1);
        System.out.println("add column (log) OK");
    }

    static void checkLogRows(Connection conn, Table old) throws Exception {
        Table t2 = conn.getTable(LOG);
        RowType rt = t2.getTableInfo().getRowType();
        List<String> got = scanAll(t2, rt, null, LOG_ROWS.size(), false);
        check(got.equals(LOG_ROWS), "rows " + got + " != " + LOG_ROWS);
        // pushed-down projection of the columns every batch has
        RowType idName = RowType.of(DataTypes.INT(), DataTypes.STRING());
        List<String> projected = scanAll(t2, idName, new int[] {0, 1}, LOG_ROWS.size(), false);
        List<String> wantProjected = new ArrayList<>();
        for (String s : LOG_ROWS) wantProjected.add(s.substring(0, s.lastIndexOf('|')));
        check(projected.equals(wantProjected), "projected " + projected + " != " + wantProjected);
        if (old != null) { // a scanner of schema 1 sees every row without the new column
            List<String> oldView = scanAll(old, old.getTableInfo().getRowType(), null,
                    LOG_ROWS.size(), false);
            check(oldView.equals(wantProjected), "old-schema scan " + oldView);
        }
    }

    // ---- ADD COLUMN, primary-key table ----

    static final RowType PK_TYPE = RowType.of(DataTypes.INT(), DataTypes.STRING(), DataTypes.INT());
    static final RowType PK_OLD_TYPE = RowType.of(DataTypes.INT(), DataTypes.STRING());
    static final List<String> PK_CHANGELOG = Arrays.asList(
            "+I 1|a|null", "+I 2|b|null", "+I 3|c|null",
            "-U 2|b|null", "+U 2|b2|20", "+I 4|d|40",
            "-U 1|a|null", "+U 1|a|10",
            "-U 3|c|null", "+U 3|c3|null");
    static final String[] PK_STATE = {"1|a|10", "2|b2|20", "3|c3|null", "4|d|40"};

    static void addColumnPk(Connection conn, Admin admin) throws Exception {
        Table k1 = conn.getTable(PK);
        UpsertWriter u1 = k1.newUpsert().createWriter();
        u1.upsert(row(1, "a"));
        u1.upsert(row(2, "b"));
        u1.flush();
        get(admin.alterTable(PK, Collections.singletonList(TableChange.addColumn(
                "extra", DataTypes.INT(), null, TableChange.ColumnPosition.last())), false));
        check(get(admin.getTableInfo(PK)).getSchemaId() == 2, "pk schema 2");
        u1.upsert(row(3, "c")); // the old schema's writer
        u1.flush();
        Table k2 = conn.getTable(PK);
        UpsertWriter u2 = k2.newUpsert().createWriter();
        u2.upsert(row(2, "b2", 20));
        u2.upsert(row(4, "d", 40));
        u2.flush();
        UpsertWriter partial = k2.newUpsert().partialUpdate("id", "extra").createWriter();
        partial.upsert(row(1, null, 10));
        partial.flush();
        u1.upsert(row(3, "c3")); // an update in schema 1 of a row stored in schema 1
        u1.flush();
        checkPk(conn, k1);
        System.out.println("add column (pk) OK");
    }

    static void checkPk(Connection conn, Table old) throws Exception {
        Table k2 = conn.getTable(PK);
        Lookuper lk = k2.newLookup().createLookuper();
        for (int id = 1; id <= 4; id++)
            check(PK_STATE[id - 1].equals(lookup(lk, id, PK_TYPE)),
                    "lookup " + id + ": " + lookup(lk, id, PK_TYPE));
        check(lookup(lk, 9, PK_TYPE) == null, "lookup of a missing key");
        if (old != null) {
            Lookuper olk = old.newLookup().createLookuper();
            for (int id = 1; id <= 4; id++) {
                String want = PK_STATE[id - 1].substring(0, PK_STATE[id - 1].lastIndexOf('|'));
                check(want.equals(lookup(olk, id, PK_OLD_TYPE)),
                        "old-schema lookup " + id + ": " + lookup(olk, id, PK_OLD_TYPE));
            }
        }
        List<String> cl = scanAll(k2, PK_TYPE, null, PK_CHANGELOG.size(), true);
        check(cl.equals(PK_CHANGELOG), "changelog " + cl + " != " + PK_CHANGELOG);
    }

    // ---- ADD COLUMN of a nested type, primary-key table ----

    static final TablePath NEST = TablePath.of(DB, "nest_pk_t");

    /** id|v|[tags] of a row of NEST under its latest schema. */
    static String showNested(InternalRow r) {
        StringBuilder sb = new StringBuilder();
        sb.append(r.getInt(0)).append('|').append(r.getString(1)).append('|');
        if (r.isNullAt(2)) return sb.append("null").toString();
        org.apache.fluss.row.InternalArray a = r.getArray(2);
        List<String> xs = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) xs.add(a.isNullAt(i) ? "null" : a.getString(i).toString());
        return sb.append(xs).toString();
    }

    static final String[] NEST_STATE = {"1|a1|[z]", "2|b|[x, null, y]", "3|c|null"};

    /** An ARRAY column added to a PK table whose changelog is ARROW: its
     *  values must survive a crash right after they are written (fluss-c's
     *  replay does not read nested values back from an ARROW changelog, so
     *  the store keeps RocksDB's WAL from the ALTER on). */
    static void addColumnNested(Connection conn, Admin admin) throws Exception {
        Table k1 = conn.getTable(NEST);
        UpsertWriter u1 = k1.newUpsert().createWriter();
        u1.upsert(row(1, "a"));
        u1.upsert(row(3, "c"));
        u1.flush();
        get(admin.alterTable(NEST, Collections.singletonList(TableChange.addColumn("tags",
                DataTypes.ARRAY(DataTypes.STRING()), null, TableChange.ColumnPosition.last())),
                false));
        Table k2 = conn.getTable(NEST);
        UpsertWriter u2 = k2.newUpsert().createWriter();
        GenericRow r1n = new GenericRow(3);
        r1n.setField(0, 1);
        r1n.setField(1, BinaryString.fromString("a1"));
        r1n.setField(2, new org.apache.fluss.row.GenericArray(new Object[] {BinaryString.fromString("z")}));
        GenericRow r2 = new GenericRow(3);
        r2.setField(0, 2);
        r2.setField(1, BinaryString.fromString("b"));
        r2.setField(2, new org.apache.fluss.row.GenericArray(new Object[] {
                BinaryString.fromString("x"), null, BinaryString.fromString("y")}));
        u2.upsert(r1n);
        u2.upsert(r2);
        u2.flush();
        checkNested(conn);
        System.out.println("add nested column (pk) OK");
    }

    static void checkNested(Connection conn) throws Exception {
        Lookuper lk = conn.getTable(NEST).newLookup().createLookuper();
        for (int id = 1; id <= 3; id++) {
            InternalRow r = get(lk.lookup(row(id))).getSingletonRow();
            String have = r == null ? null : showNested(r);
            check(NEST_STATE[id - 1].equals(have), "nested lookup " + id + ": " + have);
        }
    }

    // ---- DROP / RENAME COLUMN ----

    static void dropRenameRefused(Admin admin) throws Exception {
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.dropColumn("name")), false),
                "UnknownServerException", "Not support drop column now.", "drop (reference)");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.renameColumn("name", "label")), false),
                "UnknownServerException", "Not support rename column now.", "rename (reference)");
        expectFailure(admin.alterTable(LOG, Collections.singletonList(
                        TableChange.modifyColumn("name", DataTypes.STRING(), null, null)), false),
                "UnknownServerException", "Not support modify column now.", "modify");
        check(get(admin.getTableInfo(LOG)).getSchemaId() == 2, "refusals keep schema 2");
        System.out.println("drop/rename refused OK");
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: JavaAlterTable HOST:PORT ours|reference|verify");
            System.exit(2);
        }
        String mode = args[1];
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            if (mode.equals("verify")) {
                TableInfo ti = get(admin.getTableInfo(LOG));
                check(ti.getSchemaId() == 2, "schema id after restart " + ti.getSchemaId());
                check("3".equals(ti.getProperties().toMap().get("table.log.tiered.local-segments")),
                        "properties after restart: " + ti.getProperties().toMap());
                check("team-a".equals(ti.getCustomProperties().toMap().get("owner")),
                        "custom after restart: " + ti.getCustomProperties().toMap());
                checkLogRows(conn, null);
                checkPk(conn, null);
                checkNested(conn);
                JavaAlterColumns.verify(conn);
                System.out.println("JAVA ALTER VERIFY OK");
                System.exit(0);
            }
            get(admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true));
            for (TablePath p : Arrays.asList(LOG, PK, NEST, EVO, EVO_PK))
                get(admin.dropTable(p, true));
            get(admin.createTable(LOG, TableDescriptor.builder()
                    .schema(Schema.newBuilder().column("id", DataTypes.INT())
                            .column("name", DataTypes.STRING()).build())
                    .distributedBy(1).build(), false));
            get(admin.createTable(PK, TableDescriptor.builder()
                    .schema(Schema.newBuilder().column("id", DataTypes.INT())
                            .column("v", DataTypes.STRING()).primaryKey("id").build())
                    .distributedBy(1).build(), false));
            get(admin.createTable(NEST, TableDescriptor.builder()
                    .schema(Schema.newBuilder().column("id", DataTypes.INT())
                            .column("v", DataTypes.STRING()).primaryKey("id").build())
                    .distributedBy(1).build(), false));
            properties(admin);
            addColumnLog(conn, admin);
            addColumnPk(conn, admin);
            addColumnNested(conn, admin);
            if (mode.equals("reference")) {
                dropRenameRefused(admin);
            } else {
                JavaAlterColumns.run(conn, admin);
            }
            System.out.println("JAVA ALTER OK");
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
