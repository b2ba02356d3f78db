"""ACLs (authorization) as Apache Fluss 0.9.1 enforces them: the cases of
0.9.1's FlussAuthorizationITCase that apply to one coordinator and one
tablet server (no lake, rebalance or cluster-config features), played
through the official Java client (tests/java JavaAcl), plus raw frames for
what the Java client does not show. The reference server is the oracle:
every expectation below was recorded from it (reliability goal X5:
`mismatches = 0`).

The server under test has one SASL listener for clients, users root and
guest, root a super user, and the authorizer on:

  security.protocol.map: <listener>:SASL     (reference: CLIENT:SASL, INTERNAL:PLAINTEXT)
  security.sasl.enabled.mechanisms: PLAIN
  security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule
      required user_root="password" user_guest="password2";
  super.users: User:root
  authorizer.enabled: true

FLUSS_SERVER=ours (default): the module starts its own flussd (listener
FLUSS, ACL_ARGS below; FLUSSD picks the binary) and, for the cases that
need the authorizer off, a second one without authorizer.enabled. In ours
the client listener is never internal, so every check applies on it (in
the reference the listener named by internal.listener.name bypasses them,
hence its separate CLIENT listener).

FLUSS_SERVER=reference: start the reference with that config and run
against it:

  REF_EXTRA_CONFIG="$(printf '%s\\n' \\
      'security.protocol.map: CLIENT:SASL, INTERNAL:PLAINTEXT' \\
      'security.sasl.enabled.mechanisms: PLAIN' \\
      'security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_root="password" user_guest="password2";' \\
      'super.users: User:root' \\
      'authorizer.enabled: true')" \\
  SASL_PROBE_USER=root SASL_PROBE_PASSWORD=password \\
  PYTHON=tests/interop/saslwire.py tests/reference/start
  FLUSS_SERVER=reference FLUSS_BOOTSTRAP=127.0.0.1:19123 \\
      .venv/bin/python -m pytest tests/interop/test_security_acl.py
  tests/reference/stop

(PYTHON=...saslwire.py and SASL_PROBE_*: start's readiness probe must
authenticate first, see saslwire.py.) The checks of a server without the
authorizer run against the reference only when FLUSS_NOAUTH_BOOTSTRAP
names a second reference started with the same config minus
`authorizer.enabled: true`; otherwise they are skipped there. A reference
without SASL/PLAIN, without these users or without the authorizer skips
the module with the reason. FLUSS_SERVER=cluster: skipped (the cluster
script takes no per-module listener config).

How the Java side compares: JavaAcl prints one JSON line per step of each
case; this module replaces the run's database name by `<db>` and table ids
in messages by `<id>`, and compares outcome, error class (the root cause
the client surfaced), message and result of every (case, step) with
EXPECTED. Recorded from the reference (0.9.1-incubating jars from Maven
Central, tests/reference/start, the config above).
"""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
import saslwire as sw
from conftest import IS_CLUSTER, IS_OURS, IS_REFERENCE, REPO, OurServer, unique
from logutil import create_log_table, fetch_log
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, RawConnection, as_int32, decode,
                     decode_error, f_bytes, f_varint, table_path_msg)

pytestmark = pytest.mark.skipif(
    IS_CLUSTER, reason="FLUSS_SERVER=cluster: the cluster script takes no SASL listener config")

JAAS = ('org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required '
        'user_root="password" user_guest="password2";')
USERS = {"root": "password", "guest": "password2"}
SASL_ARGS = ("-D", "security.protocol.map=FLUSS:SASL",
             "-D", "security.sasl.enabled.mechanisms=PLAIN",
             "-D", f"security.sasl.plain.jaas.config={JAAS}",
             "-D", "super.users=User:root")
ACL_ARGS = SASL_ARGS + ("-D", "authorizer.enabled=true")

CREATE_ACLS, LIST_ACLS, DROP_ACLS = 1039, 1040, 1041
FETCH_LOG = 1015
SECURITY_DISABLED = 47
AUTHORIZATION_FAILED = 48
UNKNOWN_TABLE_OR_BUCKET = 21
UNKNOWN_SERVER_ERROR = -1
NO_AUTHORIZER = "No Authorizer is configured."

# acl/ResourceType, OperationType, PermissionType codes (acl_facts §1-2)
RT_ANY, RT_CLUSTER, RT_DATABASE, RT_TABLE = 1, 2, 3, 4
OP_ANY, OP_ALL, OP_READ, OP_WRITE, OP_CREATE, OP_DROP, OP_ALTER, OP_DESCRIBE = range(1, 9)
PERM_ANY, PERM_ALLOW = 1, 2

SYNC_TIMEOUT_S = 5.0
JAVA_TIMEOUT_S = 300


# ---------------------------------------------------------------------------
# the servers under test (one per module, plus one without the authorizer)
# ---------------------------------------------------------------------------

class AclTarget(sw.Target):
    def raw(self, role="coordinator", user="root", timeout=10.0):
        """A connection authenticated as `user` (SASL/PLAIN)."""
        conn = RawConnection(self.host, self.ports()[role], timeout)
        rtype, body = sw.authenticate(conn, "PLAIN", sw.plain_token(user, USERS[user]))
        assert rtype == RESPONSE_SUCCESS, (
            f"{user} does not authenticate on the {role}: {decode_error(body)}")
        return conn

    def pyfluss_config(self, user="root"):
        return fluss.Config({"bootstrap.servers": self.bootstrap, "security.protocol": "sasl",
                             "security.sasl.mechanism": "PLAIN",
                             "security.sasl.username": user,
                             "security.sasl.password": USERS[user]})


def _probe(host, port):
    """What the server at host:port is: (sasl?, root's LIST_ACLS answer as
    None (served) or (code, message), the tablet server's port)."""
    with RawConnection(host, port, timeout=5) as c:
        c.api_versions()
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        if rtype == RESPONSE_SUCCESS or decode_error(body)[0] != sw.AUTHENTICATE_EXCEPTION:
            return False, None, None
    with RawConnection(host, port, timeout=5) as c:
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("root", USERS["root"]))
        if rtype != RESPONSE_SUCCESS:
            return True, ("root", decode_error(body)), None
        _, tablets = sw.server_nodes(c)
        rtype, body = c.call(LIST_ACLS, f_bytes(1, acl_filter()))
        listed = None if rtype == RESPONSE_SUCCESS else decode_error(body)
    with RawConnection(host, port, timeout=5) as c:
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("guest", USERS["guest"]))
        if rtype != RESPONSE_SUCCESS:
            return True, ("guest", decode_error(body)), None
    return True, listed, (tablets[0][2] if tablets else None)


def _reference_target(bootstrap, want_authorizer):
    host, _, port = bootstrap.rpartition(":")
    try:
        sasl, listed, tablet_port = _probe(host, int(port))
    except OSError as e:
        pytest.fail(f"reference at {bootstrap} does not answer: {e}", pytrace=False)
    if not sasl:
        pytest.skip(f"the reference at {bootstrap} is not configured for SASL/PLAIN on its "
                    f"CLIENT listener; start it with REF_EXTRA_CONFIG as in this module's "
                    f"docstring")
    if listed and listed[0] in ("root", "guest"):
        pytest.skip(f"the reference at {bootstrap} does not accept {listed[0]}/"
                    f"{USERS[listed[0]]} ({listed[1]}); its JAAS config must have the users "
                    f"of this module's docstring")
    has_authorizer = not (listed and listed[0] == SECURITY_DISABLED)
    if has_authorizer != want_authorizer:
        pytest.skip(f"the reference at {bootstrap} has the authorizer "
                    f"{'on' if has_authorizer else 'off'} (root's LIST_ACLS answered "
                    f"{listed or 'success'}); this needs it "
                    f"{'on (authorizer.enabled: true, super.users: User:root)' if want_authorizer else 'off'}")
    assert tablet_port, "the reference lists no tablet server"
    return AclTarget(host, int(port), tablet_port)


def _our_target(tmp_path_factory, name, args):
    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"server binary {binary} not found or not executable", pytrace=False)
    base = tmp_path_factory.mktemp(name)
    (base / "data").mkdir()
    srv = OurServer(binary, base / "data", base, list(args), name=name)
    srv.start()
    return srv


@pytest.fixture(scope="module")
def acl(tmp_path_factory):
    """The server with SASL, root/guest and the authorizer on."""
    if IS_REFERENCE:
        bootstrap = os.environ.get("FLUSS_BOOTSTRAP")
        if not bootstrap:
            pytest.fail("FLUSS_SERVER=reference needs FLUSS_BOOTSTRAP=host:port", pytrace=False)
        yield _reference_target(bootstrap, want_authorizer=True)
        return
    srv = _our_target(tmp_path_factory, "flussd-acl", ACL_ARGS)
    try:
        yield AclTarget(srv.host, srv.coordinator_port, srv.tablet_port, srv)
    finally:
        srv.stop()  # a non-zero exit or a sanitizer report fails the session (conftest)


@pytest.fixture(scope="module")
def noauth(tmp_path_factory):
    """A server with SASL and root/guest, the authorizer off."""
    bootstrap = os.environ.get("FLUSS_NOAUTH_BOOTSTRAP")
    if bootstrap:
        yield _reference_target(bootstrap, want_authorizer=False)
        return
    if IS_REFERENCE:
        pytest.skip("a reference without the authorizer is not configured: start a second one "
                    "(REF_RUN_DIR and ports of its own) without 'authorizer.enabled: true' and "
                    "set FLUSS_NOAUTH_BOOTSTRAP")
    srv = _our_target(tmp_path_factory, "flussd-noauth", SASL_ARGS)
    try:
        yield AclTarget(srv.host, srv.coordinator_port, srv.tablet_port, srv)
    finally:
        srv.stop()


# ---------------------------------------------------------------------------
# raw ACL messages (acl_facts §6)
# ---------------------------------------------------------------------------

def acl_info(rtype, rname, pname, ptype, host, op, perm) -> bytes:
    """PbAclInfo."""
    return (f_bytes(1, rname) + f_varint(2, rtype) + f_bytes(3, pname) + f_bytes(4, ptype)
            + f_bytes(5, host) + f_varint(6, op) + f_varint(7, perm))


def acl_filter(rtype=RT_ANY, rname=None, pname=None, ptype=None, host=None, op=OP_ANY,
               perm=PERM_ANY) -> bytes:
    """PbAclFilter (absent optional fields match anything)."""
    out = b"" if rname is None else f_bytes(1, rname)
    out += f_varint(2, rtype)
    if pname is not None:
        out += f_bytes(3, pname) + f_bytes(4, ptype)
    if host is not None:
        out += f_bytes(5, host)
    return out + f_varint(6, op) + f_varint(7, perm)


def decode_acl(raw: bytes):
    f = decode(raw)
    return (as_int32(f[2][0]), f[1][0].decode(), f[3][0].decode(), f[4][0].decode(),
            f[5][0].decode(), as_int32(f[6][0]), as_int32(f[7][0]))


def list_acls(conn, flt=None):
    """LIST_ACLS -> sorted [(rtype, rname, pname, ptype, host, op, perm)] or
    (code, message) on an error answer."""
    rtype, body = conn.call(LIST_ACLS, f_bytes(1, flt if flt is not None else acl_filter()))
    if rtype != RESPONSE_SUCCESS:
        return decode_error(body)
    return sorted(decode_acl(a) for a in decode(body).get(1, []))


def create_acls(conn, *infos):
    """CREATE_ACLS -> (response_type, body)."""
    return conn.call(CREATE_ACLS, b"".join(f_bytes(1, i) for i in infos))


def drop_all_acls(target):
    with target.raw() as c:
        rtype, body = c.call(DROP_ACLS, f_bytes(1, acl_filter()))
        assert rtype == RESPONSE_SUCCESS, decode_error(body)
    wait_tablet_sync(target)


def wait_tablet_sync(target):
    """The ITCase's waitUntilAuthenticationSync: until the tablet server
    lists (LIST_ACLS, as root) what the coordinator lists."""
    deadline = time.monotonic() + SYNC_TIMEOUT_S
    with target.raw("coordinator") as cs, target.raw("tablet") as ts:
        while True:
            want, got = list_acls(cs), list_acls(ts)
            if want == got:
                return
            assert time.monotonic() < deadline, (
                f"the tablet server lists {got}, the coordinator {want}, after {SYNC_TIMEOUT_S}s")
            time.sleep(0.05)


def grant(target, *infos):
    with target.raw() as c:
        rtype, body = create_acls(c, *infos)
        assert rtype == RESPONSE_SUCCESS, decode_error(body)
        for raw in decode(body).get(1, []):
            f = decode(raw)
            assert as_int32(f.get(2, [0])[0]) == 0, f"a binding was refused: {f}"
    wait_tablet_sync(target)


def deny_message(op, rtype, name):
    """AbstractAuthorizer.authorize's message (note the trailing space)."""
    return (f"Principal FlussPrincipal{{name='guest', type='User'}} have no authorization to "
            f"operate {op} on resource Resource{{type={rtype}, name='{name}'}} ")


# ---------------------------------------------------------------------------
# Java client (tests/java JavaAcl): the ITCase matrix
# ---------------------------------------------------------------------------

AUTHZ = "org.apache.fluss.exception.AuthorizationException"


def ok(result=None):
    return {"outcome": "ok", "error_class": None, "message": None, "result": result}


def err(error_class, message):
    return {"outcome": "error", "error_class": error_class, "message": message, "result": None}


def deny(op, rtype, name):
    return err(AUTHZ, deny_message(op, rtype, name))


def deny_any(*messages):
    """An AuthorizationException with one of these messages (the reference
    checks the request's resources in Java HashMap order, and Resource's
    hash includes its enum type's identity hash: which one is named first
    changes from one server start to the next)."""
    return {"outcome": "error", "error_class": AUTHZ, "message": list(messages), "result": None}


PK = "<db>.test_pk_table_1"
LOG = "<db>.test_non_pk_table_1"

# (case, step) -> what the reference answered. The comment is the step.
EXPECTED = {
    # testAclOperation
    ("testAclOperation", 1): ok("[]"),  # guest listAcls(ANY)
    ("testAclOperation", 2): ok(),  # root createAcls [CLUSTER:fluss-cluster User:guest@* DESCRIBE ALLOW]
    ("testAclOperation", 3): ok("[CLUSTER:fluss-cluster User:guest@* DESCRIBE ALLOW]"),  # guest listAcls(ANY)
    # guest createAcls([TABLE test_db.test_table user1 CREATE ALLOW, DATABASE test_db2
    # ROLE/test_role@127.0.0.1 DROP ANY, CLUSTER ROLE/test_role@127.0.0.1 DROP ALLOW]) without
    # ALTER; reference: test_db2 named on one start, test_db (the TABLE's database) on another
    ("testAclOperation", 4): deny_any(deny_message("ALTER", "DATABASE", "test_db"),
                                      deny_message("ALTER", "DATABASE", "test_db2"),
                                      deny_message("ALTER", "CLUSTER", "fluss-cluster")),
    ("testAclOperation", 5): ok(),  # root createAcls [CLUSTER:fluss-cluster *:*@* ALTER ALLOW]
    ("testAclOperation", 6): ok(),  # guest createAcls(the 3 bindings) with ALTER for *:*
    ("testAclOperation", 7): ok("[TABLE:test_db.test_table User:user1@* CREATE ALLOW]"),  # guest listAcls(user1, host null, ANY, ALLOW)
    ("testAclOperation", 8): ok(  # root listAcls(ANY)
        "[CLUSTER:fluss-cluster *:*@* ALTER ALLOW, CLUSTER:fluss-cluster User:guest@* DESCRIBE ALLOW, "
        "CLUSTER:fluss-cluster test_role:ROLE@127.0.0.1 DROP ALLOW, "
        "DATABASE:test_db2 test_role:ROLE@127.0.0.1 DROP ANY, TABLE:test_db.test_table User:user1@* CREATE ALLOW]"),
    ("testAclOperation", 9): ok(  # guest dropAcls([ANY]) (deleted bindings)
        "[CLUSTER:fluss-cluster *:*@* ALTER ALLOW, CLUSTER:fluss-cluster User:guest@* DESCRIBE ALLOW, "
        "CLUSTER:fluss-cluster test_role:ROLE@127.0.0.1 DROP ALLOW, "
        "DATABASE:test_db2 test_role:ROLE@127.0.0.1 DROP ANY, TABLE:test_db.test_table User:user1@* CREATE ALLOW]"
        " (= root's list)"),
    ("testAclOperation", 10): ok("[]"),  # root listAcls(ANY)
    # testAlterDatabase
    ("testAlterDatabase", 1): deny("CREATE", "CLUSTER", "fluss-cluster"),  # guest createDatabase(<db>-database1)
    ("testAlterDatabase", 2): ok(),  # root createAcls [CLUSTER:fluss-cluster User:guest@* CREATE ALLOW]
    ("testAlterDatabase", 3): ok(),  # guest createDatabase(<db>-database2)
    ("testAlterDatabase", 4): ok("false"),  # root databaseExists(<db>-database1)
    ("testAlterDatabase", 5): ok("true"),  # root databaseExists(<db>-database2)
    # testListDatabases
    ("testListDatabases", 1): ok("[]"),  # guest listDatabases
    ("testListDatabases", 2): ok("fluss:true db:true"),  # root listDatabases contains fluss and <db>
    ("testListDatabases", 3): ok(),  # root createAcls [DATABASE:fluss User:guest@* DESCRIBE ALLOW]
    ("testListDatabases", 4): ok("[fluss]"),  # guest listDatabases
    ("testListDatabases", 5): ok(),  # root createAcls [CLUSTER:fluss-cluster User:guest@* ALL ALLOW]
    ("testListDatabases", 6): ok("same_as_root:true db:true"),  # guest listDatabases equals root's
    # testAlterTable
    ("testAlterTable", 1): deny("CREATE", "DATABASE", "<db>"),  # guest createTable(<db>.test_non_pk_table_1)
    ("testAlterTable", 2): ok("false"),  # root tableExists(<db>.test_non_pk_table_1)
    ("testAlterTable", 3): ok(),  # root createAcls [DATABASE:<db> User:guest@* CREATE ALLOW]
    ("testAlterTable", 4): ok(),  # guest createTable(<db>.test_non_pk_table_1)
    ("testAlterTable", 5): ok("true"),  # root tableExists(<db>.test_non_pk_table_1)
    # testDescribeTableOperation
    ("testDescribeTableOperation", 1): ok("[]"),  # guest listTables(<db>)
    ("testDescribeTableOperation", 2): deny("DESCRIBE", "TABLE", PK),  # guest getTableInfo(PK)
    ("testDescribeTableOperation", 3): deny("DESCRIBE", "TABLE", PK),  # guest getTableSchema(PK)
    ("testDescribeTableOperation", 4): deny("DESCRIBE", "TABLE", PK),  # guest getLatestKvSnapshots(PK)
    ("testDescribeTableOperation", 5): deny("DESCRIBE", "TABLE", PK),  # guest listPartitionInfos(PK)
    ("testDescribeTableOperation", 6): deny("DESCRIBE", "TABLE", PK),  # guest getLatestLakeSnapshot(PK)
    ("testDescribeTableOperation", 7): ok(),  # root createAcls [DATABASE:<db> User:guest@* DESCRIBE ALLOW]
    ("testDescribeTableOperation", 8): ok("[test_pk_table_1]"),  # guest listTables(<db>)
    ("testDescribeTableOperation", 9): ok(PK),  # guest getTableInfo(PK)
    ("testDescribeTableOperation", 10): ok("[a, b] pk=[a] equals_created:true"),  # guest getTableSchema(PK)
    ("testDescribeTableOperation", 11): ok("true"),  # guest tableExists(PK)
    ("testDescribeTableOperation", 12): ok("[0, 1, 2]"),  # guest getLatestKvSnapshots(PK) bucket ids
    ("testDescribeTableOperation", 13): err(  # guest listPartitionInfos(PK)
        "org.apache.fluss.exception.TableNotPartitionedException",
        "Table '<db>.test_pk_table_1' is not a partitioned table."),
    ("testDescribeTableOperation", 14): err(  # guest getLatestLakeSnapshot(PK)
        "org.apache.fluss.exception.LakeTableSnapshotNotExistException",
        "Lake table snapshot doesn't exist for table: <db>.test_pk_table_1, table id: <id>"),
    # testGetKvSnapshotMetadata (the ITCase's parameters CoordinatorServer, TabletServer)
    ("testGetKvSnapshotMetadata", 1): deny("DESCRIBE", "TABLE", PK),  # guest getKvSnapshotMetadata(PK, 0, 0) on the coordinator
    ("testGetKvSnapshotMetadata", 2): deny("DESCRIBE", "TABLE", PK),  # ... on the tablet server
    ("testGetKvSnapshotMetadata", 3): ok(),  # root createAcls [DATABASE:<db> User:guest@* DESCRIBE ALLOW]
    ("testGetKvSnapshotMetadata", 4): err(  # guest getKvSnapshotMetadata(PK, 0, 0) on the coordinator
        "org.apache.fluss.exception.KvSnapshotNotExistException",
        "Failed to get kv snapshot metadata for table bucket TableBucket{tableId=<id>, bucket=0} "
        "and snapshot id 0. Error: Kv snapshot not found"),
    ("testGetKvSnapshotMetadata", 5): err(  # ... on the tablet server
        "org.apache.fluss.exception.KvSnapshotNotExistException",
        "Failed to get kv snapshot metadata for table bucket TableBucket{tableId=<id>, bucket=0} "
        "and snapshot id 0. Error: Kv snapshot not found"),
    # testGetMetaInfo
    ("testGetMetaInfo", 1): ok("table_metadata=0"),  # guest metadata([PK]) on the coordinator
    ("testGetMetaInfo", 2): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* DESCRIBE ALLOW]
    ("testGetMetaInfo", 3): ok("table_metadata=1"),  # guest metadata([PK]) on the coordinator
    # testInitWriter (raw InitWriterRequest to tablet server 0)
    ("testInitWriter", 1): ok(),  # root createTable(<db>.write_acl_table)
    ("testInitWriter", 2): ok(),  # root createAcls [TABLE:<db>.write_acl_table User:guest@* WRITE ALLOW]
    ("testInitWriter", 3): err(AUTHZ, "The request of InitWriter requires non empty table paths for authorization."),  # guest initWriter([])
    ("testInitWriter", 4): err(AUTHZ, "No WRITE permission among all the tables: [<db>.no_write_acl_table]"),  # guest initWriter([no_write_acl_table])
    ("testInitWriter", 5): ok("writer_id>=0:true"),  # guest initWriter([write_acl_table, no_write_acl_table])
    # testProduceWithNoWriteAuthorization
    ("testProduceWithNoWriteAuthorization", 1): ok(),  # root createTable(write_acl_table_1, no_write_acl_table_1)
    ("testProduceWithNoWriteAuthorization", 2): ok(),  # root createAcls [TABLE:<db>.write_acl_table_1 User:guest@* WRITE ALLOW]
    ("testProduceWithNoWriteAuthorization", 3): ok(),  # root createAcls [TABLE:<db>.no_write_acl_table_1 User:guest@* READ ALLOW]
    ("testProduceWithNoWriteAuthorization", 4): ok("[no_write_acl_table_1, write_acl_table_1]"),  # guest listTables(<db>)
    ("testProduceWithNoWriteAuthorization", 5): err(AUTHZ, "No WRITE permission among all the tables: [<db>.no_write_acl_table_1]"),  # guest append to no_write_acl_table_1
    ("testProduceWithNoWriteAuthorization", 6): ok(),  # guest append to write_acl_table_1
    ("testProduceWithNoWriteAuthorization", 7): deny("WRITE", "TABLE", "<db>.no_write_acl_table_1"),  # guest append to no_write_acl_table_1 again
    # testProduceAndConsumer
    ("testProduceAndConsumer", 1): ok(),  # root createTable(<db>.test_non_pk_table_1)
    ("testProduceAndConsumer", 2): ok(),  # root createAcls [TABLE:<db>.test_non_pk_table_1 User:guest@* WRITE ALLOW]
    ("testProduceAndConsumer", 3): ok(),  # guest append row(1,a)
    ("testProduceAndConsumer", 4): deny("READ", "TABLE", LOG),  # guest limit(1) batch scan of bucket 0 (LIMIT_SCAN)
    ("testProduceAndConsumer", 5): ok(),  # root createAcls [TABLE:<db>.test_non_pk_table_1 User:guest@* READ ALLOW]
    ("testProduceAndConsumer", 6): ok("rows=[(1,a)]"),  # guest limit(1) batch scan of bucket 0
    # testAcquireKvSnapshotLease
    ("testAcquireKvSnapshotLease", 1): deny("READ", "TABLE", PK),  # guest acquireSnapshots({(PK,0):0})
    ("testAcquireKvSnapshotLease", 2): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]
    ("testAcquireKvSnapshotLease", 3): ok("unavailable=[]"),  # guest acquireSnapshots({(PK,0):0})
    ("testAcquireKvSnapshotLease", 4): ok(),  # guest dropLease
    # testReleaseKvSnapshotLease
    ("testReleaseKvSnapshotLease", 1): deny("READ", "TABLE", PK),  # guest releaseKvSnapshotLease (raw, no such lease)
    ("testReleaseKvSnapshotLease", 2): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]
    ("testReleaseKvSnapshotLease", 3): ok(),  # guest releaseKvSnapshotLease
    # testDropKvSnapshotLease
    ("testDropKvSnapshotLease", 1): ok(),  # guest dropLease of a lease that does not exist (no check)
    ("testDropKvSnapshotLease", 2): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]
    ("testDropKvSnapshotLease", 3): ok("unavailable=[]"),  # guest acquireSnapshots({(PK,0):0})
    ("testDropKvSnapshotLease", 4): ok("[TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]"),  # root dropAcls([ANY])
    ("testDropKvSnapshotLease", 5): deny("READ", "TABLE", PK),  # guest dropLease
    ("testDropKvSnapshotLease", 6): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]
    ("testDropKvSnapshotLease", 7): ok(),  # guest dropLease
    # testRegisterProducerOffsetsAuthorization
    ("testRegisterProducerOffsets", 1): deny("WRITE", "TABLE", PK),  # guest registerProducerOffsets({(PK,0):100})
    ("testRegisterProducerOffsets", 2): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* WRITE ALLOW]
    ("testRegisterProducerOffsets", 3): ok("CREATED"),  # guest registerProducerOffsets({(PK,0):100})
    ("testRegisterProducerOffsets", 4): ok(),  # root deleteProducerOffsets
    # testDeleteProducerOffsetsAuthorization
    ("testDeleteProducerOffsets", 1): ok("CREATED"),  # root registerProducerOffsets({(PK,0):100})
    ("testDeleteProducerOffsets", 2): deny("WRITE", "TABLE", PK),  # guest deleteProducerOffsets
    ("testDeleteProducerOffsets", 3): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* WRITE ALLOW]
    ("testDeleteProducerOffsets", 4): ok(),  # guest deleteProducerOffsets
    # extraTableChecks (beyond the ITCase). The Java client's getTableStats,
    # listOffsets, lookup and upsert first ask for the table's info: DESCRIBE.
    ("extraTableChecks", 1): deny("DESCRIBE", "DATABASE", "<db>"),  # guest getDatabaseInfo(<db>)
    ("extraTableChecks", 2): ok("true"),  # guest databaseExists(<db>): no check in 0.9.1
    ("extraTableChecks", 3): ok("true"),  # guest tableExists(PK): no check in 0.9.1
    ("extraTableChecks", 4): deny("ALTER", "TABLE", PK),  # guest alterTable(PK, set x.custom=v)
    ("extraTableChecks", 5): deny("DROP", "TABLE", PK),  # guest dropTable(PK)
    ("extraTableChecks", 6): deny("DROP", "DATABASE", "<db>"),  # guest dropDatabase(<db>)
    ("extraTableChecks", 7): deny("DESCRIBE", "TABLE", PK),  # guest getTableStats(PK)
    ("extraTableChecks", 8): deny("DESCRIBE", "TABLE", PK),  # guest listOffsets(PK, [0], earliest)
    ("extraTableChecks", 9): deny("DESCRIBE", "TABLE", PK),  # guest lookup a=1 in PK
    ("extraTableChecks", 10): deny("DESCRIBE", "TABLE", PK),  # guest upsert (1,a) into PK
    ("extraTableChecks", 11): ok(),  # root createAcls [TABLE:<db>.test_pk_table_1 User:guest@* READ ALLOW]
    ("extraTableChecks", 12): ok("missing"),  # guest lookup a=1 in PK
    ("extraTableChecks", 13): ok("0"),  # guest getTableStats(PK) row count
    ("extraTableChecks", 14): deny("ALTER", "TABLE", PK),  # guest alterTable(PK, ...) with READ only
    ("extraTableChecks", 15): deny("DESCRIBE", "DATABASE", "<db>"),  # guest getDatabaseInfo(<db>) with table READ only
    ("extraTableChecks", 16): ok(),  # root createAcls [CLUSTER:fluss-cluster User:guest@* READ ALLOW]
    ("extraTableChecks", 17): ok("<db>"),  # guest getDatabaseInfo(<db>) with cluster READ
    ("extraTableChecks", 18): deny("DROP", "TABLE", PK),  # guest dropTable(PK) with cluster READ
    # extraMatching (beyond the ITCase): principals, hosts, wildcard resources
    ("extraMatching", 1): ok(),  # root createAcls [TABLE:* User:*@* DESCRIBE ALLOW]
    ("extraMatching", 2): deny("DESCRIBE", "TABLE", PK),  # guest getTableInfo(PK): User:* is no wildcard
    ("extraMatching", 3): ok(),  # root createAcls [DATABASE:* User:guest@* DESCRIBE ALLOW]
    ("extraMatching", 4): deny("DESCRIBE", "TABLE", PK),  # guest getTableInfo(PK): DATABASE * does not cover tables
    ("extraMatching", 5): ok("<db>"),  # guest getDatabaseInfo(<db>) with DATABASE * DESCRIBE
    ("extraMatching", 6): ok(),  # root createAcls [TABLE:* User:guest@* DESCRIBE ALLOW]
    ("extraMatching", 7): ok(PK),  # guest getTableInfo(PK) with TABLE * DESCRIBE
    ("extraMatching", 8): ok(),  # root createAcls [DATABASE:<db> User:guest@10.255.255.1 CREATE ALLOW]
    ("extraMatching", 9): deny("CREATE", "DATABASE", "<db>"),  # guest createTable(<db>.host_check): other host
    ("extraMatching", 10): ok(),  # root createAcls [DATABASE:<db> User:guest@127.0.0.1 CREATE ANY]
    ("extraMatching", 11): deny("CREATE", "DATABASE", "<db>"),  # guest createTable(<db>.host_check): permission ANY grants nothing
    ("extraMatching", 12): ok(),  # root createAcls [DATABASE:<db> User:guest@127.0.0.1 CREATE ALLOW]
    ("extraMatching", 13): ok(),  # guest createTable(<db>.host_check)
    ("extraMatching", 14): ok("[TABLE:* User:*@* DESCRIBE ALLOW, TABLE:* User:guest@* DESCRIBE ALLOW]"),  # root listAcls(TABLE *)
    ("extraMatching", 15): ok(  # root listAcls(DATABASE <db>, host 127.0.0.1)
        "[DATABASE:<db> User:guest@127.0.0.1 CREATE ALLOW, DATABASE:<db> User:guest@127.0.0.1 CREATE ANY]"),
    ("extraMatching", 16): ok(  # root listAcls(ANY, op CREATE, ALLOW)
        "[DATABASE:<db> User:guest@10.255.255.1 CREATE ALLOW, DATABASE:<db> User:guest@127.0.0.1 CREATE ALLOW]"),
    ("extraMatching", 17): ok(  # guest listAcls(ANY): the bindings on what it can DESCRIBE
        "[DATABASE:* User:guest@* DESCRIBE ALLOW, DATABASE:<db> User:guest@10.255.255.1 CREATE ALLOW, "
        "DATABASE:<db> User:guest@127.0.0.1 CREATE ALLOW, DATABASE:<db> User:guest@127.0.0.1 CREATE ANY, "
        "TABLE:* User:*@* DESCRIBE ALLOW, TABLE:* User:guest@* DESCRIBE ALLOW]"),
    ("extraMatching", 18): deny("ALTER", "DATABASE", "*"),  # guest dropAcls([TABLE *]) without ALTER
    ("extraMatching", 19): ok("[]"),  # guest dropAcls([TABLE nothing.here]): nothing matches, no check
    ("extraMatching", 20): ok(  # root dropAcls([DATABASE <db>, TABLE *]) (deleted bindings)
        "[DATABASE:<db> User:guest@10.255.255.1 CREATE ALLOW, DATABASE:<db> User:guest@127.0.0.1 CREATE ALLOW, "
        "DATABASE:<db> User:guest@127.0.0.1 CREATE ANY, TABLE:* User:*@* DESCRIBE ALLOW, "
        "TABLE:* User:guest@* DESCRIBE ALLOW]"),
    ("extraMatching", 21): ok("[DATABASE:* User:guest@* DESCRIBE ALLOW]"),  # root listAcls(ANY)
}

# Where ours answers otherwise by design, with the KNOWN_DIFFERENCES.md §3
# row that says why: ACQUIRE_KV_SNAPSHOT_LEASE of a snapshot that does not
# exist reports it unavailable and leases nothing (apache/fluss#2600), so
# the lease holds no table and dropping it has nothing to check.
OURS_BY_DESIGN = {
    ("testAcquireKvSnapshotLease", 3): ok("unavailable=[bucket 0]"),
    ("testDropKvSnapshotLease", 3): ok("unavailable=[bucket 0]"),
    ("testDropKvSnapshotLease", 5): ok(),
}
if IS_OURS:
    EXPECTED.update(OURS_BY_DESIGN)

SECURITY_DISABLED_CLASS = "org.apache.fluss.exception.SecurityDisabledException"
EXPECTED_NO_AUTHORIZER = {
    ("testNoAuthorizer", 1): err(SECURITY_DISABLED_CLASS, NO_AUTHORIZER),  # root listAcls(ANY)
    ("testNoAuthorizer", 2): err(SECURITY_DISABLED_CLASS, NO_AUTHORIZER),  # root createAcls(cluster *:* CREATE ALLOW)
    ("testNoAuthorizer", 3): err(SECURITY_DISABLED_CLASS, NO_AUTHORIZER),  # root dropAcls([ANY])
    ("testNoAuthorizer", 4): ok("writer_id>=0:true"),  # root initWriter([]) on tablet server 0
    ("testNoAuthorizer", 5): ok("fluss:true db:true"),  # guest listDatabases contains fluss and <db>
    ("testNoAuthorizer", 6): ok(PK),  # guest getTableInfo(PK)
    ("testNoAuthorizer", 7): ok("writer_id>=0:true"),  # guest initWriter([]) on tablet server 0
}


def normalize(text, db):
    if text is None:
        return None
    text = text.replace(db, "<db>")
    text = re.sub(r"tableId=\d+", "tableId=<id>", text)
    return re.sub(r"table id: \d+", "table id: <id>", text)


def run_java_acl(target, db, *args):
    """One JVM; -> [JSON record per step], the run's stdout/stderr tail."""
    run = REPO / "tests" / "java" / "run"
    env = {**os.environ, "JAVA_SMOKE_TIMEOUT": str(JAVA_TIMEOUT_S - 20)}
    proc = subprocess.run([str(run), target.bootstrap, "JavaAcl", db, *args],
                          capture_output=True, text=True, timeout=JAVA_TIMEOUT_S, env=env)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, (
        f"JavaAcl exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
        f"stderr:\n{proc.stderr[-4000:]}")
    return records


def compare(records, expected, db):
    """-> [mismatch descriptions]: a step answered otherwise than the
    reference, a step missing, or a line nobody expects (a case's setup,
    sync or teardown failed)."""
    mismatches = []
    seen = set()
    for rec in records:
        key = (rec["case"], rec["step"])
        got = {"outcome": rec["outcome"], "error_class": rec["error_class"],
               "message": normalize(rec["message"], db), "result": normalize(rec["result"], db)}
        want = expected.get(key)
        if want is None:
            mismatches.append({"case": key[0], "step": key[1], "what": rec.get("what"),
                               "reference": "(no such step)", "ours": got,
                               "chain": rec.get("chain")})
            continue
        seen.add(key)
        same = all(got[k] == want[k] for k in ("outcome", "error_class", "result"))
        if isinstance(want["message"], list):
            same = same and got["message"] in want["message"]
        else:
            same = same and got["message"] == want["message"]
        if not same:
            mismatches.append({"case": key[0], "step": key[1], "what": rec.get("what"),
                               "reference": want, "ours": got, "chain": rec.get("chain")})
    for key in expected:
        if key not in seen:
            mismatches.append({"case": key[0], "step": key[1], "what": None,
                               "reference": expected[key], "ours": "(step not run)"})
    return mismatches


def report(test, expected, mismatches):
    cases = len({k[0] for k in expected})
    print(json.dumps({"test": test, "cases": cases, "steps": len(expected),
                      "mismatches": len(mismatches)}))
    for m in mismatches:
        print(json.dumps(m))
    return cases


@pytest.mark.timeout(JAVA_TIMEOUT_S + 60)
def test_java_acl_matrix(acl):
    """X5: every step of the ITCase cases (and the extras) answers as the
    reference did."""
    db = unique("acl")
    records = run_java_acl(acl, db)
    mismatches = compare(records, EXPECTED, db)
    report("X5", EXPECTED, mismatches)
    assert not mismatches, "\n".join(json.dumps(m) for m in mismatches)


@pytest.mark.timeout(JAVA_TIMEOUT_S + 60)
def test_java_no_authorizer(noauth):
    """testNoAuthorizer: the three ACL calls fail with SecurityDisabledException
    "No Authorizer is configured."; INIT_WRITER with no table is granted;
    nothing is checked."""
    db = unique("acl_noauth")
    records = run_java_acl(noauth, db, "--no-authorizer")
    mismatches = compare(records, EXPECTED_NO_AUTHORIZER, db)
    report("X5-noauthorizer", EXPECTED_NO_AUTHORIZER, mismatches)
    assert not mismatches, "\n".join(json.dumps(m) for m in mismatches)


# ---------------------------------------------------------------------------
# raw frames
# ---------------------------------------------------------------------------

def test_acl_rpcs_without_authorizer(noauth):
    """reference: CREATE_ACLS, LIST_ACLS and DROP_ACLS answer 47 "No
    Authorizer is configured." on the coordinator, for root and guest
    alike; the tablet server lists LIST_ACLS (not the other two) and
    answers it the same."""
    info = acl_info(RT_CLUSTER, "fluss-cluster", "*", "*", "*", OP_CREATE, PERM_ALLOW)
    for user in ("root", "guest"):
        with noauth.raw("coordinator", user) as c:
            for api, body in ((LIST_ACLS, f_bytes(1, acl_filter())),
                              (CREATE_ACLS, f_bytes(1, info)),
                              (DROP_ACLS, f_bytes(1, acl_filter()))):
                rtype, resp = c.call(api, body)
                assert rtype == RESPONSE_ERROR, (user, api, resp)
                assert decode_error(resp) == (SECURITY_DISABLED, NO_AUTHORIZER), (user, api)
        with noauth.raw("tablet", user) as c:
            _, apis = c.api_versions()
            assert LIST_ACLS in apis and CREATE_ACLS not in apis and DROP_ACLS not in apis, apis
            assert list_acls(c) == (SECURITY_DISABLED, NO_AUTHORIZER), user


@pytest.mark.parametrize("field,binding,words", [
    ("operation", acl_info(RT_CLUSTER, "fluss-cluster", "guest", "User", "*", 99, PERM_ALLOW),
     "Unknown operation type code: 99"),
    ("resource type", acl_info(9, "x", "guest", "User", "*", OP_READ, PERM_ALLOW),
     "Unknown resource type code 9"),
    ("permission", acl_info(RT_DATABASE, "x", "guest", "User", "*", OP_READ, 7),
     "Unknown permission type: 7"),
], ids=["operation", "resource-type", "permission"])
def test_create_acls_unknown_code(acl, field, binding, words):
    """A binding with an unknown code fails the whole request with -1
    (reference: the stack trace of IllegalArgumentException("<words>")
    from fromCode, thrown while the request is converted); the good
    binding next to it is not stored."""
    good = acl_info(RT_DATABASE, unique("acl_raw_db"), "guest", "User", "*", OP_READ, PERM_ALLOW)
    try:
        with acl.raw() as c:
            rtype, body = create_acls(c, good, binding)
            assert rtype == RESPONSE_ERROR, f"{field}: accepted: {decode(body)}"
            code, message = decode_error(body)
            assert code == UNKNOWN_SERVER_ERROR, (code, message)
            assert message and words in message, message
            assert list_acls(c) == [], "the request stored something"
    finally:
        drop_all_acls(acl)


def test_create_acls_duplicate_binding(acl):
    """The same binding twice in one request: reference -1 (Collectors.toMap
    throws IllegalStateException "Duplicate key ..."), nothing stored."""
    info = acl_info(RT_DATABASE, unique("acl_dup_db"), "guest", "User", "*", OP_READ, PERM_ALLOW)
    try:
        with acl.raw() as c:
            rtype, body = create_acls(c, info, info)
            assert rtype == RESPONSE_ERROR, decode(body)
            code, message = decode_error(body)
            assert code == UNKNOWN_SERVER_ERROR and message, (code, message)
            assert list_acls(c) == []
    finally:
        drop_all_acls(acl)


@pytest.fixture
async def log_table(acl):
    """A log table (2 buckets) made by root in a fresh database: (db,
    table, table_id); the database and every ACL are dropped after."""
    conn = await fluss.FlussConnection.create(acl.pyfluss_config("root"))
    admin = conn.get_admin()
    db = unique("acl_raw")
    await admin.create_database(db, ignore_if_exists=False)
    try:
        path = await create_log_table(admin, db, "rawlog", pa.schema([("id", pa.int32())]),
                                      bucket_count=2)
        table_id = (await admin.get_table_info(path)).table_id
        drop_all_acls(acl)
        yield db, "rawlog", table_id
    finally:
        drop_all_acls(acl)
        await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
        await conn.close()


def metadata_tables(conn, db, table):
    """GET_METADATA of one table -> (number of table_metadata entries,
    coordinator present, number of tablet servers)."""
    rtype, body = conn.call(sw.GET_METADATA, f_bytes(1, table_path_msg(db, table)))
    assert rtype == RESPONSE_SUCCESS, decode_error(body)
    f = decode(body)
    return len(f.get(3, [])), 1 in f, len(f.get(2, []))


@pytest.mark.parametrize("role", ["coordinator", "tablet"])
def test_guest_metadata_without_describe(acl, log_table, role):
    """reference: GET_METADATA of a table the guest may not DESCRIBE
    answers success without table_metadata (the servers still listed);
    after a DESCRIBE grant on the table, one table_metadata."""
    db, table, _ = log_table
    with acl.raw(role, "guest") as c:
        assert metadata_tables(c, db, table) == (0, True, 1)
    grant(acl, acl_info(RT_TABLE, f"{db}.{table}", "guest", "User", "*", OP_DESCRIBE,
                        PERM_ALLOW))
    with acl.raw(role, "guest") as c:
        assert metadata_tables(c, db, table) == (1, True, 1)


def test_fetch_log_without_read(acl, log_table):
    """reference: FETCH_LOG by the guest without READ answers success with
    a per-bucket error 48 "No permission to READ table <t> in database
    <db>" for each bucket; after a READ grant the buckets answer."""
    db, table, table_id = log_table
    with acl.raw("tablet", "guest") as c:
        rtype, buckets = fetch_log(c, table_id, {0: 0, 1: 0})
        assert rtype == RESPONSE_SUCCESS, buckets
        assert sorted((b["bucket"], b["error_code"], b["error_message"]) for b in buckets) == [
            (b, AUTHORIZATION_FAILED, f"No permission to READ table {table} in database {db}")
            for b in (0, 1)]
    # WRITE does not give READ
    grant(acl, acl_info(RT_TABLE, f"{db}.{table}", "guest", "User", "*", OP_WRITE, PERM_ALLOW))
    with acl.raw("tablet", "guest") as c:
        _, buckets = fetch_log(c, table_id, {0: 0})
        assert [(b["error_code"], b["error_message"]) for b in buckets] == [
            (AUTHORIZATION_FAILED, f"No permission to READ table {table} in database {db}")]
    grant(acl, acl_info(RT_TABLE, f"{db}.{table}", "guest", "User", "*", OP_READ, PERM_ALLOW))
    with acl.raw("tablet", "guest") as c:
        rtype, buckets = fetch_log(c, table_id, {0: 0, 1: 0})
        assert rtype == RESPONSE_SUCCESS, buckets
        assert sorted((b["bucket"], b["error_code"]) for b in buckets) == [(0, 0), (1, 0)]


def test_fetch_log_unknown_table_id(acl):
    """reference: with the authorizer on, FETCH_LOG of a table id the
    tablet server does not know answers a per-bucket 21 with the
    authorization check's words (its server name: server-<id>)."""
    with acl.raw("tablet", "guest") as c:
        rtype, buckets = fetch_log(c, 999_999_999, {0: 0})
        assert rtype == RESPONSE_SUCCESS, buckets
        assert [(b["bucket"], b["error_code"], b["error_message"]) for b in buckets] == [
            (0, UNKNOWN_TABLE_OR_BUCKET,
             "This server server-0 does not know this table ID 999999999. This may happen "
             "when the table metadata cache in the server is not updated yet.")]
