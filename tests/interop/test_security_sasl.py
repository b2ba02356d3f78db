"""SASL/PLAIN authentication as Apache Fluss 0.9.1 does it, through pyfluss,
the Java client and raw frames; the reference server is the oracle.

The server under test has one SASL listener for clients, configured as:

  security.protocol.map: <listener>:SASL
  security.sasl.enabled.mechanisms: PLAIN
  security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule
      required user_admin="admin-pass" user_bob="bob-pass";

FLUSS_SERVER=ours (default): the module starts its own flussd (listener
FLUSS, SASL_ARGS below; FLUSSD picks the binary, as in conftest) and stops
it at the end. FLUSS_SERVER=reference: start the reference with that
config (listener CLIENT) and run against it:

  REF_EXTRA_CONFIG="$(printf '%s\n' \
      'security.protocol.map: CLIENT:SASL, INTERNAL:PLAINTEXT' \
      'security.sasl.enabled.mechanisms: PLAIN' \
      'security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="admin-pass" user_bob="bob-pass";')" \
  PYTHON=tests/interop/saslwire.py tests/reference/start
  FLUSS_SERVER=reference FLUSS_BOOTSTRAP=127.0.0.1:19123 \
      .venv/bin/python -m pytest tests/interop/test_security_sasl.py
  tests/reference/stop

(PYTHON=...saslwire.py: start's readiness probe sends GET_METADATA, which
a SASL listener refuses before authentication, so start would give up
after REF_START_TIMEOUT and stop the cluster; saslwire.py runs the probe
with an AUTHENTICATE first.) Without SASL
on FLUSS_BOOTSTRAP the module is skipped. FLUSS_SERVER=cluster: skipped
(the cluster script takes no per-module listener config).

Tests marked `ours_only` check what fluss-c adds: failed authentications
answered after a delay, no password in the server's output, a 64 KiB cap
on frames before authentication and an authentication deadline
(`security.sasl.authentication.timeout`). Ours also closes the connection
after a request refused for want of authentication (the reference keeps
it open): test_every_api_refused_before_authentication checks each side.

Every expected answer below was recorded from the reference (apache/fluss
0.9.1-incubating jars from Maven Central, tests/reference/start, config
above); "reference:" comments quote what it answered.
"""

import asyncio
import json
import os
import socket
import struct
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest

import fluss
import saslwire as sw
from conftest import IS_CLUSTER, IS_OURS, IS_REFERENCE, REPO, OurServer, unique
from logutil import create_log_table, read_all
from rawwire import (RESPONSE_ERROR, RESPONSE_SUCCESS, ConnectionClosed, RawConnection,
                     decode_error)

pytestmark = pytest.mark.skipif(
    IS_CLUSTER, reason="FLUSS_SERVER=cluster: the cluster script takes no SASL listener config")

JAAS = ('org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required '
        'user_admin="admin-pass" user_bob="bob-pass";')
SASL_ARGS = ("-D", "security.protocol.map=FLUSS:SASL",
             "-D", "security.sasl.enabled.mechanisms=PLAIN",
             "-D", f"security.sasl.plain.jaas.config={JAAS}")
USERS = {"admin": "admin-pass", "bob": "bob-pass"}
# The wrong password the Java side (JavaSasl.java) and these tests send.
WRONG_PASSWORD = "not-the-password"

COORDINATOR, TABLET = 1, 2  # ApiVersionsResponse.server_type
MIN_FAILURE_DELAY_S = 0.100  # ours: failed authentications answered after a delay
PREAUTH_FRAME_MAX = 64 * 1024  # ours: the largest frame before authentication


# ---------------------------------------------------------------------------
# the server under test (one per module)
# ---------------------------------------------------------------------------

class SaslTarget(sw.Target):
    def raw(self, role="coordinator", timeout=5.0):
        return RawConnection(self.host, self.ports()[role], timeout)

    def raw_authenticated(self, role="coordinator", user="admin"):
        conn = self.raw(role)
        rtype, body = sw.authenticate(conn, "PLAIN", sw.plain_token(user, USERS[user]))
        assert_authenticated(rtype, body)
        return conn

    def output_files(self):
        """Everything our server wrote (stdout and stderr of each start)."""
        if self.server is None:
            return []
        return sorted(p for p in Path(self.server.log_dir).iterdir()
                      if p.is_file() and p.suffix in (".stdout", ".stderr", ".log"))


def assert_authenticated(rtype, body):
    """A successful first AUTHENTICATE. Its exact bytes (reference: 0a 00,
    a challenge present and empty) are test_first_success_answer's: the
    other tests check only that it succeeded, so one difference there does
    not fail them all."""
    assert rtype == RESPONSE_SUCCESS, decode_error(body) if rtype == RESPONSE_ERROR else body


def _sasl_state(host, port):
    """How a fresh connection is treated: LIST_DATABASES before any
    AUTHENTICATE -> None when served (no SASL), else (code, message)."""
    with RawConnection(host, port, timeout=5) as c:
        c.api_versions()
        rtype, body = c.call(sw.LIST_DATABASES, b"")
    return None if rtype == RESPONSE_SUCCESS else decode_error(body)


@pytest.fixture(scope="module")
def sasl(tmp_path_factory):
    if IS_REFERENCE:
        bootstrap = os.environ.get("FLUSS_BOOTSTRAP")
        if not bootstrap:
            pytest.fail("FLUSS_SERVER=reference needs FLUSS_BOOTSTRAP=host:port", pytrace=False)
        host, _, port = bootstrap.rpartition(":")
        try:
            state = _sasl_state(host, int(port))
        except OSError as e:
            pytest.fail(f"reference at {bootstrap} does not answer: {e}", pytrace=False)
        if state is None or state[0] != sw.AUTHENTICATE_EXCEPTION:
            pytest.skip(f"the reference at {bootstrap} is not configured for SASL/PLAIN on its "
                        f"CLIENT listener (LIST_DATABASES before authentication answered "
                        f"{state or 'success'}); start it with REF_EXTRA_CONFIG as in this "
                        f"module's docstring")
        with RawConnection(host, int(port)) as c:
            rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass"))
            assert rtype == RESPONSE_SUCCESS, (
                f"the reference does not accept admin/admin-pass: {decode_error(body)}")
            _, tablets = sw.server_nodes(c)
        assert tablets, "the reference lists no tablet server"
        yield SaslTarget(host, int(port), tablets[0][2])
        return

    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.fail(f"server binary {binary} not found or not executable", pytrace=False)
    base = tmp_path_factory.mktemp("flussd_sasl")
    (base / "data").mkdir()
    # as conftest's start_server does it, but once for the whole module
    srv = OurServer(binary, base / "data", base, list(SASL_ARGS), name="flussd-sasl")
    srv.start()
    try:
        yield SaslTarget(srv.host, srv.coordinator_port, srv.tablet_port, srv)
    finally:
        srv.stop()  # a non-zero exit or a sanitizer report fails the session (conftest)


# ---------------------------------------------------------------------------
# pyfluss
# ---------------------------------------------------------------------------

def pyfluss_config(bootstrap, user=None, password=None):
    props = {"bootstrap.servers": bootstrap}
    if user is not None:
        props.update({"security.protocol": "sasl", "security.sasl.mechanism": "PLAIN",
                      "security.sasl.username": user, "security.sasl.password": password})
    return fluss.Config(props)


async def test_pyfluss_good_credentials_write_and_read(sasl):
    """admin/admin-pass: a database, a log table, rows appended (the tablet
    server authenticates the writer too) and read back."""
    conn = await fluss.FlussConnection.create(
        pyfluss_config(sasl.bootstrap, "admin", "admin-pass"))
    try:
        admin = conn.get_admin()
        db = unique("sasl_py")
        await admin.create_database(db, ignore_if_exists=False)
        try:
            assert db in await admin.list_databases()
            schema = pa.schema([pa.field("id", pa.int32()), pa.field("name", pa.string())])
            path = await create_log_table(admin, db, "rows", schema, bucket_count=1)
            table = await conn.get_table(path)
            writer = table.new_append().create_writer()
            for i in range(50):
                writer.append({"id": i, "name": f"n{i}"})
            await writer.flush()
            got = (await read_all(conn, admin, path)).sort_by([("id", "ascending")])
            assert got.column("id").to_pylist() == list(range(50))
            assert got.column("name").to_pylist() == [f"n{i}" for i in range(50)]
        finally:
            await admin.drop_database(db, ignore_if_not_exists=True, cascade=True)
    finally:
        await conn.close()


async def test_pyfluss_second_user(sasl):
    conn = await fluss.FlussConnection.create(pyfluss_config(sasl.bootstrap, "bob", "bob-pass"))
    try:
        assert "fluss" in await conn.get_admin().list_databases()
    finally:
        await conn.close()


# reference: FlussConnection.create itself fails (it fetches the cluster
# metadata) with FlussError code 46 and these messages
@pytest.mark.parametrize("user,password,message", [
    ("admin", WRONG_PASSWORD, sw.INVALID_CREDENTIALS),
    ("mallory", "admin-pass", sw.INVALID_CREDENTIALS),
    (None, None, sw.NOT_AUTHENTICATED),
], ids=["wrong-password", "unknown-user", "no-credentials"])
async def test_pyfluss_bad_credentials(sasl, user, password, message):
    with pytest.raises(fluss.FlussError) as ei:
        conn = await asyncio.wait_for(
            fluss.FlussConnection.create(pyfluss_config(sasl.bootstrap, user, password)), 30)
        await conn.close()
    err = ei.value
    assert (err.error_code, err.message) == (sw.AUTHENTICATE_EXCEPTION, message)
    assert str(err) == f"FlussError(code=46): {message}"


# ---------------------------------------------------------------------------
# Java client (tests/java JavaSasl)
# ---------------------------------------------------------------------------

JAVA_CASES = ("good", "good-jaas", "wrong-password", "unknown-user", "no-credentials")


@pytest.fixture(scope="module")
def java_results(sasl):
    """One JVM for every case; {case: parsed JSON line}."""
    run = REPO / "tests" / "java" / "run"
    proc = subprocess.run([str(run), sasl.bootstrap, "JavaSasl", ",".join(JAVA_CASES),
                           unique("sasl_java")], capture_output=True, text=True, timeout=600)
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            out[rec["case"]] = rec
    assert proc.returncode == 0 and set(out) == set(JAVA_CASES), (
        f"JavaSasl exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
        f"stderr:\n{proc.stderr[-4000:]}")
    return out


def test_java_good_credentials_write_and_read(java_results):
    # reference: {"case":"good","ok":true,"detail":"rows_written=20 rows_read=20 first=row-0
    # last=row-19"}
    rec = java_results["good"]
    assert rec["ok"], rec
    assert rec["detail"] == "rows_written=20 rows_read=20 first=row-0 last=row-19"


def test_java_jaas_config(java_results):
    # client.security.sasl.jaas.config with bob; reference: listDatabases=[fluss]
    rec = java_results["good-jaas"]
    assert rec["ok"], rec
    assert rec["detail"].startswith("listDatabases=[") and "fluss" in rec["detail"]


@pytest.mark.parametrize("case,message", [
    ("wrong-password", sw.INVALID_CREDENTIALS),
    ("unknown-user", sw.INVALID_CREDENTIALS),
    ("no-credentials", sw.NOT_AUTHENTICATED),
], ids=["wrong-password", "unknown-user", "no-credentials"])
def test_java_bad_credentials(sasl, java_results, case, message):
    # reference: ConnectionFactory.createConnection throws
    #   java.lang.IllegalStateException "Failed to initialize fluss client connection to
    #   bootstrap servers: [/127.0.0.1:19123]. \nReason:
    #   org.apache.fluss.exception.AuthenticationException: <message>"
    # caused by ExecutionException <- AuthenticationException "<message>"
    rec = java_results[case]
    assert not rec["ok"], rec
    assert rec["error_class"] == "java.lang.IllegalStateException", rec
    assert rec["error_message"] == (
        f"Failed to initialize fluss client connection to bootstrap servers: "
        f"[/{sasl.bootstrap}]. \nReason: org.apache.fluss.exception.AuthenticationException: "
        f"{message}"), rec
    assert rec["chain"][-1] == ["org.apache.fluss.exception.AuthenticationException", message]
    assert [c[0] for c in rec["chain"]] == [
        "java.lang.IllegalStateException", "java.util.concurrent.ExecutionException",
        "org.apache.fluss.exception.AuthenticationException"]


# ---------------------------------------------------------------------------
# raw frames
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("role,server_type", [("coordinator", COORDINATOR), ("tablet", TABLET)])
def test_api_versions_before_authentication(sasl, role, server_type):
    """(a) API_VERSIONS is answered before AUTHENTICATE and lists it.
    reference: coordinator 45 APIs, tablet server 32, both with 1038 v0-0."""
    with sasl.raw(role) as c:
        got_type, apis = c.api_versions()
        assert got_type == server_type
        assert apis.get(sw.AUTHENTICATE) == (0, 0), apis
        assert apis.get(sw.API_VERSIONS) == (0, 0), apis
        # and again: API_VERSIONS does not end the AUTHENTICATING state
        assert c.api_versions()[1] == apis
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION, sw.NOT_AUTHENTICATED)


@pytest.mark.parametrize("body_kind", ["minimal", "empty"])
@pytest.mark.parametrize("role", ["coordinator", "tablet"])
def test_every_api_refused_before_authentication(sasl, role, body_kind):
    """(b) Every other API the server lists, sent before authentication,
    gets 46 with the message; accepted (non-error) answers: 0.

    minimal: a body 0.9.1 parses (saslwire.MINIMAL_BODIES). reference: 46
    for all of them (43 APIs on the coordinator, 30 on the tablet server),
    on one connection that stays open and can still authenticate.
    empty: an empty body. reference: only the APIs whose request has no
    required field are answered (13 of 43 on the coordinator, 6 of 30 on
    the tablet server); the others are never answered (saslwire) — so ours
    only, where every one must be refused.

    Ours closes the connection after the refusal: one connection per API,
    each checked to be closed with nothing more sent."""
    if body_kind == "empty" and not IS_OURS:
        pytest.skip("reference: requests with required fields and an empty body are never "
                    "answered before authentication (recorded: 30 of 43 coordinator APIs, "
                    "24 of 30 tablet server APIs silent for 3 s)")
    with sasl.raw(role) as c:
        _, apis = c.api_versions()
    keys = sorted(k for k in apis if k not in (sw.API_VERSIONS, sw.AUTHENTICATE))
    if IS_REFERENCE:
        assert all(k in sw.MINIMAL_BODIES for k in keys), keys
    # keys 0.9.1 does not have (ours: fluss-c's own, e.g. 1904 LAKE_TIER_NOW)
    # go with an empty body either way
    bodies = {k: sw.MINIMAL_BODIES.get(k, b"") if body_kind == "minimal" else b"" for k in keys}
    accepted, wrong = [], []
    shared = None if IS_OURS else sasl.raw(role)
    try:
        for rid, key in enumerate(keys, start=100):
            conn = shared or sasl.raw(role)
            try:
                if IS_OURS:
                    conn.api_versions()  # as a client would; still allowed
                try:
                    frame = sw.call_frame(conn, key, bodies[key], rid)
                except (socket.timeout, ConnectionClosed) as e:
                    wrong.append((key, f"no answer: {e!r}"))
                    if shared is not None:
                        shared.close()
                        shared = conn = sasl.raw(role)
                    continue
                if frame[0] != RESPONSE_ERROR:
                    accepted.append(key)
                    continue
                answer = decode_error(frame[5:])
                if answer != (sw.AUTHENTICATE_EXCEPTION, sw.NOT_AUTHENTICATED):
                    wrong.append((key, answer))
                if IS_OURS:
                    what, data = sw.wait_answer_or_close(conn, 5.0)
                    if (what, data) != ("closed", b""):
                        wrong.append((key, f"not closed after the refusal: {what} {data!r}"))
            finally:
                if conn is not shared:
                    conn.close()
        if shared is not None:
            # reference: the connection is still open and still AUTHENTICATING
            assert shared.api_versions()[1] == apis
            rtype, body = sw.authenticate(shared, "PLAIN", sw.plain_token("admin", "admin-pass"))
            assert_authenticated(rtype, body)
    finally:
        if shared is not None:
            shared.close()
    print(json.dumps({"test": "X1", "server": role, "body": body_kind, "apis": len(keys),
                      "accepted": len(accepted)}))
    assert not accepted, f"served before authentication: {accepted}"
    assert not wrong, f"not refused as expected: {wrong}"


# reference: each of these, on a fresh connection, is answered with an
# ErrorResponse 46 and exactly this message (echoing the request id)
MALFORMED = [
    ("no-nul", b"adminadmin-pass", sw.tokens_message(1)),
    ("empty-token", b"", sw.tokens_message(1)),
    ("two-parts", b"admin\0admin-pass", sw.tokens_message(2)),
    ("four-parts", b"\0admin\0admin-pass\0extra", sw.tokens_message(4)),
    ("five-parts", b"\0a\0b\0c\0d", sw.tokens_message(4)),  # split stops at 4
    ("empty-user", b"\0\0admin-pass", sw.NO_USERNAME),
    ("empty-user-and-password", b"\0\0", sw.NO_USERNAME),
    ("empty-password", b"\0admin\0", sw.NO_PASSWORD),
    ("authzid-not-user", b"bob\0admin\0admin-pass", sw.AUTHZID_DIFFERS),
    # the password is checked before the authzid
    ("authzid-not-user-wrong-password", b"bob\0admin\0" + WRONG_PASSWORD.encode(),
     sw.INVALID_CREDENTIALS),
    ("user-other-case", b"\0ADMIN\0admin-pass", sw.INVALID_CREDENTIALS),
    ("other-users-password", b"\0admin\0bob-pass", sw.INVALID_CREDENTIALS),
]


@pytest.mark.parametrize("token,message", [m[1:] for m in MALFORMED],
                         ids=[m[0] for m in MALFORMED])
def test_authenticate_refusals(sasl, token, message):
    """(c) malformed and refused PLAIN tokens."""
    with sasl.raw() as c:
        c.api_versions()
        frame = sw.call_frame(c, sw.AUTHENTICATE, sw.authenticate_body("PLAIN", token), 77)
        assert frame[0] == RESPONSE_ERROR
        assert decode_error(frame[5:]) == (sw.AUTHENTICATE_EXCEPTION, message)
        # reference: error_code then error_message, nothing else
        assert frame[5:] == sw.error_body(sw.AUTHENTICATE_EXCEPTION, message)


def test_authzid_equal_to_user_is_accepted(sasl):
    # reference: "admin\0admin\0admin-pass" -> success, challenge present and empty
    with sasl.raw() as c:
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass",
                                                                  authzid="admin"))
        assert_authenticated(rtype, body)
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


def test_unknown_user_and_wrong_password_answer_alike(sasl):
    """(d) nothing tells an unknown user from a wrong password: the whole
    response frames (same request id) are byte for byte the same.
    reference: 01 00000007 082e 1233 "Authentication failed: Invalid
    username or password" for both."""
    frames = []
    for token in (sw.plain_token("mallory", "admin-pass"),
                  sw.plain_token("admin", WRONG_PASSWORD),
                  sw.plain_token("mallory", WRONG_PASSWORD)):
        with sasl.raw() as c:
            c.api_versions()
            frames.append(sw.call_frame(c, sw.AUTHENTICATE,
                                        sw.authenticate_body("PLAIN", token), 7))
    assert frames[0] == frames[1] == frames[2]
    assert frames[0] == (b"\x01\x00\x00\x00\x07"
                         + sw.error_body(sw.AUTHENTICATE_EXCEPTION, sw.INVALID_CREDENTIALS))


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "GSSAPI", "", "PLAIN "])
def test_mechanism_not_enabled(sasl, mechanism):
    """(e) reference: 46 "SASL server enables [PLAIN] while protocol of
    client is '<mechanism>'"; the connection stays usable: a PLAIN
    authentication on it afterwards succeeds."""
    with sasl.raw() as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, mechanism, sw.plain_token("admin", "admin-pass"))
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION,
                                                sw.mechanism_message(mechanism))
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass"))
        assert_authenticated(rtype, body)
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


def test_mechanism_name_in_lower_case(sasl):
    """reference: "plain" passes the enabled-mechanism check (compared in
    upper case) but the SASL server factory knows only "PLAIN": UNKNOWN_SERVER_ERROR
    (-1) whose message is a Java stack trace starting "java.lang.RuntimeException:
    java.lang.IllegalArgumentException: Unsupported mechanism: plain"; the
    connection is still not authenticated (46 for LIST_DATABASES)."""
    with sasl.raw() as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "plain", sw.plain_token("admin", "admin-pass"))
        if IS_OURS:
            # ours (KNOWN_DIFFERENCES §3): mechanism names are case-insensitive
            # on both checks, as RFC 4422 names them
            assert_authenticated(rtype, body)
            assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS
            return
        code, message = sw.expect_error(rtype, body)
        assert code == -1, (code, message)
        assert "Unsupported mechanism: plain" in (message or ""), message
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION, sw.NOT_AUTHENTICATED)


@pytest.mark.parametrize("role", ["coordinator", "tablet"])
@pytest.mark.parametrize("user", ["admin", "bob"])
def test_authenticated_connection_is_served(sasl, role, user):
    """(f) after a good AUTHENTICATE (its bytes: test_first_success_answer)
    other APIs are served on the same connection."""
    with sasl.raw(role) as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token(user, USERS[user]))
        assert_authenticated(rtype, body)
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        assert rtype == RESPONSE_SUCCESS, decode_error(body)
        assert b"fluss" in body
        coord, tablets = sw.server_nodes(c)
        assert tablets and coord is not None
        assert c.api_versions()[0] == (COORDINATOR if role == "coordinator" else TABLET)


@pytest.mark.parametrize("role", ["coordinator", "tablet"])
def test_first_success_answer(sasl, role):
    """reference: the whole answer to a good first AUTHENTICATE is
    00 | request id | 0a 00 — an AuthenticateResponse whose challenge is
    present and empty (NettyServerHandler sets the challenge whenever the
    SASL server returns one, and PlainSaslServer returns new byte[0])."""
    with sasl.raw(role) as c:
        c.api_versions()
        frame = sw.call_frame(c, sw.AUTHENTICATE, sw.authenticate_body(
            "PLAIN", sw.plain_token("admin", "admin-pass")), 0x01020304)
        assert frame == b"\x00\x01\x02\x03\x04\x0a\x00"


def test_authenticate_without_api_versions_first(sasl):
    # reference: API_VERSIONS is not required before AUTHENTICATE
    with sasl.raw() as c:
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass"))
        assert_authenticated(rtype, body)
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


def test_retry_after_failed_authentication_on_same_connection(sasl):
    """reference: a failed AUTHENTICATE leaves the connection open and
    AUTHENTICATING; a good one on it afterwards succeeds."""
    with sasl.raw() as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", WRONG_PASSWORD))
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION,
                                                sw.INVALID_CREDENTIALS)
        rtype, body = sw.authenticate(c, "PLAIN", b"garbage")
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION, sw.tokens_message(1))
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass"))
        assert_authenticated(rtype, body)
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


def test_second_authenticate_after_success(sasl):
    """(g) reference: once authenticated, AUTHENTICATE with an enabled
    mechanism is answered with success and an EMPTY body (no challenge
    field, unlike the first answer) whatever the token — the same or other
    credentials, a wrong password, garbage, "plain" in lower case; a
    mechanism not enabled still gets 46. The connection stays
    authenticated."""
    with sasl.raw() as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass"))
        assert_authenticated(rtype, body)
        for mechanism, token in [("PLAIN", sw.plain_token("admin", "admin-pass")),
                                 ("PLAIN", sw.plain_token("bob", "bob-pass")),
                                 ("PLAIN", sw.plain_token("admin", WRONG_PASSWORD)),
                                 ("PLAIN", b"garbage"),
                                 ("plain", sw.plain_token("admin", "admin-pass"))]:
            rtype, body = sw.authenticate(c, mechanism, token)
            assert (rtype, body) == (RESPONSE_SUCCESS, b""), (
                mechanism, token, decode_error(body) if rtype == RESPONSE_ERROR else body)
        rtype, body = sw.authenticate(c, "SCRAM-SHA-256", b"n,,n=admin,r=abc")
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION,
                                                sw.mechanism_message("SCRAM-SHA-256"))
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        assert rtype == RESPONSE_SUCCESS, decode_error(body)


def test_large_authenticate_below_the_cap(sasl):
    # reference: a 60 KiB token (no NUL) -> 46 "... expected 3 tokens, got 1";
    # below our pre-authentication frame cap, so ours answers it the same way
    with sasl.raw() as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "PLAIN", b"x" * (60 * 1024))
        assert sw.expect_error(rtype, body) == (sw.AUTHENTICATE_EXCEPTION, sw.tokens_message(1))


# ---------------------------------------------------------------------------
# ours only
# ---------------------------------------------------------------------------

@pytest.mark.ours_only
@pytest.mark.skipif(not IS_OURS, reason="fluss-c's pre-authentication frame cap "
                    "(the reference answers a 200 KiB frame before authentication)")
def test_oversized_frame_before_authentication_closes(sasl):
    with sasl.raw() as c:
        c.api_versions()
        payload = (b"\x03\xeb\x00\x00\x00\x00\x00\x09"  # LIST_DATABASES v0, request id 9
                   + b"\x00" * (PREAUTH_FRAME_MAX + 16 - 8))
        try:
            c.sock.sendall(len(payload).to_bytes(4, "big") + payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while we were still sending: fine
        assert sw.wait_answer_or_close(c, 5.0) == ("closed", b"")
    # the same size after authentication is read (and answered)
    with sasl.raw_authenticated() as c:
        rtype, body = sw.authenticate(c, "PLAIN", b"x" * (PREAUTH_FRAME_MAX + 16))
        assert (rtype, body) == (RESPONSE_SUCCESS, b"")


@pytest.mark.ours_only
@pytest.mark.skipif(not IS_OURS, reason="fluss-c's authentication deadline")
def test_unauthenticated_connection_times_out(start_server):
    srv = start_server(*SASL_ARGS, "-D", "security.sasl.authentication.timeout=1s")
    target = SaslTarget(srv.host, srv.coordinator_port, srv.tablet_port, srv)
    for role in ("coordinator", "tablet"):
        idle, talking, done = target.raw(role), target.raw(role), target.raw(role)
        try:
            t0 = time.monotonic()
            talking.api_versions()  # allowed, but does not authenticate
            rtype, body = sw.authenticate(done, "PLAIN", sw.plain_token("bob", "bob-pass"))
            assert_authenticated(rtype, body)
            for conn in (idle, talking):
                assert sw.wait_answer_or_close(conn, 5.0) == ("closed", b""), role
            elapsed = time.monotonic() - t0
            assert 0.8 <= elapsed <= 5.0, f"{role}: closed after {elapsed:.2f}s, timeout 1s"
            time.sleep(max(0.0, 1.5 - elapsed))
            # the authenticated one is not subject to the deadline
            rtype, body = done.call(sw.LIST_DATABASES, b"")
            assert rtype == RESPONSE_SUCCESS, decode_error(body)
        finally:
            for conn in (idle, talking, done):
                conn.close()


@pytest.mark.ours_only
@pytest.mark.skipif(not IS_OURS, reason="fluss-c's failure delay and its own logs")
def test_failures_delayed_and_passwords_never_logged(sasl):
    """Failed authentications are answered after >= 100 ms; no password —
    the configured ones, the wrong ones sent — appears in anything our
    server wrote (after every test of this module has authenticated, well
    and badly, with pyfluss, Java and raw frames)."""
    attempt_secrets = [f"wrong-{i}-{os.urandom(4).hex()}" for i in range(4)]
    tokens = [sw.plain_token("admin", attempt_secrets[0]),
              sw.plain_token("mallory", attempt_secrets[1]),
              sw.plain_token("bob", attempt_secrets[2], authzid="admin"),  # wrong pw first
              attempt_secrets[3].encode(),  # malformed: no NUL
              sw.plain_token("admin", "")]
    successes, slow, answers = 0, [], []
    for token in tokens:
        with sasl.raw() as c:
            c.api_versions()
            t0 = time.monotonic()
            rtype, body = sw.authenticate(c, "PLAIN", token)
            slow.append(time.monotonic() - t0)
            successes += rtype == RESPONSE_SUCCESS
            answers.append(decode_error(body) if rtype == RESPONSE_ERROR else (rtype, body))
    for user in USERS:  # and good ones, so a success path that logs is caught too
        sasl.raw_authenticated(user=user).close()
    secrets = list(USERS.values()) + [WRONG_PASSWORD] + attempt_secrets
    hits = {}
    for path in sasl.output_files():
        data = path.read_bytes()
        for s in secrets:
            n = data.count(s.encode())
            if n:
                hits[f"{path.name}:{s}"] = n
    print(json.dumps({"test": "X2", "attempts": len(tokens), "successes": successes,
                      "secret_hits_in_logs": sum(hits.values())}))
    assert successes == 0, answers
    assert all(a[0] == sw.AUTHENTICATE_EXCEPTION for a in answers), answers
    assert min(slow) >= MIN_FAILURE_DELAY_S, (
        f"failures answered after {[round(s * 1000) for s in slow]} ms")
    assert not hits, f"passwords in the server's output: {hits}"
    assert sasl.output_files(), "no server output files found to check"


@pytest.mark.ours_only
@pytest.mark.skipif(not IS_OURS, reason="fluss-c's failure delay")
def test_failure_delay_does_not_stall_other_connections(sasl):
    """The delay is a timer, not a wait on a network loop: with failed
    authentications pending on 8 connections (so on every loop), 4 other
    connections authenticate and are served before any failure is
    answered."""
    import select
    pending = [sasl.raw() for _ in range(8)]
    try:
        for i, c in enumerate(pending):
            c.send_request(sw.AUTHENTICATE, sw.authenticate_body(
                "PLAIN", sw.plain_token("admin", f"{WRONG_PASSWORD}-{i}")), request_id=i + 1)
        t0 = time.monotonic()
        for _ in range(4):
            with sasl.raw_authenticated(user="bob") as c:
                assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS
        served_after = time.monotonic() - t0
        readable, _, _ = select.select([c.sock for c in pending], [], [], 0)
        assert not readable, (f"{len(readable)} failure(s) answered before the good "
                              f"connections were served ({served_after * 1000:.0f} ms)")
        for c in pending:  # and each failure is answered in the end
            rtype, _, body = c.recv_response()
            assert decode_error(body) == (sw.AUTHENTICATE_EXCEPTION, sw.INVALID_CREDENTIALS)
    finally:
        for c in pending:
            c.close()


# ---- ours only: what flussd refuses ----

@pytest.mark.skipif(not IS_OURS, reason="fluss-c's own refusals (KNOWN_DIFFERENCES §3)")
def test_follower_fetch_refused_on_client_listener(sasl):
    """A FETCH_LOG with follower_server_id >= 0 is a replica's: on a client
    listener ours answers 48 (0.9.1 serves it as a follower's fetch)."""
    with sasl.raw("tablet") as c:
        c.api_versions()
        assert_authenticated(*sw.authenticate(c, "PLAIN", sw.plain_token("admin", "admin-pass")))
        rtype, body = c.call(1015, bytes.fromhex("08001000"))  # follower_server_id 0
        code, message = sw.expect_error(rtype, body)
        assert code == 48, (code, message)
        assert "inter-server request" in message, message
        # the connection is still usable
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


@pytest.mark.skipif(not IS_OURS, reason="fluss-c refuses these at start")
@pytest.mark.parametrize("args,words", [
    (["-D", "security.protocol.map=FLUSS:SASL", "-D", "security.sasl.enabled.mechanisms=GSSAPI",
      "-D", f"security.sasl.plain.jaas.config={JAAS}"], "mechanism 'GSSAPI' is not supported"),
    (["-D", "security.protocol.map=FLUSS:SASL"], "has no users"),
    (["-D", "security.protocol.map=FLUSS:KERBEROS"], "no authentication protocol 'KERBEROS'"),
    (["-D", "security.protocol.map=FLUSS:SASL", "-D",
      "security.sasl.plain.jaas.config=PlainLoginModule required user_a=\"x;"], "no closing quote"),
    (["-D", "authorizer.enabled=maybe"], "authorizer.enabled must be true or false"),
    (["-D", "authorizer.enabled=true", "-D", "super.users=admin"], "super.users"),
], ids=["mechanism", "no-users", "protocol", "jaas", "authorizer", "super-users"])
def test_bad_security_config_refused_at_start(tmp_path, args, words):
    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    proc = subprocess.run([str(binary), "--data-dir", str(tmp_path / "d"),
                           "-D", "bind.listeners=FLUSS://127.0.0.1:0",
                           "-D", "tablet-server.bind.listeners=FLUSS://127.0.0.1:0", *args],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0, proc.stderr[-2000:]
    assert words in proc.stderr, proc.stderr[-2000:]


def _rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.mark.skipif(not IS_OURS, reason="fluss-c's pre-authentication limits")
def test_x3_oversized_preauth_frames_cost_nothing(sasl):
    """X3: 1,000 connections announcing a 100 MiB frame before they
    authenticated are each closed unanswered, and the server's RSS does not
    grow with them (the frame is refused from its length, before a byte of
    it is buffered). Under ASan freed memory sits in quarantine, so the
    bound is checked on the release build only."""
    pid = sasl.server.proc.pid
    # warm up: one of each, so first-use allocations are not counted
    for _ in range(20):
        with sasl.raw() as c:
            c.sock.sendall(struct.pack(">iHHi", 100 << 20, 1003, 0, 1))
            sw.wait_answer_or_close(c, 2.0)
    before = _rss_kib(pid)
    closed = answered = 0
    for _ in range(1000):
        with sasl.raw() as c:
            c.sock.sendall(struct.pack(">iHHi", 100 << 20, 1003, 0, 1) + b"x" * 512)
            what, data = sw.wait_answer_or_close(c, 2.0)
            closed += what == "closed"
            answered += bool(data)
    after = _rss_kib(pid)
    asan = "asan" in str(Path(os.environ.get("FLUSSD", "")))
    print(json.dumps({"test": "X3", "attempts": 1000, "closed": closed, "answered": answered,
                      "rss_growth_kib": after - before, "asan": asan}))
    assert closed == 1000 and answered == 0
    if not asan:
        assert after - before < 1024, (before, after)
