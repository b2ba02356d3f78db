/*
 * KV snapshots through the official Fluss Java client (the path the Flink
 * source takes to read a primary-key table): upserts, updates and deletes
 * into a 2-bucket PK table; wait for the server's periodic snapshots
 * (GET_LATEST_KV_SNAPSHOTS); lease them (ACQUIRE_KV_SNAPSHOT_LEASE, one
 * unknown snapshot reported unavailable); write more; read each leased
 * snapshot with the client's own RocksDB (GET_KV_SNAPSHOT_METADATA,
 * download, KvSnapshotBatchScanner) and follow the changelog from the
 * snapshot's log offset to the end: the result must equal the rows
 * written, with no gap and no duplicate. The lease keeps its snapshot
 * while newer ones are taken and retention (num-retained 1) runs; after
 * the release it goes (KV_SNAPSHOT_NOT_EXIST).
 *
 * The server must run with kv.snapshot.interval small (e.g. 500 ms) and
 * kv.snapshot.num-retained 1. Green against the reference 0.9.1 as well
 * (REF_EXTRA_CONFIG with those two keys; argument "reference"), with the same
 * counts: 900 rows from the snapshots, 312 changelog records after them.
 *
 * Usage: java flussc.smoke.JavaKvSnapshot HOST:PORT [reference]
 * ("reference": the 0.9.1 server leases unknown snapshots, apache/fluss#2600)
 * Exit 0 on success, 1 when a check fails, 3 on an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.KvSnapshotLease;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.metadata.AcquireKvSnapshotLeaseResult;
import org.apache.fluss.client.metadata.KvSnapshotMetadata;
import org.apache.fluss.client.metadata.KvSnapshots;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.ScanRecord;
import org.apache.fluss.client.table.scanner.batch.BatchScanner;
import org.apache.fluss.client.table.scanner.log.LogScanner;
import org.apache.fluss.client.table.scanner.log.ScanRecords;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.exception.KvSnapshotNotExistException;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.record.ChangeType;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.utils.CloseableIterator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

public final class JavaKvSnapshot {
    static final String DB = "java_kv";
    static final int BUCKETS = 2;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA KV SNAPSHOT FAILED: " + what);
            System.exit(1);
        }
    }

    static GenericRow row(int id, String name, long amount) {
        GenericRow r = new GenericRow(3);
        r.setField(0, id);
        r.setField(1, BinaryString.fromString(name));
        r.setField(2, amount);
        return r;
    }

    static String show(InternalRow r) {
        return r.getString(1).toString() + "/" + r.getLong(2);
    }

    static void upsert(UpsertWriter w, Map<Integer, String> expect, int id, String name, long amount)
            throws Exception {
        w.upsert(row(id, name, amount));
        expect.put(id, name + "/" + amount);
    }

    static void delete(UpsertWriter w, Map<Integer, String> expect, int id) throws Exception {
        String[] cur = expect.get(id).split("/");
        w.delete(row(id, cur[0], Long.parseLong(cur[1])));
        expect.remove(id);
    }

    /** Waits until every bucket has a snapshot newer than `after` (ids, -1: any). */
    static KvSnapshots waitSnapshots(Admin admin, TablePath path, long[] after) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            KvSnapshots ks = admin.getLatestKvSnapshots(path).get(60, TimeUnit.SECONDS);
            boolean all = true;
            for (int b = 0; b < BUCKETS; b++)
                all &= ks.getSnapshotId(b).isPresent() && ks.getSnapshotId(b).getAsLong() > after[b];
            if (all) return ks;
            check(System.currentTimeMillis() < deadline, "no new snapshot of every bucket within 60 s");
            Thread.sleep(200);
        }
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        boolean reference = args.length > 1 && args[1].equals("reference");
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            Admin admin = conn.getAdmin();
            admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true).get(60, TimeUnit.SECONDS);
            TablePath path = TablePath.of(DB, "snap");
            admin.dropTable(path, true).get(60, TimeUnit.SECONDS);
            Schema schema = Schema.newBuilder()
                    .column("id", DataTypes.INT())
                    .column("name", DataTypes.STRING())
                    .column("amount", DataTypes.BIGINT())
                    .primaryKey("id")
                    .build();
            admin.createTable(path, TableDescriptor.builder().schema(schema).distributedBy(BUCKETS).build(),
                    false).get(60, TimeUnit.SECONDS);
            long tableId = admin.getTableInfo(path).get(60, TimeUnit.SECONDS).getTableId();
            Map<Integer, String> expect = new TreeMap<>();
            try (Table table = conn.getTable(path)) {
                UpsertWriter w = table.newUpsert().createWriter();
                for (int i = 0; i < 1000; i++) upsert(w, expect, i, "n-" + i, i);
                for (int i = 0; i < 1000; i += 3) upsert(w, expect, i, "u-" + i, i * 10L);
                for (int i = 0; i < 1000; i += 10) delete(w, expect, i);
                w.flush();

                // snapshots taken after the last write: a snapshot of a state
                // before the flush (a slow machine) holds other counts
                Map<Integer, Long> written = admin.listOffsets(path, List.of(0, 1), new OffsetSpec.LatestSpec())
                        .all().get(60, TimeUnit.SECONDS);
                KvSnapshots ks = waitSnapshots(admin, path, new long[] {-1, -1});
                long snapDeadline = System.currentTimeMillis() + 60_000;
                while (ks.getLogOffset(0).getAsLong() < written.get(0)
                        || ks.getLogOffset(1).getAsLong() < written.get(1)) {
                    check(System.currentTimeMillis() < snapDeadline, "no snapshot covers the writes within 60 s");
                    Thread.sleep(200);
                    ks = waitSnapshots(admin, path, new long[] {-1, -1});
                }
                check(ks.getTableId() == tableId, "snapshots of another table id");
                Map<TableBucket, Long> leased = new HashMap<>();
                long[] logOffset = new long[BUCKETS];
                for (int b = 0; b < BUCKETS; b++) {
                    TableBucket tb = new TableBucket(tableId, b);
                    long id = ks.getSnapshotId(b).getAsLong();
                    KvSnapshotMetadata md = admin.getKvSnapshotMetadata(tb, id).get(60, TimeUnit.SECONDS);
                    check(!md.getSnapshotFiles().isEmpty(), "snapshot " + id + " has no files");
                    check(md.getLogOffset() == ks.getLogOffset(b).getAsLong(),
                            "metadata log offset " + md.getLogOffset() + " != " + ks.getLogOffset(b));
                    leased.put(tb, id);
                    logOffset[b] = md.getLogOffset();
                }
                KvSnapshotLease lease = admin.createKvSnapshotLease("java-kv-lease", 600_000);
                AcquireKvSnapshotLeaseResult res = lease.acquireSnapshots(leased).get(60, TimeUnit.SECONDS);
                check(res.getUnavailableSnapshots().isEmpty(),
                        "existing snapshots reported unavailable: " + res.getUnavailableSnapshots());
                Map<TableBucket, Long> bogus = new HashMap<>();
                bogus.put(new TableBucket(tableId, 0), 999_999L);
                AcquireKvSnapshotLeaseResult res2 = admin.createKvSnapshotLease("java-kv-bogus", 600_000)
                        .acquireSnapshots(bogus).get(60, TimeUnit.SECONDS);
                check(reference || res2.getUnavailableSnapshots().containsKey(new TableBucket(tableId, 0)),
                        "an unknown snapshot was leased: " + res2.getUnavailableSnapshots());

                // more changes after the snapshots; newer snapshots follow
                for (int i = 1000; i < 1200; i++) upsert(w, expect, i, "m-" + i, i);
                for (int i = 1; i < 50; i++) upsert(w, expect, i, "v-" + i, -i);
                for (int i = 501; i < 520; i++) if (expect.containsKey(i)) delete(w, expect, i);
                w.flush();
                long[] old = new long[BUCKETS];
                for (int b = 0; b < BUCKETS; b++) old[b] = leased.get(new TableBucket(tableId, b));
                waitSnapshots(admin, path, old);
                Thread.sleep(1500); // retention has run after the newer snapshots

                // the leased snapshots, read with the client's own RocksDB
                Map<Integer, String> state = new TreeMap<>();
                int fromSnapshot = 0;
                for (int b = 0; b < BUCKETS; b++) {
                    TableBucket tb = new TableBucket(tableId, b);
                    try (BatchScanner s = table.newScan().createBatchScanner(tb, leased.get(tb))) {
                        long deadline = System.currentTimeMillis() + 60_000;
                        CloseableIterator<InternalRow> it;
                        while ((it = s.pollBatch(Duration.ofSeconds(1))) != null) {
                            check(System.currentTimeMillis() < deadline, "snapshot read did not end");
                            while (it.hasNext()) {
                                InternalRow r = it.next();
                                check(state.put(r.getInt(0), show(r)) == null,
                                        "key " + r.getInt(0) + " twice in the snapshots");
                                fromSnapshot++;
                            }
                        }
                    }
                }
                check(fromSnapshot > 0, "the snapshots held no rows");
                System.out.println("snapshot rows: " + fromSnapshot);

                // then the changelog from each snapshot's offset to the end
                Map<Integer, Long> ends = admin.listOffsets(path, List.of(0, 1), new OffsetSpec.LatestSpec())
                        .all().get(60, TimeUnit.SECONDS);
                try (LogScanner scanner = table.newScan().createLogScanner()) {
                    long[] next = logOffset.clone();
                    for (int b = 0; b < BUCKETS; b++) scanner.subscribe(b, logOffset[b]);
                    long deadline = System.currentTimeMillis() + 60_000;
                    int changes = 0;
                    while (next[0] < ends.get(0) || next[1] < ends.get(1)) {
                        check(System.currentTimeMillis() < deadline, "changelog did not reach the end");
                        ScanRecords recs = scanner.poll(Duration.ofMillis(500));
                        for (TableBucket tb : recs.buckets()) {
                            for (ScanRecord r : recs.records(tb)) {
                                int b = tb.getBucket();
                                check(r.logOffset() == next[b],
                                        "changelog gap or repeat at bucket " + b + ": " + r.logOffset()
                                                + " after " + next[b]);
                                next[b] = r.logOffset() + 1;
                                InternalRow row = r.getRow();
                                ChangeType ct = r.getChangeType();
                                if (ct == ChangeType.DELETE) state.remove(row.getInt(0));
                                else if (ct != ChangeType.UPDATE_BEFORE) state.put(row.getInt(0), show(row));
                                changes++;
                            }
                        }
                    }
                    System.out.println("changelog records after the snapshots: " + changes);
                }
                check(state.equals(expect), "snapshot + changelog != rows written: " + diff(state, expect));

                // released, the old snapshots go at the next retention
                lease.releaseSnapshots(leased.keySet()).get(60, TimeUnit.SECONDS);
                long[] now = new long[BUCKETS];
                KvSnapshots cur = admin.getLatestKvSnapshots(path).get(60, TimeUnit.SECONDS);
                for (int b = 0; b < BUCKETS; b++) now[b] = cur.getSnapshotId(b).getAsLong();
                for (int i = 2000; i < 2100; i++) upsert(w, expect, i, "z-" + i, i);
                w.flush();
                waitSnapshots(admin, path, now);
                Thread.sleep(500);
                TableBucket tb0 = new TableBucket(tableId, 0);
                try {
                    admin.getKvSnapshotMetadata(tb0, leased.get(tb0)).get(60, TimeUnit.SECONDS);
                    check(false, "released snapshot " + leased.get(tb0) + " still exists");
                } catch (ExecutionException e) {
                    check(e.getCause() instanceof KvSnapshotNotExistException,
                            "released snapshot: expected KvSnapshotNotExistException, got " + e.getCause());
                }
                lease.dropLease().get(60, TimeUnit.SECONDS);
            }
            System.out.println("JAVA KV SNAPSHOT OK: " + expect.size() + " rows");
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }

    static String diff(Map<Integer, String> got, Map<Integer, String> want) {
        List<String> out = new ArrayList<>();
        Set<Integer> keys = new HashSet<>(got.keySet());
        keys.addAll(want.keySet());
        for (Integer k : new TreeMap<Integer, Integer>() {{ for (Integer x : keys) put(x, x); }}.keySet()) {
            String g = got.get(k), e = want.get(k);
            if (g == null ? e != null : !g.equals(e)) out.add(k + ": got " + g + " want " + e);
            if (out.size() > 10) break;
        }
        return out.toString();
    }
}
