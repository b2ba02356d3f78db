/*
 * ACLs through the official Fluss Java client (0.9.1): the cases of Fluss
 * 0.9.1's FlussAuthorizationITCase that apply to one coordinator and one
 * tablet server without lake, rebalance or cluster-config features, played
 * as a black box (tests/interop/test_security_acl.py compares every step
 * with what the reference server answered).
 *
 * The server: SASL/PLAIN on the client listener with the users root/password
 * and guest/password2, super.users=User:root, authorizer.enabled=true (see
 * test_security_acl.py). Each case runs on fresh root and guest connections
 * (the ITCase's @BeforeEach): root creates the database DB (a run-unique
 * name, the ITCase's test_db_1) and the primary-key table
 * DB.test_pk_table_1 (a INT, b STRING, key a, 3 buckets) when missing, and
 * after the case root drops every ACL (dropAcls([AclBindingFilter.ANY]),
 * the ITCase's @AfterEach).
 *
 * ACL changes reach the tablet servers of the reference asynchronously
 * (ZooKeeper notifications; the ITCase waits with waitUntilAuthenticationSync),
 * and the Java client sends much to a tablet server (getTableInfo,
 * getTableSchema, getDatabaseInfo, listTables, listDatabases, ... go to its
 * AdminReadOnlyGateway). So after every ACL change this program waits (up to
 * 5 s) until the tablet server's LIST_ACLS (asked as root) equals the
 * coordinator's; a "sync" line is printed only when that fails. Steps that
 * depend on the client's own metadata (appends, scans) and follow a grant
 * are also retried for up to 5 s until they give the outcome the ITCase
 * expects; the last attempt is printed.
 *
 * Usage: java flussc.smoke.JavaAcl HOST:PORT DB [CASE,CASE...|all]
 *        java flussc.smoke.JavaAcl HOST:PORT DB --no-authorizer
 *   --no-authorizer: the server runs without authorizer.enabled; only
 *   testNoAuthorizer runs (and that case runs only then).
 *
 * Prints one JSON line per step of each case:
 *   {"case":"testX","step":N,"what":"...","outcome":"ok"|"error",
 *    "error_class":"...","message":"...","result":"...","chain":[[class,msg],...]}
 * error_class/message: the root cause of the failure (the exception the
 * client made of the server's answer); chain: every cause, outermost first.
 * result: a rendering of the value (lists sorted), or null; "ms": the time
 * since the previous line. A failure in a case's own setup, teardown or ACL
 * sync prints a line whose step is "setup", "teardown", "sync" or "crash",
 * which the caller does not expect. Exit 0 when the run went through (good
 * or bad answers alike), 2 on usage errors.
 */
package flussc.smoke;

import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.FlussConnection;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.admin.FlussAdmin;
import org.apache.fluss.client.admin.KvSnapshotLease;
import org.apache.fluss.client.admin.OffsetSpec;
import org.apache.fluss.client.lookup.LookupResult;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.metadata.AcquireKvSnapshotLeaseResult;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.client.table.scanner.batch.BatchScanner;
import org.apache.fluss.client.table.writer.AppendWriter;
import org.apache.fluss.client.table.writer.UpsertWriter;
import org.apache.fluss.client.utils.ClientRpcMessageUtils;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.DatabaseDescriptor;
import org.apache.fluss.metadata.Schema;
import org.apache.fluss.metadata.TableBucket;
import org.apache.fluss.metadata.TableChange;
import org.apache.fluss.metadata.TableDescriptor;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.BinaryString;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.rpc.gateway.AdminGateway;
import org.apache.fluss.rpc.gateway.AdminReadOnlyGateway;
import org.apache.fluss.rpc.gateway.TabletServerGateway;
import org.apache.fluss.rpc.messages.GetKvSnapshotMetadataRequest;
import org.apache.fluss.rpc.messages.InitWriterRequest;
import org.apache.fluss.rpc.messages.ListAclsRequest;
import org.apache.fluss.rpc.messages.MetadataRequest;
import org.apache.fluss.rpc.messages.ReleaseKvSnapshotLeaseRequest;
import org.apache.fluss.rpc.util.CommonRpcMessageUtils;
import org.apache.fluss.security.acl.AccessControlEntry;
import org.apache.fluss.security.acl.AccessControlEntryFilter;
import org.apache.fluss.security.acl.AclBinding;
import org.apache.fluss.security.acl.AclBindingFilter;
import org.apache.fluss.security.acl.FlussPrincipal;
import org.apache.fluss.security.acl.OperationType;
import org.apache.fluss.security.acl.PermissionType;
import org.apache.fluss.security.acl.Resource;
import org.apache.fluss.security.acl.ResourceFilter;
import org.apache.fluss.security.acl.ResourceType;
import org.apache.fluss.types.DataTypes;
import org.apache.fluss.utils.CloseableIterator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

public final class JavaAcl {
    static final long CALL_TIMEOUT_S = 20;
    static final long SYNC_TIMEOUT_MS = 5000;
    static final FlussPrincipal GUEST = new FlussPrincipal("guest", "User");
    static final String AUTHZ = "org.apache.fluss.exception.AuthorizationException";

    static String bootstrap;
    static String db;
    static TablePath pk; // the ITCase's DATA1_TABLE_PATH_PK
    static TablePath log; // the ITCase's DATA1_TABLE_PATH

    // per case (the ITCase's @BeforeEach)
    static Connection rootConn;
    static Admin root;
    static Connection guestConn;
    static Admin guest;
    static String kase;
    static boolean noAuthorizer;
    static long lastEmit = System.nanoTime();
    /** The tablet server did not answer LIST_ACLS: sync() sleeps instead. */
    static boolean syncBroken;

    // ------------------------------------------------------------------
    // output
    // ------------------------------------------------------------------

    static String json(String s) {
        return JsonText.json(s);
    }

    interface Call {
        Object run() throws Exception;
    }

    static final class Outcome {
        boolean ok;
        String result;
        Throwable error;

        Throwable root() {
            Throwable t = error;
            while (t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            return t;
        }

        String errorClass() {
            return ok ? null : root().getClass().getName();
        }

        String message() {
            return ok ? null : root().getMessage();
        }
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static Outcome attempt(Call call) {
        Outcome o = new Outcome();
        try {
            Object r = call.run();
            o.ok = true;
            o.result = r == null ? null : r.toString();
        } catch (Throwable t) {
            o.ok = false;
            o.error = unwrap(t);
        }
        return o;
    }

    static void emit(String step, String what, Outcome o) {
        long ms = (System.nanoTime() - lastEmit) / 1_000_000;
        lastEmit = System.nanoTime();
        StringBuilder b = new StringBuilder("{\"case\":").append(json(kase));
        b.append(",\"step\":").append(step.matches("\\d+") ? step : json(step));
        b.append(",\"what\":").append(json(what));
        b.append(",\"outcome\":").append(json(o.ok ? "ok" : "error"));
        b.append(",\"error_class\":").append(json(o.errorClass()));
        b.append(",\"message\":").append(json(o.message()));
        b.append(",\"result\":").append(json(o.result));
        b.append(",\"ms\":").append(ms);
        if (!o.ok) {
            List<String> chain = new ArrayList<>();
            for (Throwable c = o.error; c != null && chain.size() < 10; c = c.getCause()) {
                chain.add("[" + json(c.getClass().getName()) + "," + json(c.getMessage()) + "]");
                if (c.getCause() == c) {
                    break;
                }
            }
            b.append(",\"chain\":[").append(String.join(",", chain)).append("]");
        }
        System.out.println(b.append("}"));
        System.out.flush();
    }

    /** One step: run it once and print its outcome. */
    static Outcome step(int n, String what, Call call) {
        Outcome o = attempt(call);
        emit(Integer.toString(n), what, o);
        return o;
    }

    /**
     * A step answered after an ACL change that may not have reached the
     * server yet: retried until `done` holds or SYNC_TIMEOUT_MS passed; the
     * last attempt is printed.
     */
    static Outcome stepUntil(int n, String what, Call call, Predicate<Outcome> done) {
        long deadline = System.currentTimeMillis() + SYNC_TIMEOUT_MS;
        Outcome o;
        while (true) {
            o = attempt(call);
            if (done.test(o) || System.currentTimeMillis() >= deadline) {
                break;
            }
            sleep(100);
        }
        emit(Integer.toString(n), what, o);
        return o;
    }

    static Predicate<Outcome> isOk() {
        return o -> o.ok;
    }

    static Predicate<Outcome> okWith(String result) {
        return o -> o.ok && Objects.equals(o.result, result);
    }

    /** Anything but an authorization failure (the ITCase's "not denied"). */
    static Predicate<Outcome> notDenied() {
        return o -> o.ok || !AUTHZ.equals(o.errorClass());
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
    }

    // ------------------------------------------------------------------
    // renderings
    // ------------------------------------------------------------------

    static String sorted(Collection<?> items) {
        List<String> out = new ArrayList<>();
        for (Object o : items) {
            out.add(String.valueOf(o));
        }
        Collections.sort(out);
        return out.toString();
    }

    /** TYPE:name principalType:principalName@host OPERATION PERMISSION */
    static String binding(AclBinding b) {
        AccessControlEntry e = b.getAccessControlEntry();
        return b.getResource().getType() + ":" + b.getResource().getName() + " "
                + e.getPrincipal().getType() + ":" + e.getPrincipal().getName() + "@"
                + e.getHost() + " " + e.getOperationType() + " " + e.getPermissionType();
    }

    static String bindings(Collection<AclBinding> bs) {
        List<String> out = new ArrayList<>();
        for (AclBinding b : bs) {
            out.add(binding(b));
        }
        Collections.sort(out);
        return out.toString();
    }

    // ------------------------------------------------------------------
    // connections, tables, ACLs
    // ------------------------------------------------------------------

    static Configuration config(String user, String password) {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", bootstrap);
        conf.setString("client.security.protocol", "sasl");
        conf.setString("client.security.sasl.mechanism", "plain");
        conf.setString("client.security.sasl.username", user);
        conf.setString("client.security.sasl.password", password);
        // the ITCase's small writer buffers
        conf.setString("client.writer.buffer.memory-size", "1mb");
        conf.setString("client.writer.batch-size", "1kb");
        return conf;
    }

    static void openConnections() throws Exception {
        rootConn = ConnectionFactory.createConnection(config("root", "password"));
        root = rootConn.getAdmin();
        guestConn = ConnectionFactory.createConnection(config("guest", "password2"));
        guest = guestConn.getAdmin();
    }

    /**
     * Closed on a daemon thread: a connection's close waits out its network
     * threads' quiet period (about 2 s each), which the cases need not wait for.
     */
    static void closeConnections() {
        AutoCloseable[] all = {guest, guestConn, root, rootConn};
        Thread closer = new Thread(() -> {
            for (AutoCloseable c : all) {
                if (c != null) {
                    try {
                        c.close();
                    } catch (Exception ignored) {
                        // best effort
                    }
                }
            }
        }, "acl-closer");
        closer.setDaemon(true);
        closer.start();
        guest = null;
        guestConn = null;
        root = null;
        rootConn = null;
    }

    static Schema pkSchema() {
        return Schema.newBuilder()
                .column("a", DataTypes.INT())
                .withComment("a is first column")
                .column("b", DataTypes.STRING())
                .withComment("b is second column")
                .primaryKey("a")
                .build();
    }

    static Schema logSchema() {
        return Schema.newBuilder()
                .column("a", DataTypes.INT())
                .withComment("a is first column")
                .column("b", DataTypes.STRING())
                .withComment("b is second column")
                .build();
    }

    static TableDescriptor pkDescriptor() {
        return TableDescriptor.builder().schema(pkSchema()).distributedBy(3, "a").build();
    }

    /** The ITCase's TableDescriptor.builder().schema(DATA1_SCHEMA).distributedBy(1). */
    static TableDescriptor logDescriptor() {
        return TableDescriptor.builder().schema(logSchema()).distributedBy(1).build();
    }

    static AclBinding allow(Resource r, FlussPrincipal p, OperationType op) {
        return new AclBinding(r, new AccessControlEntry(p, "*", op, PermissionType.ALLOW));
    }

    /** root grants `op` on `r` to the guest (host *): a step of its own. */
    static Outcome grant(int n, Resource r, OperationType op) {
        return grant(n, allow(r, GUEST, op));
    }

    static Outcome grant(int n, AclBinding... bs) {
        List<AclBinding> list = Arrays.asList(bs);
        String what = "root createAcls " + bindings(list);
        Outcome o = step(n, what, () -> {
            await(root.createAcls(list).all());
            return null;
        });
        sync();
        return o;
    }

    /** The ACLs the tablet server holds (LIST_ACLS answered by it, as root). */
    static String tabletAcls() throws Exception {
        AdminReadOnlyGateway ts = ((FlussAdmin) root).getAdminReadOnlyGateway();
        ListAclsRequest req = new ListAclsRequest()
                .setAclFilter(CommonRpcMessageUtils.toPbAclFilter(AclBindingFilter.ANY));
        return bindings(CommonRpcMessageUtils.toAclBindings(await(ts.listAcls(req)).getAclsList()));
    }

    /**
     * The ITCase's waitUntilAuthenticationSync: after an ACL change, wait
     * (up to SYNC_TIMEOUT_MS) until the tablet server lists the same ACLs
     * as the coordinator. Prints a "sync" line only when that fails.
     */
    static void sync() {
        if (syncBroken) {
            sleep(300);
            return;
        }
        long deadline = System.currentTimeMillis() + SYNC_TIMEOUT_MS;
        Outcome o;
        while (true) {
            o = attempt(() -> {
                String coordinator = bindings(await(root.listAcls(AclBindingFilter.ANY)));
                String tablet = tabletAcls();
                return coordinator.equals(tablet) ? null
                        : "coordinator=" + coordinator + " tablet=" + tablet;
            });
            if ((o.ok && o.result == null) || System.currentTimeMillis() >= deadline) {
                break;
            }
            if (!o.ok) {
                syncBroken = true;
                break;
            }
            sleep(50);
        }
        if (!o.ok || o.result != null) {
            emit("sync", "the tablet server lists the coordinator's ACLs", o);
        }
    }

    static long tableId(TablePath path) throws Exception {
        return await(root.getTableInfo(path)).getTableId();
    }

    static GenericRow row(int a, String b) {
        GenericRow r = new GenericRow(2);
        r.setField(0, a);
        r.setField(1, BinaryString.fromString(b));
        return r;
    }

    static String rowText(InternalRow r) {
        return "(" + r.getInt(0) + "," + r.getString(1) + ")";
    }

    static Object appendOne(Connection conn, TablePath path) throws Exception {
        try (Table table = conn.getTable(path)) {
            AppendWriter w = table.newAppend().createWriter();
            await(w.append(row(1, "a")));
            return null;
        }
    }

    static String limitScan(Connection conn, TablePath path) throws Exception {
        try (Table table = conn.getTable(path)) {
            TableBucket tb = new TableBucket(table.getTableInfo().getTableId(), 0);
            try (BatchScanner s = table.newScan().limit(1).createBatchScanner(tb)) {
                List<String> rows = new ArrayList<>();
                CloseableIterator<InternalRow> it = s.pollBatch(Duration.ofSeconds(CALL_TIMEOUT_S));
                if (it != null) {
                    while (it.hasNext()) {
                        rows.add(rowText(it.next()));
                    }
                    it.close();
                }
                return "rows=" + rows;
            }
        }
    }

    static InitWriterRequest initWriterRequest(TablePath... paths) {
        InitWriterRequest req = new InitWriterRequest();
        for (TablePath p : paths) {
            req.addTablePath().setDatabaseName(p.getDatabaseName()).setTableName(p.getTableName());
        }
        return req;
    }

    static TabletServerGateway guestTablet() {
        return ((FlussConnection) guestConn).getMetadataUpdater().newTabletServerClientForNode(0);
    }

    static Object initWriter(TabletServerGateway gw, InitWriterRequest req) throws Exception {
        long id = await(gw.initWriter(req)).getWriterId();
        return "writer_id>=0:" + (id >= 0);
    }

    /** The guest's view of DB's tables (answered by a tablet server). */
    static String guestTables() throws Exception {
        return sorted(await(guest.listTables(db)));
    }

    // ------------------------------------------------------------------
    // case frame
    // ------------------------------------------------------------------

    /** The ITCase's @BeforeEach, plus the barrier described above. */
    static boolean setUp() {
        Outcome o = attempt(() -> {
            openConnections();
            await(root.createDatabase(db, DatabaseDescriptor.EMPTY, true));
            await(root.createTable(pk, pkDescriptor(), true));
            return null;
        });
        if (!o.ok) {
            emit("setup", "connections, database and PK table", o);
            return false;
        }
        return true;
    }

    /** The ITCase's @AfterEach. */
    static void tearDown() {
        if (root != null) {
            Outcome o = attempt(() -> await(root.dropAcls(
                    Collections.singletonList(AclBindingFilter.ANY)).all()));
            if (!o.ok) {
                emit("teardown", "root dropAcls([ANY])", o);
            }
            sync();
        }
        closeConnections();
    }

    // ------------------------------------------------------------------
    // the cases
    // ------------------------------------------------------------------

    static void testAclOperation() {
        step(1, "guest listAcls(ANY)", () -> bindings(await(guest.listAcls(AclBindingFilter.ANY))));
        grant(2, Resource.cluster(), OperationType.DESCRIBE);
        step(3, "guest listAcls(ANY)", () -> bindings(await(guest.listAcls(AclBindingFilter.ANY))));

        FlussPrincipal user1 = new FlussPrincipal("user1", "User");
        FlussPrincipal role = new FlussPrincipal("ROLE", "test_role");
        AclBinding user1Binding = new AclBinding(Resource.table("test_db", "test_table"),
                new AccessControlEntry(user1, "*", OperationType.CREATE, PermissionType.ALLOW));
        List<AclBinding> three = Arrays.asList(
                user1Binding,
                new AclBinding(Resource.database("test_db2"),
                        new AccessControlEntry(role, "127.0.0.1", OperationType.DROP,
                                PermissionType.ANY)),
                new AclBinding(Resource.cluster(),
                        new AccessControlEntry(role, "127.0.0.1", OperationType.DROP,
                                PermissionType.ALLOW)));
        step(4, "guest createAcls(3 bindings) without ALTER", () -> {
            await(guest.createAcls(three).all());
            return null;
        });
        grant(5, allow(Resource.cluster(), FlussPrincipal.WILD_CARD_PRINCIPAL, OperationType.ALTER));
        step(6, "guest createAcls(3 bindings) with ALTER for *:*", () -> {
            await(guest.createAcls(three).all());
            return null;
        });
        sync();
        step(7, "guest listAcls(user1, host null, ANY, ALLOW)", () -> bindings(await(guest.listAcls(
                new AclBindingFilter(ResourceFilter.ANY, new AccessControlEntryFilter(
                        user1, null, OperationType.ANY, PermissionType.ALLOW))))));
        Outcome all = step(8, "root listAcls(ANY)",
                () -> bindings(await(root.listAcls(AclBindingFilter.ANY))));
        step(9, "guest dropAcls([ANY]) (deleted bindings)", () -> {
            String dropped = bindings(await(guest.dropAcls(
                    Collections.singletonList(AclBindingFilter.ANY)).all()));
            return dropped + (dropped.equals(all.result) ? " (= root's list)" : " (!= root's list)");
        });
        sync();
        step(10, "root listAcls(ANY)", () -> bindings(await(root.listAcls(AclBindingFilter.ANY))));
    }

    static void testAlterDatabase() {
        String d1 = db + "-database1";
        String d2 = db + "-database2";
        step(1, "guest createDatabase(" + d1 + ")", () -> {
            await(guest.createDatabase(d1, DatabaseDescriptor.EMPTY, false));
            return null;
        });
        grant(2, Resource.cluster(), OperationType.CREATE);
        step(3, "guest createDatabase(" + d2 + ")", () -> {
            await(guest.createDatabase(d2, DatabaseDescriptor.EMPTY, false));
            return null;
        });
        step(4, "root databaseExists(" + d1 + ")", () -> await(root.databaseExists(d1)));
        step(5, "root databaseExists(" + d2 + ")", () -> await(root.databaseExists(d2)));
        attempt(() -> await(root.dropDatabase(d1, true, true)));
        attempt(() -> await(root.dropDatabase(d2, true, true)));
    }

    static void testListDatabases() {
        step(1, "guest listDatabases", () -> sorted(await(guest.listDatabases())));
        Outcome rootDbs = step(2, "root listDatabases contains fluss and DB", () -> {
            List<String> dbs = await(root.listDatabases());
            return "fluss:" + dbs.contains("fluss") + " db:" + dbs.contains(db);
        });
        grant(3, Resource.database("fluss"), OperationType.DESCRIBE);
        stepUntil(4, "guest listDatabases", () -> sorted(await(guest.listDatabases())),
                okWith("[fluss]"));
        grant(5, Resource.cluster(), OperationType.ALL);
        stepUntil(6, "guest listDatabases equals root's", () -> {
            String mine = sorted(await(guest.listDatabases()));
            String roots = sorted(await(root.listDatabases()));
            return "same_as_root:" + mine.equals(roots) + " db:" + mine.contains(db);
        }, okWith("same_as_root:true db:true"));
    }

    static void testAlterTable() {
        step(1, "guest createTable(DB.test_non_pk_table_1)", () -> {
            await(guest.createTable(log, logDescriptor(), false));
            return null;
        });
        step(2, "root tableExists(DB.test_non_pk_table_1)", () -> await(root.tableExists(log)));
        grant(3, Resource.database(db), OperationType.CREATE);
        step(4, "guest createTable(DB.test_non_pk_table_1)", () -> {
            await(guest.createTable(log, logDescriptor(), false));
            return null;
        });
        step(5, "root tableExists(DB.test_non_pk_table_1)", () -> await(root.tableExists(log)));
        attempt(() -> await(root.dropTable(log, true)));
    }

    static void testDescribeTableOperation() {
        step(1, "guest listTables(DB)", JavaAcl::guestTables);
        step(2, "guest getTableInfo(PK)", () -> await(guest.getTableInfo(pk)).getTablePath());
        step(3, "guest getTableSchema(PK)", () -> await(guest.getTableSchema(pk)).getSchema()
                .getColumnNames());
        step(4, "guest getLatestKvSnapshots(PK)", () -> sorted(await(guest.getLatestKvSnapshots(pk))
                .getBucketIds()));
        step(5, "guest listPartitionInfos(PK)", () -> await(guest.listPartitionInfos(pk)).size());
        step(6, "guest getLatestLakeSnapshot(PK)", () -> await(guest.getLatestLakeSnapshot(pk))
                .getSnapshotId());
        grant(7, Resource.database(db), OperationType.DESCRIBE);
        stepUntil(8, "guest listTables(DB)", JavaAcl::guestTables, okWith("[test_pk_table_1]"));
        step(9, "guest getTableInfo(PK)", () -> await(guest.getTableInfo(pk)).getTablePath());
        step(10, "guest getTableSchema(PK)", () -> {
            Schema s = await(guest.getTableSchema(pk)).getSchema();
            return s.getColumnNames() + " pk=" + s.getPrimaryKeyColumnNames()
                    + " equals_created:" + s.equals(pkSchema());
        });
        stepUntil(11, "guest tableExists(PK)", () -> await(guest.tableExists(pk)), okWith("true"));
        step(12, "guest getLatestKvSnapshots(PK)", () -> sorted(await(guest.getLatestKvSnapshots(pk))
                .getBucketIds()));
        step(13, "guest listPartitionInfos(PK)", () -> await(guest.listPartitionInfos(pk)).size());
        step(14, "guest getLatestLakeSnapshot(PK)", () -> await(guest.getLatestLakeSnapshot(pk))
                .getSnapshotId());
    }

    static void testGetKvSnapshotMetadata() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        AdminReadOnlyGateway coordinator = ((FlussAdmin) guest).getAdminGateway();
        AdminReadOnlyGateway tablet = ((FlussAdmin) guest).getAdminReadOnlyGateway();
        Call onCoordinator = () -> {
            GetKvSnapshotMetadataRequest req = new GetKvSnapshotMetadataRequest();
            req.setTableId(tableId).setBucketId(0).setSnapshotId(0);
            return await(coordinator.getKvSnapshotMetadata(req)).getLogOffset();
        };
        Call onTablet = () -> {
            GetKvSnapshotMetadataRequest req = new GetKvSnapshotMetadataRequest();
            req.setTableId(tableId).setBucketId(0).setSnapshotId(0);
            return await(tablet.getKvSnapshotMetadata(req)).getLogOffset();
        };
        step(1, "guest getKvSnapshotMetadata(PK, 0, 0) on the coordinator", onCoordinator);
        step(2, "guest getKvSnapshotMetadata(PK, 0, 0) on the tablet server", onTablet);
        grant(3, Resource.database(db), OperationType.DESCRIBE);
        stepUntil(4, "guest getKvSnapshotMetadata(PK, 0, 0) on the coordinator", onCoordinator,
                notDenied());
        stepUntil(5, "guest getKvSnapshotMetadata(PK, 0, 0) on the tablet server", onTablet,
                notDenied());
    }

    static void testGetMetaInfo() {
        AdminGateway gw = ((FlussConnection) guestConn).getMetadataUpdater()
                .newCoordinatorServerClient();
        Call metadata = () -> {
            MetadataRequest req = ClientRpcMessageUtils.makeMetadataRequest(
                    Collections.singleton(pk), null, null);
            return "table_metadata=" + await(gw.metadata(req)).getTableMetadatasList().size();
        };
        step(1, "guest metadata([PK]) on the coordinator", metadata);
        grant(2, Resource.table(pk), OperationType.DESCRIBE);
        stepUntil(3, "guest metadata([PK]) on the coordinator", metadata,
                okWith("table_metadata=1"));
    }

    static void testInitWriter() {
        TablePath writeAcl = TablePath.of(db, "write_acl_table");
        TablePath noWriteAcl = TablePath.of(db, "no_write_acl_table");
        step(1, "root createTable(DB.write_acl_table)", () -> {
            await(root.createTable(writeAcl, logDescriptor(), false));
            return null;
        });
        grant(2, Resource.table(writeAcl), OperationType.WRITE);
        TabletServerGateway ts = guestTablet();
        step(3, "guest initWriter([]) on tablet server 0",
                () -> initWriter(ts, initWriterRequest()));
        step(4, "guest initWriter([no_write_acl_table])",
                () -> initWriter(ts, initWriterRequest(noWriteAcl)));
        stepUntil(5, "guest initWriter([write_acl_table, no_write_acl_table])",
                () -> initWriter(ts, initWriterRequest(writeAcl, noWriteAcl)), isOk());
    }

    static void testProduceWithNoWriteAuthorization() {
        TablePath writeAcl = TablePath.of(db, "write_acl_table_1");
        TablePath noWriteAcl = TablePath.of(db, "no_write_acl_table_1");
        step(1, "root createTable(write_acl_table_1, no_write_acl_table_1)", () -> {
            await(root.createTable(writeAcl, logDescriptor(), false));
            await(root.createTable(noWriteAcl, logDescriptor(), false));
            return null;
        });
        grant(2, Resource.table(writeAcl), OperationType.WRITE);
        grant(3, Resource.table(noWriteAcl), OperationType.READ);
        // waitUntilAuthenticationSync: the tablet server has both grants
        // when the guest sees both tables (WRITE and READ imply DESCRIBE)
        stepUntil(4, "guest listTables(DB) (sync)", JavaAcl::guestTables,
                okWith("[no_write_acl_table_1, write_acl_table_1]"));
        step(5, "guest append to no_write_acl_table_1", () -> appendOne(guestConn, noWriteAcl));
        step(6, "guest append to write_acl_table_1", () -> appendOne(guestConn, writeAcl));
        step(7, "guest append to no_write_acl_table_1 again",
                () -> appendOne(guestConn, noWriteAcl));
    }

    static void testProduceAndConsumer() {
        step(1, "root createTable(DB.test_non_pk_table_1)", () -> {
            await(root.createTable(log, logDescriptor(), false));
            return null;
        });
        grant(2, Resource.table(log), OperationType.WRITE);
        stepUntil(3, "guest append row(1,a) to DB.test_non_pk_table_1",
                () -> appendOne(guestConn, log), isOk());
        step(4, "guest limit(1) batch scan of bucket 0", () -> limitScan(guestConn, log));
        grant(5, Resource.table(log), OperationType.READ);
        stepUntil(6, "guest limit(1) batch scan of bucket 0", () -> limitScan(guestConn, log),
                okWith("rows=[(1,a)]"));
    }

    static Map<TableBucket, Long> bucket0(long tableId, long value) {
        Map<TableBucket, Long> m = new HashMap<>();
        m.put(new TableBucket(tableId, 0), value);
        return m;
    }

    static String acquired(AcquireKvSnapshotLeaseResult r) {
        List<String> out = new ArrayList<>();
        for (TableBucket tb : r.getUnavailableTableBucketSet()) {
            out.add("bucket " + tb.getBucket());
        }
        Collections.sort(out);
        return "unavailable=" + out;
    }

    static void testAcquireKvSnapshotLease() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        String leaseId = db + "-acquire-lease";
        KvSnapshotLease lease = guest.createKvSnapshotLease(leaseId, Duration.ofDays(1).toMillis());
        step(1, "guest acquireSnapshots({(PK,0):0})",
                () -> acquired(await(lease.acquireSnapshots(bucket0(tableId, 0)))));
        grant(2, Resource.table(pk), OperationType.READ);
        stepUntil(3, "guest acquireSnapshots({(PK,0):0})",
                () -> acquired(await(lease.acquireSnapshots(bucket0(tableId, 0)))), isOk());
        step(4, "guest dropLease", () -> {
            await(guest.createKvSnapshotLease(leaseId, Duration.ofDays(1).toMillis()).dropLease());
            return null;
        });
    }

    static void testReleaseKvSnapshotLease() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        AdminGateway gw = ((FlussAdmin) guest).getAdminGateway();
        Call release = () -> {
            ReleaseKvSnapshotLeaseRequest req = ClientRpcMessageUtils
                    .makeReleaseKvSnapshotLeaseRequest(db + "-release-lease",
                            Collections.singleton(new TableBucket(tableId, 0)));
            await(gw.releaseKvSnapshotLease(req));
            return null;
        };
        step(1, "guest releaseKvSnapshotLease(lease, {(PK,0)}) (raw)", release);
        grant(2, Resource.table(pk), OperationType.READ);
        stepUntil(3, "guest releaseKvSnapshotLease(lease, {(PK,0)}) (raw)", release, isOk());
    }

    static void testDropKvSnapshotLease() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        KvSnapshotLease lease = guest.createKvSnapshotLease(db + "-drop-lease",
                Duration.ofDays(1).toMillis());
        step(1, "guest dropLease of a lease that does not exist", () -> {
            await(lease.dropLease());
            return null;
        });
        grant(2, Resource.table(pk), OperationType.READ);
        stepUntil(3, "guest acquireSnapshots({(PK,0):0})",
                () -> acquired(await(lease.acquireSnapshots(bucket0(tableId, 0)))), isOk());
        step(4, "root dropAcls([ANY]) (deleted bindings)", () -> bindings(await(root.dropAcls(
                Collections.singletonList(AclBindingFilter.ANY)).all())));
        sync();
        step(5, "guest dropLease", () -> {
            await(lease.dropLease());
            return null;
        });
        grant(6, Resource.table(pk), OperationType.READ);
        stepUntil(7, "guest dropLease", () -> {
            await(lease.dropLease());
            return null;
        }, isOk());
    }

    static void testRegisterProducerOffsets() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        String producer = db + "-register";
        step(1, "guest registerProducerOffsets({(PK,0):100})",
                () -> await(guest.registerProducerOffsets(producer, bucket0(tableId, 100))));
        grant(2, Resource.table(pk), OperationType.WRITE);
        stepUntil(3, "guest registerProducerOffsets({(PK,0):100})",
                () -> await(guest.registerProducerOffsets(producer, bucket0(tableId, 100))),
                isOk());
        step(4, "root deleteProducerOffsets", () -> {
            await(root.deleteProducerOffsets(producer));
            return null;
        });
    }

    static void testDeleteProducerOffsets() {
        Outcome idOutcome = attempt(() -> tableId(pk));
        if (!idOutcome.ok) {
            emit("setup", "root getTableInfo(PK)", idOutcome);
            return;
        }
        long tableId = Long.parseLong(idOutcome.result);
        String producer = db + "-delete";
        step(1, "root registerProducerOffsets({(PK,0):100})",
                () -> await(root.registerProducerOffsets(producer, bucket0(tableId, 100))));
        step(2, "guest deleteProducerOffsets", () -> {
            await(guest.deleteProducerOffsets(producer));
            return null;
        });
        grant(3, Resource.table(pk), OperationType.WRITE);
        stepUntil(4, "guest deleteProducerOffsets", () -> {
            await(guest.deleteProducerOffsets(producer));
            return null;
        }, isOk());
    }

    /** Beyond the ITCase: the other table and database checks of 0.9.1. */
    static void extraTableChecks() {
        step(1, "guest getDatabaseInfo(DB)", () -> await(guest.getDatabaseInfo(db))
                .getDatabaseName());
        step(2, "guest databaseExists(DB)", () -> await(guest.databaseExists(db)));
        step(3, "guest tableExists(PK)", () -> await(guest.tableExists(pk)));
        step(4, "guest alterTable(PK, set x.custom=v)", () -> {
            await(guest.alterTable(pk, Collections.singletonList(
                    TableChange.set("x.custom", "v")), false));
            return null;
        });
        step(5, "guest dropTable(PK)", () -> {
            await(guest.dropTable(pk, false));
            return null;
        });
        step(6, "guest dropDatabase(DB)", () -> {
            await(guest.dropDatabase(db, false, true));
            return null;
        });
        step(7, "guest getTableStats(PK)", () -> await(guest.getTableStats(pk)).getRowCount());
        step(8, "guest listOffsets(PK, [0], earliest)", () -> await(guest.listOffsets(pk,
                Collections.singletonList(0), new OffsetSpec.EarliestSpec()).all()));
        step(9, "guest lookup a=1 in PK", () -> {
            try (Table t = guestConn.getTable(pk)) {
                Lookuper lk = t.newLookup().createLookuper();
                LookupResult r = await(lk.lookup(GenericRow.of(1)));
                return r.getSingletonRow() == null ? "missing" : rowText(r.getSingletonRow());
            }
        });
        step(10, "guest upsert (1,a) into PK", () -> {
            try (Table t = guestConn.getTable(pk)) {
                UpsertWriter w = t.newUpsert().createWriter();
                await(w.upsert(row(1, "a")));
                return null;
            }
        });
        grant(11, Resource.table(pk), OperationType.READ);
        stepUntil(12, "guest lookup a=1 in PK", () -> {
            try (Table t = guestConn.getTable(pk)) {
                Lookuper lk = t.newLookup().createLookuper();
                LookupResult r = await(lk.lookup(GenericRow.of(1)));
                return r.getSingletonRow() == null ? "missing" : rowText(r.getSingletonRow());
            }
        }, isOk());
        stepUntil(13, "guest getTableStats(PK)", () -> await(guest.getTableStats(pk)).getRowCount(),
                isOk());
        step(14, "guest alterTable(PK, set x.custom=v) with READ only", () -> {
            await(guest.alterTable(pk, Collections.singletonList(
                    TableChange.set("x.custom", "v")), false));
            return null;
        });
        step(15, "guest getDatabaseInfo(DB) with table READ only", () -> await(
                guest.getDatabaseInfo(db)).getDatabaseName());
        grant(16, Resource.cluster(), OperationType.READ);
        step(17, "guest getDatabaseInfo(DB) with cluster READ", () -> await(
                guest.getDatabaseInfo(db)).getDatabaseName());
        step(18, "guest dropTable(PK) with cluster READ", () -> {
            await(guest.dropTable(pk, false));
            return null;
        });
    }

    /** Beyond the ITCase: principals, hosts and wildcard resources. */
    static void extraMatching() {
        FlussPrincipal userStar = new FlussPrincipal("*", "User");
        grant(1, allow(new Resource(ResourceType.TABLE, "*"), userStar, OperationType.DESCRIBE));
        step(2, "guest getTableInfo(PK) with TABLE * DESCRIBE for User:*",
                () -> await(guest.getTableInfo(pk)).getTablePath());
        grant(3, new Resource(ResourceType.DATABASE, "*"), OperationType.DESCRIBE);
        step(4, "guest getTableInfo(PK) with DATABASE * DESCRIBE",
                () -> await(guest.getTableInfo(pk)).getTablePath());
        step(5, "guest getDatabaseInfo(DB) with DATABASE * DESCRIBE",
                () -> await(guest.getDatabaseInfo(db)).getDatabaseName());
        grant(6, new Resource(ResourceType.TABLE, "*"), OperationType.DESCRIBE);
        step(7, "guest getTableInfo(PK) with TABLE * DESCRIBE",
                () -> await(guest.getTableInfo(pk)).getTablePath());
        TablePath t2 = TablePath.of(db, "host_check");
        grant(8, new AclBinding(Resource.database(db), new AccessControlEntry(
                GUEST, "10.255.255.1", OperationType.CREATE, PermissionType.ALLOW)));
        step(9, "guest createTable(DB.host_check) with CREATE for host 10.255.255.1", () -> {
            await(guest.createTable(t2, logDescriptor(), false));
            return null;
        });
        grant(10, new AclBinding(Resource.database(db), new AccessControlEntry(
                GUEST, "127.0.0.1", OperationType.CREATE, PermissionType.ANY)));
        step(11, "guest createTable(DB.host_check) with CREATE ANY-permission for 127.0.0.1",
                () -> {
                    await(guest.createTable(t2, logDescriptor(), false));
                    return null;
                });
        grant(12, new AclBinding(Resource.database(db), new AccessControlEntry(
                GUEST, "127.0.0.1", OperationType.CREATE, PermissionType.ALLOW)));
        step(13, "guest createTable(DB.host_check) with CREATE for host 127.0.0.1", () -> {
            await(guest.createTable(t2, logDescriptor(), false));
            return null;
        });
        step(14, "root listAcls(TABLE *)", () -> bindings(await(root.listAcls(new AclBindingFilter(
                new ResourceFilter(ResourceType.TABLE, "*"), AccessControlEntryFilter.ANY)))));
        step(15, "root listAcls(DATABASE DB, host 127.0.0.1)", () -> bindings(await(root.listAcls(
                new AclBindingFilter(new ResourceFilter(ResourceType.DATABASE, db),
                        new AccessControlEntryFilter(null, "127.0.0.1", OperationType.ANY,
                                PermissionType.ANY))))));
        step(16, "root listAcls(ANY, op CREATE, ALLOW)", () -> bindings(await(root.listAcls(
                new AclBindingFilter(ResourceFilter.ANY, new AccessControlEntryFilter(
                        null, null, OperationType.CREATE, PermissionType.ALLOW))))));
        step(17, "guest listAcls(ANY) (DESCRIBE on tables and databases through *)",
                () -> bindings(await(guest.listAcls(AclBindingFilter.ANY))));
        step(18, "guest dropAcls([TABLE *]) without ALTER", () -> bindings(await(guest.dropAcls(
                Collections.singletonList(new AclBindingFilter(
                        new ResourceFilter(ResourceType.TABLE, "*"),
                        AccessControlEntryFilter.ANY))).all())));
        step(19, "guest dropAcls([TABLE nothing.here]) (no match, no check)",
                () -> bindings(await(guest.dropAcls(Collections.singletonList(
                        new AclBindingFilter(new ResourceFilter(ResourceType.TABLE, "nothing.here"),
                                AccessControlEntryFilter.ANY))).all())));
        step(20, "root dropAcls([DATABASE DB, TABLE *]) (deleted bindings)", () -> {
            List<AclBindingFilter> filters = Arrays.asList(
                    new AclBindingFilter(new ResourceFilter(ResourceType.DATABASE, db),
                            AccessControlEntryFilter.ANY),
                    new AclBindingFilter(new ResourceFilter(ResourceType.TABLE, "*"),
                            AccessControlEntryFilter.ANY));
            return bindings(await(root.dropAcls(filters).all()));
        });
        sync();
        step(21, "root listAcls(ANY)", () -> bindings(await(root.listAcls(AclBindingFilter.ANY))));
        attempt(() -> await(root.dropTable(t2, true)));
    }

    /** Run only against a server without authorizer.enabled. */
    static void testNoAuthorizer() {
        step(1, "root listAcls(ANY)", () -> bindings(await(root.listAcls(AclBindingFilter.ANY))));
        step(2, "root createAcls(cluster *:* CREATE ALLOW)", () -> {
            await(root.createAcls(Collections.singletonList(allow(Resource.cluster(),
                    FlussPrincipal.WILD_CARD_PRINCIPAL, OperationType.CREATE))).all());
            return null;
        });
        step(3, "root dropAcls([ANY])", () -> bindings(await(root.dropAcls(
                Collections.singletonList(AclBindingFilter.ANY)).all())));
        step(4, "root initWriter([]) on tablet server 0", () -> initWriter(
                ((FlussConnection) rootConn).getMetadataUpdater().newTabletServerClientForNode(0),
                initWriterRequest()));
        step(5, "guest listDatabases contains fluss and DB", () -> {
            List<String> dbs = await(guest.listDatabases());
            return "fluss:" + dbs.contains("fluss") + " db:" + dbs.contains(db);
        });
        step(6, "guest getTableInfo(PK)", () -> await(guest.getTableInfo(pk)).getTablePath());
        step(7, "guest initWriter([]) on tablet server 0", () -> initWriter(guestTablet(),
                initWriterRequest()));
    }

    // ------------------------------------------------------------------

    static final Map<String, Runnable> CASES = new LinkedHashMap<>();

    static {
        CASES.put("testAclOperation", JavaAcl::testAclOperation);
        CASES.put("testAlterDatabase", JavaAcl::testAlterDatabase);
        CASES.put("testListDatabases", JavaAcl::testListDatabases);
        CASES.put("testAlterTable", JavaAcl::testAlterTable);
        CASES.put("testDescribeTableOperation", JavaAcl::testDescribeTableOperation);
        CASES.put("testGetKvSnapshotMetadata", JavaAcl::testGetKvSnapshotMetadata);
        CASES.put("testGetMetaInfo", JavaAcl::testGetMetaInfo);
        CASES.put("testInitWriter", JavaAcl::testInitWriter);
        CASES.put("testProduceWithNoWriteAuthorization",
                JavaAcl::testProduceWithNoWriteAuthorization);
        CASES.put("testProduceAndConsumer", JavaAcl::testProduceAndConsumer);
        CASES.put("testAcquireKvSnapshotLease", JavaAcl::testAcquireKvSnapshotLease);
        CASES.put("testReleaseKvSnapshotLease", JavaAcl::testReleaseKvSnapshotLease);
        CASES.put("testDropKvSnapshotLease", JavaAcl::testDropKvSnapshotLease);
        CASES.put("testRegisterProducerOffsets", JavaAcl::testRegisterProducerOffsets);
        CASES.put("testDeleteProducerOffsets", JavaAcl::testDeleteProducerOffsets);
        CASES.put("extraTableChecks", JavaAcl::extraTableChecks);
        CASES.put("extraMatching", JavaAcl::extraMatching);
    }

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: JavaAcl HOST:PORT DB [CASE,CASE...|all|--no-authorizer]");
            System.exit(2);
        }
        bootstrap = args[0];
        db = args[1];
        pk = TablePath.of(db, "test_pk_table_1");
        log = TablePath.of(db, "test_non_pk_table_1");
        String which = args.length > 2 ? args[2] : "all";
        noAuthorizer = which.equals("--no-authorizer");
        List<String> cases = new ArrayList<>();
        if (noAuthorizer) {
            cases.add("testNoAuthorizer");
        } else if (which.equals("all")) {
            cases.addAll(CASES.keySet());
        } else {
            for (String c : which.split(",")) {
                if (!CASES.containsKey(c)) {
                    System.err.println("unknown case " + c + "; cases: " + CASES.keySet());
                    System.exit(2);
                }
                cases.add(c);
            }
        }

        // a clean start: no ACLs left from an earlier run on this server
        kase = "run";
        if (!noAuthorizer) {
            Outcome o = attempt(() -> {
                openConnections();
                await(root.dropAcls(Collections.singletonList(AclBindingFilter.ANY)).all());
                return null;
            });
            if (o.ok) {
                sync();
            }
            closeConnections();
            if (!o.ok) {
                emit("setup", "root dropAcls([ANY]) before the first case", o);
            }
        }

        for (String c : cases) {
            kase = c;
            if (!setUp()) {
                closeConnections();
                continue;
            }
            try {
                if (c.equals("testNoAuthorizer")) {
                    testNoAuthorizer();
                } else {
                    CASES.get(c).run();
                }
            } catch (Throwable t) {
                Outcome o = new Outcome();
                o.error = t;
                emit("crash", "the case itself threw", o);
            } finally {
                if (noAuthorizer) {
                    closeConnections();
                } else {
                    tearDown();
                }
            }
        }

        kase = "run";
        Outcome o = attempt(() -> {
            openConnections();
            await(root.dropDatabase(db, true, true));
            return null;
        });
        closeConnections();
        if (!o.ok) {
            emit("cleanup", "root dropDatabase(DB)", o);
        }
        System.exit(0);
    }
}
