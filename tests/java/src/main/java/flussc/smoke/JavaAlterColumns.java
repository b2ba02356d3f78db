/*
 * DROP COLUMN and RENAME COLUMN through the official Java client — fluss-c
 * extensions (the 0.9.1 reference refuses both; JavaAlterTable checks
 * that refusal against it). Column ids never change and are never reused,
 * so the client reads every batch and value by column id:
 *
 *  - a log table: rows written under four schemas (a dropped column, a
 *    renamed one, a new column with a dropped one's name) by current and
 *    stale writers read back with exact values; a pushed-down projection
 *    of the latest schema's positions, which the server translates per
 *    batch;
 *  - a primary-key table: values stored under an older schema merged
 *    (update, partial update, delete) and looked up under the latest; the
 *    changelog with exact change types and values.
 *
 * Run by JavaAlterTable in mode "ours"; `verify` re-reads after a restart.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableChange;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TableInfo;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.types.RowType;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static flussc.smoke.JavaAlterTable.check;
import static flussc.smoke.JavaAlterTable.expectFailure;
import static flussc.smoke.JavaAlterTable.get;
import static flussc.smoke.JavaAlterTable.lookup;
import static flussc.smoke.JavaAlterTable.names;
import static flussc.smoke.JavaAlterTable.row;
import static flussc.smoke.JavaAlterTable.scanAll;

final class JavaAlterColumns {
    static final TablePath EVO = JavaAlterTable.EVO;
    static final TablePath EVO_PK = JavaAlterTable.EVO_PK;

    static void alter(Admin admin, TablePath p, TableChange c) throws Exception {
        get(admin.alterTable(p, Collections.singletonList(c), false));
    }

    // ---- log table: id, a, b, c -> drop a -> rename c to label -> add a ----

    static final List<String> EVO_ROWS = Arrays.asList(
            "1|10|c1|null", "2|20|c2|null", "3|30|c3|null", "4|40|c4|a4", "5|50|c5|null");

    static void log(Connection conn, Admin admin) throws Exception {
        get(admin.createTable(EVO, TableDescriptor.builder()
                .schema(Schema.newBuilder().column("id", DataTypes.INT())
                        .column("a", DataTypes.STRING()).column("b", DataTypes.BIGINT())
                        .column("c", DataTypes.STRING()).build())
                .distributedBy(1).build(), false));
        Table t1 = conn.getTable(EVO);
        AppendWriter w1 = t1.newAppend().createWriter();
        get(w1.append(row(1, "a1", 10L, "c1")));
        get(w1.append(row(2, null, 20L, "c2")));
        w1.flush();

        expectFailure(admin.alterTable(EVO, Collections.singletonList(
                TableChange.dropColumn("nope")), false),
                "InvalidAlterTableException", "Column nope does not exist.", "drop missing");
        alter(admin, EVO, TableChange.dropColumn("a"));
        Table t2 = conn.getTable(EVO);
        check(names(t2.getTableInfo().getSchema()).equals(Arrays.asList("id", "b", "c")),
                "after drop: " + names(t2.getTableInfo().getSchema()));
        AppendWriter w2 = t2.newAppend().createWriter();
        get(w2.append(row(3, 30L, "c3")));
        w2.flush();

        expectFailure(admin.alterTable(EVO, Collections.singletonList(
                TableChange.renameColumn("c", "b")), false),
                "InvalidAlterTableException", "Column b already exists.", "rename onto b");
        alter(admin, EVO, TableChange.renameColumn("c", "label"));
        alter(admin, EVO, TableChange.addColumn("a", DataTypes.STRING(), null,
                TableChange.ColumnPosition.last()));
        TableInfo ti = get(admin.getTableInfo(EVO));
        check(ti.getSchemaId() == 4, "schema id " + ti.getSchemaId());
        check(names(ti.getSchema()).equals(Arrays.asList("id", "b", "label", "a")),
                "columns " + names(ti.getSchema()));
        check(ti.getSchema().getColumns().get(3).getColumnId() == 4,
                "the new a has a new id: " + ti.getSchema().getColumns().get(3).getColumnId());
        Table t4 = conn.getTable(EVO);
        AppendWriter w4 = t4.newAppend().createWriter();
        get(w4.append(row(4, 40L, "c4", "a4")));
        w4.flush();
        get(w1.append(row(5, "a5", 50L, "c5"))); // a writer still on schema 1
        w1.flush();
        checkLog(conn);
        System.out.println("drop/rename (log) OK");
    }

    static void checkLog(Connection conn) throws Exception {
        Table t = conn.getTable(EVO);
        RowType rt = t.getTableInfo().getRowType();
        List<String> got = scanAll(t, rt, null, EVO_ROWS.size(), false);
        check(got.equals(EVO_ROWS), "rows " + got + " != " + EVO_ROWS);
        // positions of the latest schema (id, label), at 0 and 3 in schema 1's batches
        List<String> proj = scanAll(t, RowType.of(DataTypes.INT(), DataTypes.STRING()),
                new int[] {0, 2}, EVO_ROWS.size(), false);
        List<String> want = Arrays.asList("1|c1", "2|c2", "3|c3", "4|c4", "5|c5");
        check(proj.equals(want), "projected " + proj + " != " + want);
    }

    // ---- primary-key table: id, a, b -> drop a -> rename b to bee ----

    static final RowType PK_TYPE = RowType.of(DataTypes.INT(), DataTypes.INT());
    static final List<String> PK_CHANGELOG = Arrays.asList(
            "+I 1|10", "+I 2|20", "+I 3|30", "-U 2|20", "+U 2|21", "+I 4|40",
            "-U 1|10", "+U 1|11", "-D 4|40");
    static final String[] PK_STATE = {"1|11", "2|21", "3|30", null};

    static void pk(Connection conn, Admin admin) throws Exception {
        get(admin.createTable(EVO_PK, TableDescriptor.builder()
                .schema(Schema.newBuilder().column("id", DataTypes.INT())
                        .column("a", DataTypes.STRING()).column("b", DataTypes.INT())
                        .primaryKey("id").build())
                .distributedBy(1).build(), false));
        Table k1 = conn.getTable(EVO_PK);
        UpsertWriter u1 = k1.newUpsert().createWriter();
        u1.upsert(row(1, "a1", 10));
        u1.upsert(row(2, "a2", 20));
        u1.flush();
        expectFailure(admin.alterTable(EVO_PK, Collections.singletonList(
                TableChange.dropColumn("id")), false),
                "InvalidAlterTableException", "Column id cannot be dropped", "drop the key");
        alter(admin, EVO_PK, TableChange.dropColumn("a"));
        Table k2 = conn.getTable(EVO_PK);
        UpsertWriter u2 = k2.newUpsert().createWriter();
        u2.upsert(row(3, 30));
        u2.upsert(row(2, 21));
        u2.flush();
        alter(admin, EVO_PK, TableChange.renameColumn("b", "bee"));
        u1.upsert(row(4, "a4", 40)); // a writer still on schema 1
        u1.flush();
        Table k3 = conn.getTable(EVO_PK);
        check(names(k3.getTableInfo().getSchema()).equals(Arrays.asList("id", "bee")),
                "pk columns " + names(k3.getTableInfo().getSchema()));
        UpsertWriter partial = k3.newUpsert().partialUpdate("id", "bee").createWriter();
        partial.upsert(row(1, 11));
        partial.flush();
        UpsertWriter u3 = k3.newUpsert().createWriter();
        u3.delete(row(4, 40));
        u3.flush();
        checkPk(conn);
        System.out.println("drop/rename (pk) OK");
    }

    static void checkPk(Connection conn) throws Exception {
        Table k = conn.getTable(EVO_PK);
        Lookuper lk = k.newLookup().createLookuper();
        for (int id = 1; id <= 4; id++) {
            String have = lookup(lk, id, PK_TYPE);
            check(PK_STATE[id - 1] == null ? have == null : PK_STATE[id - 1].equals(have),
                    "lookup " + id + ": " + have);
        }
        List<String> cl = scanAll(k, PK_TYPE, null, PK_CHANGELOG.size(), true);
        check(cl.equals(PK_CHANGELOG), "changelog " + cl + " != " + PK_CHANGELOG);
    }

    static void run(Connection conn, Admin admin) throws Exception {
        log(conn, admin);
        pk(conn, admin);
    }

    static void verify(Connection conn) throws Exception {
        checkLog(conn);
        checkPk(conn);
    }
}
