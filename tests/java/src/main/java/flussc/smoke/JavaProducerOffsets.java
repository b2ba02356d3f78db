/*
 * Producer offsets through the official Fluss Java client's Admin
 * (registerProducerOffsets / getProducerOffsets / deleteProducerOffsets,
 * what the Flink sink's undo recovery calls: RecoveryOffsetManager).
 *
 *   all          (default) on java_po.logs (3 buckets, 10 rows appended)
 *                and java_po.parts (partitioned by dt, 2 buckets, two
 *                partitions): register the latest offsets of every bucket
 *                plus one of a table id that does not exist -> CREATED; get
 *                returns exactly them, grouped by table, with an expiration
 *                time about a day ahead; a second register with other
 *                offsets -> ALREADY_EXISTS and nothing changes; an unknown
 *                producer gets null and deletes without error; an invalid
 *                id is refused (InvalidProducerIdException) by all three
 *                calls; empty offsets are an entry; 8 threads registering
 *                one id: exactly one CREATED; dropping a table leaves its
 *                offsets; delete -> get null.
 *   register ID  creates the tables when missing and registers their
 *                offsets under ID (CREATED), checked by a get
 *   verify ID    (e.g. after a restart) get returns what "register"
 *                registered, a register again -> ALREADY_EXISTS, delete ->
 *                get null
 *
 * Prints "JAVA PRODUCER OFFSETS OK" (all), "... REGISTERED" or
 * "... VERIFIED". Exit 0 ok, 1 a check failed, 3 an unexpected exception.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.admin.ProducerOffsetsResult;
import org.apache.fluss.client.admin.RegisterResult;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.exception.InvalidProducerIdException;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.PartitionInfo;
import org.apache.fluss.metadata.PartitionSpec;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.types.DataTypes;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

public final class JavaProducerOffsets {
    static final String DB = "java_po";
    static final TablePath LOGS = TablePath.of(DB, "logs");
    static final TablePath PARTS = TablePath.of(DB, "parts");
    static final String[] DAYS = {"2026-01-01", "2026-01-02"};
    static final long UNKNOWN_TABLE = 987654321L;
    static final long DAY_MS = 24L * 3600 * 1000;

    static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("JAVA PRODUCER OFFSETS FAILED: " + what);
            System.exit(1);
        }
    }

    static <T> T await(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /* java_po.logs and java_po.parts, made when missing (rows only then). */
    static void ensureTables(Connection conn) throws Exception {
        Admin admin = conn.getAdmin();
        await(admin.createDatabase(DB, DatabaseDescriptor.EMPTY, true));
        if (!await(admin.tableExists(LOGS))) {
            Schema schema = Schema.newBuilder().column("id", DataTypes.INT())
                    .column("name", DataTypes.STRING()).build();
            await(admin.createTable(LOGS, TableDescriptor.builder().schema(schema)
                    .distributedBy(3).build(), false));
            try (Table table = conn.getTable(LOGS)) {
                AppendWriter w = table.newAppend().createWriter();
                for (int i = 0; i < 10; i++)
                    w.append(GenericRow.of(i, BinaryString.fromString("row" + i)));
                w.flush();
            }
        }
        if (!await(admin.tableExists(PARTS))) {
            Schema schema = Schema.newBuilder().column("id", DataTypes.INT())
                    .column("dt", DataTypes.STRING()).build();
            await(admin.createTable(PARTS, TableDescriptor.builder().schema(schema)
                    .distributedBy(2).partitionedBy("dt").build(), false));
            for (String day : DAYS)
                await(admin.createPartition(PARTS,
                        new PartitionSpec(Collections.singletonMap("dt", day)), true));
        }
    }

    /* What a sink would register: the latest offset of every bucket of both
     * tables (each partition's too), and one bucket of a table id nobody
     * has (the server does not check table ids). */
    static Map<TableBucket, Long> currentOffsets(Admin admin) throws Exception {
        Map<TableBucket, Long> out = new HashMap<>();
        long logsId = await(admin.getTableInfo(LOGS)).getTableId();
        Map<Integer, Long> ends = await(admin.listOffsets(LOGS, List.of(0, 1, 2),
                new OffsetSpec.LatestSpec()).all());
        long total = 0;
        for (Map.Entry<Integer, Long> e : ends.entrySet()) {
            out.put(new TableBucket(logsId, e.getKey()), e.getValue());
            total += e.getValue();
        }
        check(total == 10, "latest offsets of java_po.logs sum to " + total);
        long partsId = await(admin.getTableInfo(PARTS)).getTableId();
        List<PartitionInfo> infos = await(admin.listPartitionInfos(PARTS));
        check(infos.size() == DAYS.length, "partitions of java_po.parts: " + infos);
        for (PartitionInfo p : infos)
            for (int b = 0; b < 2; b++)
                out.put(new TableBucket(partsId, p.getPartitionId(), b), 1000L * b + 7);
        out.put(new TableBucket(UNKNOWN_TABLE, 0), 42L);
        return out;
    }

    static Map<TableBucket, Long> flatten(ProducerOffsetsResult r) {
        Map<TableBucket, Long> all = new HashMap<>();
        for (Map.Entry<Long, Map<TableBucket, Long>> t : r.getTableOffsets().entrySet())
            for (Map.Entry<TableBucket, Long> b : t.getValue().entrySet()) {
                check(b.getKey().getTableId() == t.getKey(),
                        b.getKey() + " listed under table " + t.getKey());
                all.put(b.getKey(), b.getValue());
            }
        return all;
    }

    static void checkHolds(Admin admin, String id, Map<TableBucket, Long> want, long registeredAt)
            throws Exception {
        ProducerOffsetsResult r = await(admin.getProducerOffsets(id));
        check(r != null, "no offsets for " + id);
        check(r.getProducerId().equals(id), "producer id " + r.getProducerId());
        long exp = r.getExpirationTime();
        check(exp >= registeredAt + DAY_MS - 60_000 && exp <= System.currentTimeMillis() + DAY_MS,
                "expiration time " + exp + " is not a day after registration " + registeredAt);
        Map<TableBucket, Long> got = flatten(r);
        check(got.equals(want), "got " + got + ", registered " + want);
        check(r.getTableOffsets().size() == 3, "tables " + r.getTableOffsets().keySet());
    }

    static void expectInvalidId(Callable<?> call, String what) throws Exception {
        try {
            call.call();
            check(false, what + " accepted an invalid producer id");
        } catch (ExecutionException e) {
            check(e.getCause() instanceof InvalidProducerIdException,
                    what + ": " + e.getCause());
        }
    }

    static void all(Connection conn) throws Exception {
        Admin admin = conn.getAdmin();
        ensureTables(conn);
        Map<TableBucket, Long> offsets = currentOffsets(admin);
        String id = "java-po-" + System.currentTimeMillis();
        long at = System.currentTimeMillis();
        check(await(admin.registerProducerOffsets(id, offsets)) == RegisterResult.CREATED,
                "first register not CREATED");
        checkHolds(admin, id, offsets, at);
        Map<TableBucket, Long> other = new HashMap<>();
        other.put(new TableBucket(1L, 0), 1L);
        check(await(admin.registerProducerOffsets(id, other)) == RegisterResult.ALREADY_EXISTS,
                "second register not ALREADY_EXISTS");
        checkHolds(admin, id, offsets, at);

        String nobody = "java-po-nobody-" + System.currentTimeMillis();
        check(await(admin.getProducerOffsets(nobody)) == null, "offsets for an unknown producer");
        await(admin.deleteProducerOffsets(nobody));

        expectInvalidId(() -> await(admin.registerProducerOffsets("bad id", offsets)), "register");
        expectInvalidId(() -> await(admin.getProducerOffsets("a/b")), "get");
        expectInvalidId(() -> await(admin.deleteProducerOffsets("..")), "delete");

        String empty = id + "-empty";
        check(await(admin.registerProducerOffsets(empty, new HashMap<>())) == RegisterResult.CREATED,
                "empty register not CREATED");
        ProducerOffsetsResult e = await(admin.getProducerOffsets(empty));
        check(e != null && e.getTableOffsets().isEmpty(), "empty entry: " + e);
        await(admin.deleteProducerOffsets(empty));

        // racing registers of one id: exactly one creates it
        String raced = id + "-raced";
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<RegisterResult>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Map<TableBucket, Long> mine = Collections.singletonMap(new TableBucket(1L, i), (long) i);
            results.add(pool.submit(() -> await(admin.registerProducerOffsets(raced, mine))));
        }
        int created = 0;
        for (Future<RegisterResult> f : results) created += f.get() == RegisterResult.CREATED ? 1 : 0;
        pool.shutdown();
        check(created == 1, created + " of 8 racing registers CREATED");
        check(flatten(await(admin.getProducerOffsets(raced))).size() == 1, "raced entry");
        await(admin.deleteProducerOffsets(raced));

        // dropping a table leaves its offsets (no cleanup on drop in 0.9.1)
        await(admin.dropTable(LOGS, false));
        checkHolds(admin, id, offsets, at);

        await(admin.deleteProducerOffsets(id));
        check(await(admin.getProducerOffsets(id)) == null, "offsets after delete");
        await(admin.deleteProducerOffsets(id));
        await(admin.dropTable(PARTS, true));
        System.out.println("JAVA PRODUCER OFFSETS OK");
    }

    static void register(Connection conn, String id) throws Exception {
        Admin admin = conn.getAdmin();
        ensureTables(conn);
        Map<TableBucket, Long> offsets = currentOffsets(admin);
        long at = System.currentTimeMillis();
        check(await(admin.registerProducerOffsets(id, offsets)) == RegisterResult.CREATED,
                "register not CREATED");
        checkHolds(admin, id, offsets, at);
        System.out.println("JAVA PRODUCER OFFSETS REGISTERED");
    }

    static void verify(Connection conn, String id) throws Exception {
        Admin admin = conn.getAdmin();
        Map<TableBucket, Long> offsets = currentOffsets(admin);
        checkHolds(admin, id, offsets, System.currentTimeMillis() - 10 * 60_000);
        check(await(admin.registerProducerOffsets(id, new HashMap<>()))
                == RegisterResult.ALREADY_EXISTS, "register after restart not ALREADY_EXISTS");
        checkHolds(admin, id, offsets, System.currentTimeMillis() - 10 * 60_000);
        await(admin.deleteProducerOffsets(id));
        check(await(admin.getProducerOffsets(id)) == null, "offsets after delete");
        System.out.println("JAVA PRODUCER OFFSETS VERIFIED");
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: JavaProducerOffsets HOST:PORT [all | register ID | verify ID]");
            System.exit(2);
        }
        String mode = args.length > 1 ? args[1] : "all";
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        try (Connection conn = ConnectionFactory.createConnection(conf)) {
            if (mode.equals("all")) all(conn);
            else if (mode.equals("register")) register(conn, args[2]);
            else if (mode.equals("verify")) verify(conn, args[2]);
            else {
                System.err.println("unknown mode " + mode);
                System.exit(2);
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(3);
        }
        System.exit(0);
    }
}
