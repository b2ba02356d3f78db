"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802/7677; fluss-c's own — Fluss
has no SCRAM) against our server: users added with `fluss user add` by a
super user over SASL/PLAIN, then authenticating with libfluss (the CLI)
and with a SCRAM client written here over the raw wire (hashlib/hmac, no
code of the server's), so each message can be tampered with.

What it shows (reliability.md X2, X6):
  * a SCRAM user works through the CLI and is kept across a restart
    (salted keys in the metadata store, never the password);
  * wrong password and unknown user fail with the same words, after the
    failure delay; a deleted user fails;
  * a tampered nonce, proof, channel-binding attribute, or a replayed
    client-final is refused; fewer than 4096 iterations are refused when
    a user is added;
  * `fluss user list` shows names, mechanisms and iterations only, and no
    password appears in the server's output.
"""

import base64
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

import saslwire as sw
from conftest import IS_OURS, REPO, OurServer, unique
from rawwire import RESPONSE_SUCCESS, RawConnection, decode

pytestmark = pytest.mark.skipif(not IS_OURS or os.environ.get("FLUSS_SERVER") == "cluster",
                                reason="SCRAM is fluss-c's own; local mode")

JAAS = ('org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required '
        'user_root="root-pw";')
ARGS = ["-D", "security.protocol.map=FLUSS:SASL",
        "-D", "security.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "-D", f"security.sasl.plain.jaas.config={JAAS}",
        "-D", "authorizer.enabled=true", "-D", "super.users=User:root",
        "-D", "security.sasl.failure.delay=150ms"]
HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
BAD = "Authentication failed: Invalid username or password"


def cli_bin():
    return Path(os.environ.get("FLUSS_CLI", REPO / "build" / "fluss"))


def cli(bootstrap, *args, user="root", password="root-pw", mechanism=None, stdin=None, env=None):
    e = dict(os.environ, FLUSS_BOOTSTRAP=bootstrap, FLUSS_SASL_USERNAME=user,
             FLUSS_SASL_PASSWORD=password)
    e.pop("FLUSS_SASL_MECHANISM", None)
    if mechanism:
        e["FLUSS_SASL_MECHANISM"] = mechanism
    if env:
        e.update(env)
    return subprocess.run([str(cli_bin()), *args], capture_output=True, text=True, timeout=60,
                          input=stdin, env=e)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("scram")
    binary = Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))
    srv = OurServer(binary, base / "data", base, ARGS, name="flussd-scram")
    srv.start()
    yield srv
    srv.stop()
    srv.check_sanitizers()


# ---- a SCRAM client of our own, for the raw tests ----

class Scram:
    def __init__(self, mechanism, user, password, nonce=None):
        self.mech, self.h = mechanism, HASHES[mechanism]
        self.user, self.password = user, password
        self.cnonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self.bare = f"n={user.replace('=', '=3D').replace(',', '=2C')},r={self.cnonce}"

    def first(self) -> bytes:
        return ("n,," + self.bare).encode()

    def final(self, server_first: bytes, tamper=None) -> bytes:
        attrs = dict(a.split("=", 1) for a in server_first.decode().split(","))
        salt, it, nonce = base64.b64decode(attrs["s"]), int(attrs["i"]), attrs["r"]
        assert nonce.startswith(self.cnonce)
        salted = hashlib.pbkdf2_hmac(self.h().name, self.password.encode(), salt, it)
        ckey = hmac.new(salted, b"Client Key", self.h).digest()
        stored = self.h(ckey).digest()
        c = "biws"
        if tamper == "nonce":
            nonce = nonce[:-1] + ("A" if nonce[-1] != "A" else "B")
        if tamper == "cbind":
            c = base64.b64encode(b"y,,").decode()
        without = f"c={c},r={nonce}"
        auth = f"{self.bare},{server_first.decode()},{without}".encode()
        sig = hmac.new(stored, auth, self.h).digest()
        proof = bytes(a ^ b for a, b in zip(ckey, sig))
        if tamper == "proof":
            proof = bytes([proof[0] ^ 1]) + proof[1:]
        skey = hmac.new(salted, b"Server Key", self.h).digest()
        self.expect_v = base64.b64encode(hmac.new(skey, auth, self.h).digest()).decode()
        return f"{without},p={base64.b64encode(proof).decode()}".encode()


def challenge(body: bytes) -> bytes:
    fields = decode(body)
    return fields[1][0] if 1 in fields else b""


def exchange(conn, s: Scram, tamper=None):
    """-> (ok, answer-or-error-message, client_final)."""
    rtype, body = sw.authenticate(conn, s.mech, s.first())
    if rtype != RESPONSE_SUCCESS:
        return False, sw.expect_error(rtype, body)[1], None
    final = s.final(challenge(body), tamper)
    rtype, body = sw.authenticate(conn, s.mech, final)
    if rtype != RESPONSE_SUCCESS:
        return False, sw.expect_error(rtype, body)[1], final
    return True, challenge(body).decode(), final


def raw(server):
    host, port = server.bootstrap.rsplit(":", 1)
    return RawConnection(host, int(port))


# ---- the tests ----

@pytest.mark.parametrize("mech", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_cli_user_authenticates(server, mech):
    user = unique("alice")
    r = cli(server.bootstrap, "user", "add", user, "--mechanism", mech, "--iterations", "4096",
            env={"FLUSS_NEW_PASSWORD": "alice-pw"})
    assert r.returncode == 0, r.stderr
    r = cli(server.bootstrap, "acl", "add", "--principal", f"User:{user}", "--operation", "ALL",
            "--resource", "cluster")
    assert r.returncode == 0, r.stderr
    db = unique("scramdb")
    r = cli(server.bootstrap, "db", "create", db, user=user, password="alice-pw", mechanism=mech)
    assert r.returncode == 0, r.stderr
    r = cli(server.bootstrap, "table", "create", f"{db}.t", "--schema", "a INT, b STRING",
            user=user, password="alice-pw", mechanism=mech)
    assert r.returncode == 0, r.stderr
    r = cli(server.bootstrap, "produce", f"{db}.t", "--format", "csv", stdin="1,x\n2,y\n",
            user=user, password="alice-pw", mechanism=mech)
    assert r.returncode == 0, r.stderr
    r = cli(server.bootstrap, "scan", f"{db}.t", "--limit", "2", "--format", "csv",
            user=user, password="alice-pw", mechanism=mech)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.strip().splitlines()[-2:]) == ["0,0,1,x", "0,1,2,y"] or \
        sorted(l.split(",")[-2:] for l in r.stdout.strip().splitlines()[-2:]) == [["1", "x"], ["2", "y"]]
    # wrong password, unknown user: the same words
    wrong = cli(server.bootstrap, "db", "list", user=user, password="nope", mechanism=mech)
    unknown = cli(server.bootstrap, "db", "list", user=unique("nobody"), password="nope",
                  mechanism=mech)
    assert wrong.returncode != 0 and unknown.returncode != 0
    assert BAD in wrong.stderr and BAD in unknown.stderr, (wrong.stderr, unknown.stderr)
    # the user's other mechanism is not set
    other = "SCRAM-SHA-512" if mech == "SCRAM-SHA-256" else "SCRAM-SHA-256"
    r = cli(server.bootstrap, "db", "list", user=user, password="alice-pw", mechanism=other)
    assert r.returncode != 0 and BAD in r.stderr
    r = cli(server.bootstrap, "user", "list")
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stdout.splitlines() if l.startswith(user + " ")]
    assert len(line) == 1 and mech in line[0] and "4096" in line[0], r.stdout
    r = cli(server.bootstrap, "user", "delete", user, "--mechanism", mech)
    assert r.returncode == 0, r.stderr
    r = cli(server.bootstrap, "db", "list", user=user, password="alice-pw", mechanism=mech)
    assert r.returncode != 0 and BAD in r.stderr


def test_user_admin_refusals(server):
    r = cli(server.bootstrap, "user", "add", unique("low"), "--iterations", "1000",
            env={"FLUSS_NEW_PASSWORD": "pw"})
    assert r.returncode != 0 and "4096" in r.stderr, r.stderr
    r = cli(server.bootstrap, "user", "add", "a/b", env={"FLUSS_NEW_PASSWORD": "pw"})
    assert r.returncode != 0 and "'/'" in r.stderr, r.stderr
    r = cli(server.bootstrap, "user", "add", unique("m"), "--mechanism", "SCRAM-SHA-1",
            env={"FLUSS_NEW_PASSWORD": "pw"})
    assert r.returncode != 0 and "Unknown SCRAM mechanism" in r.stderr, r.stderr
    # a user who is not allowed to ALTER the cluster
    boss = unique("boss")
    assert cli(server.bootstrap, "user", "add", boss, env={"FLUSS_NEW_PASSWORD": "pw"}).returncode == 0
    r = cli(server.bootstrap, "user", "add", unique("x"), user=boss, password="pw",
            mechanism="SCRAM-SHA-256", env={"FLUSS_NEW_PASSWORD": "pw"})
    assert r.returncode != 0 and "ALTER on resource Resource{type=CLUSTER" in r.stderr, r.stderr


@pytest.fixture(scope="module")
def bob(server):
    for mech in HASHES:
        r = cli(server.bootstrap, "user", "add", "bob", "--mechanism", mech,
                env={"FLUSS_NEW_PASSWORD": "bob-pw"})
        assert r.returncode == 0, r.stderr
    return "bob"


@pytest.mark.parametrize("mech", list(HASHES))
def test_raw_exchange_and_server_signature(server, bob, mech):
    with raw(server) as c:
        c.api_versions()
        s = Scram(mech, bob, "bob-pw")
        ok, answer, _ = exchange(c, s)
        assert ok, answer
        assert answer == "v=" + s.expect_v
        assert c.call(sw.LIST_DATABASES, b"")[0] == RESPONSE_SUCCESS


@pytest.mark.parametrize("tamper,words", [
    ("proof", BAD),
    ("nonce", "nonce"),
    ("cbind", "Invalid SCRAM client final message"),
])
def test_tampered_final_refused(server, bob, tamper, words):
    with raw(server) as c:
        c.api_versions()
        t0 = time.monotonic()
        ok, answer, _ = exchange(c, Scram("SCRAM-SHA-256", bob, "bob-pw"), tamper)
        assert not ok and words in answer, answer
        assert time.monotonic() - t0 >= 0.12  # the failure delay
        rtype, body = c.call(sw.LIST_DATABASES, b"")
        assert sw.expect_error(rtype, body)[0] == sw.AUTHENTICATE_EXCEPTION


def test_replayed_final_refused(server, bob):
    """A client-final seen on the wire does not authenticate another
    connection: its nonce is not that connection's."""
    with raw(server) as c:
        c.api_versions()
        ok, _, final = exchange(c, Scram("SCRAM-SHA-256", bob, "bob-pw"))
        assert ok
    with raw(server) as c:
        c.api_versions()
        s = Scram("SCRAM-SHA-256", bob, "bob-pw")
        rtype, body = sw.authenticate(c, s.mech, s.first())
        assert rtype == RESPONSE_SUCCESS
        rtype, body = sw.authenticate(c, s.mech, final)
        code, message = sw.expect_error(rtype, body)
        assert code == sw.AUTHENTICATE_EXCEPTION and "nonce" in message, message


@pytest.mark.parametrize("first", [
    b"", b"n,,", b"y,,n=bob,r=abc", b"p=tls,,n=bob,r=abc", b"n,,n=bob", b"n,,r=abc,n=bob",
    b"n,,n=b=ZZob,r=abc", b"n,,m=ext,n=bob,r=abc", b"n,,n=bob,r=abc,x=1",
    b"n,,n=" + b"u" * 5000 + b",r=abc",
])
def test_malformed_first_refused(server, first):
    with raw(server) as c:
        c.api_versions()
        rtype, body = sw.authenticate(c, "SCRAM-SHA-256", first)
        code, message = sw.expect_error(rtype, body)
        assert code == sw.AUTHENTICATE_EXCEPTION, (code, message)
        assert "Invalid SCRAM client first message" in message or message == BAD, message


def test_x2_wrong_credentials_scram(server, bob):
    """X2 for SCRAM: many wrong attempts, none succeeds; unknown user and
    wrong password answer the same bytes; no secret in the server's log."""
    attempts, successes, answers = 20, 0, set()
    for i in range(attempts):
        user = bob if i % 2 else unique("ghost")
        with raw(server) as c:
            c.api_versions()
            ok, answer, _ = exchange(c, Scram("SCRAM-SHA-256", user, "wrong-" + str(i)))
            successes += ok
            answers.add(answer)
    log = server.stderr_tail() if hasattr(server, "stderr_tail") else ""
    hits = sum(log.count(s) for s in ("bob-pw", "alice-pw", "root-pw"))
    print(json.dumps({"test": "X2", "mechanism": "SCRAM-SHA-256", "attempts": attempts,
                      "successes": successes, "distinct_answers": len(answers),
                      "secret_hits_in_logs": hits}))
    assert successes == 0 and answers == {BAD} and hits == 0


def test_users_survive_restart(server, bob):
    server.restart()
    with raw(server) as c:
        c.api_versions()
        ok, answer, _ = exchange(c, Scram("SCRAM-SHA-512", bob, "bob-pw"))
        assert ok, answer
