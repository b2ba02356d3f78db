"""TLS listeners (ours: Apache Fluss 0.9.1 has none, FIP-29 is open).

Our flussd is started with `security.protocol.map=FLUSS:SSL` (or
SASL_SSL) and the `security.ssl.*` keys (server_tls.h), with certificates
made here by `openssl req/x509` in a temporary directory: a CA, a server
certificate for IP:127.0.0.1, client certificates (CN=alice, CN=bob), an
expired server certificate and certificates of another CA. The clients
are our CLI (FLUSS_CLI, `--tls-ca`, `--tls-cert/--tls-key`) and
`openssl s_client` (the X7 sweep: old protocol versions, renegotiation,
certificate reload). Each test prints one JSON line of figures.

FLUSS_SERVER=ours only (the reference has no TLS listener).
"""

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IS_OURS, REPO, OurServer, unique

pytestmark = [
    pytest.mark.skipif(not IS_OURS, reason="TLS listeners are ours (Fluss 0.9.1 has none)"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl tool"),
]


def cli_bin():
    return Path(os.environ.get("FLUSS_CLI", REPO / "build" / "fluss"))


def flussd_bin():
    return Path(os.environ.get("FLUSSD", REPO / "build" / "flussd"))


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60, **kw)


def cli(bootstrap, *args, ca=None, cert=None, key=None, user=None, password=None, stdin=None):
    e = dict(os.environ, FLUSS_BOOTSTRAP=bootstrap)
    for k in ("FLUSS_TLS_CA", "FLUSS_TLS_CERT", "FLUSS_TLS_KEY", "FLUSS_SASL_USERNAME",
              "FLUSS_SASL_PASSWORD", "FLUSS_SASL_MECHANISM"):
        e.pop(k, None)
    pre = []
    if ca:
        pre += ["--tls-ca", str(ca)]
    if cert:
        pre += ["--tls-cert", str(cert), "--tls-key", str(key)]
    if user:
        pre += ["--sasl-username", user]
        e["FLUSS_SASL_PASSWORD"] = password
    return subprocess.run([str(cli_bin()), *pre, *args], capture_output=True, text=True,
                          timeout=60, input=stdin, env=e)


# ---- certificates ----

class Pki:
    def __init__(self, d: Path):
        self.d = d
        self.serial = 100

    def ca(self, name):
        key, pem = self.d / f"{name}.key", self.d / f"{name}.pem"
        r = run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                "-out", pem, "-days", "30", "-subj", f"/CN={name}")
        assert r.returncode == 0, r.stderr
        return pem, key

    def cert(self, name, cn, ca, days=30, san="IP:127.0.0.1"):
        """-> (cert, key, serial): signed by ca (pem, key); days < 0 is expired."""
        key, csr, pem = self.d / f"{name}.key", self.d / f"{name}.csr", self.d / f"{name}.pem"
        r = run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                "-subj", f"/CN={cn}")
        assert r.returncode == 0, r.stderr
        self.serial += 1
        ext = self.d / f"{name}.ext"
        ext.write_text(f"subjectAltName={san}\n" if san else "basicConstraints=CA:FALSE\n")
        r = run("openssl", "x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1],
                "-set_serial", str(self.serial), "-out", pem, "-days", str(days),
                "-extfile", ext)
        assert r.returncode == 0, r.stderr
        return pem, key, self.serial


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    p = Pki(d)
    p.ca_ = p.ca("ca")
    p.other_ca = p.ca("other-ca")
    p.server = p.cert("server", "localhost", p.ca_)
    p.expired = p.cert("expired", "localhost", p.ca_, days=-1)
    p.foreign = p.cert("foreign", "localhost", p.other_ca)
    p.alice = p.cert("alice", "alice", p.ca_, san=None)
    p.bob = p.cert("bob", "bob", p.ca_, san=None)
    p.mallory = p.cert("mallory", "alice", p.other_ca, san=None)  # alice's CN, wrong CA
    return p


def start(tmp_path_factory, name, protocol, cert, extra=()):
    base = tmp_path_factory.mktemp(name)
    args = ["-D", f"security.protocol.map=FLUSS:{protocol}",
            "-D", f"security.ssl.keystore.certificate={cert[0]}",
            "-D", f"security.ssl.keystore.key={cert[1]}", *extra]
    srv = OurServer(flussd_bin(), base / "data", base, args, name=f"flussd-{name}")
    srv.start()
    return srv


def stop(srv):
    srv.stop()
    srv.check_sanitizers()


def s_client(bootstrap, *opts, stdin="", ca=None, wait=3):
    host, port = bootstrap.rsplit(":", 1)
    args = ["openssl", "s_client", "-connect", f"{host}:{port}", *opts]
    if ca:
        args += ["-CAfile", str(ca)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=30, input=stdin)
    return p.returncode, p.stdout + p.stderr


def handshake_ok(out: str) -> bool:
    return "Cipher is (NONE)" not in out and "Cipher is" in out


def log_text(srv) -> str:
    return Path(srv.err_path).read_text(errors="replace") + \
        Path(str(srv.err_path).replace(".stderr", ".stdout")).read_text(errors="replace")


def roundtrip(bootstrap, **kw):
    """create db + table, produce two rows, scan them back: -> number of rows read."""
    db = unique("tlsdb")
    for args in (("db", "create", db),
                 ("table", "create", f"{db}.t", "--schema", "a INT, b STRING")):
        r = cli(bootstrap, *args, **kw)
        assert r.returncode == 0, r.stderr
    r = cli(bootstrap, "produce", f"{db}.t", "--format", "csv", stdin="1,x\n2,y\n", **kw)
    assert r.returncode == 0, r.stderr
    r = cli(bootstrap, "scan", f"{db}.t", "--limit", "2", "--format", "csv", **kw)
    assert r.returncode == 0, r.stderr
    rows = [l for l in r.stdout.strip().splitlines() if l.endswith((",x", ",y"))]
    assert sorted(rows) == ["1,x", "2,y"], r.stdout
    return len(rows)


# ---- SSL, no client certificates ----

@pytest.fixture(scope="module")
def ssl_server(tmp_path_factory, pki):
    # the served files are copies, replaced by the reload test
    d = tmp_path_factory.mktemp("served")
    cert, key = d / "server.pem", d / "server.key"
    shutil.copy(pki.server[0], cert)
    shutil.copy(pki.server[1], key)
    srv = start(tmp_path_factory, "ssl", "SSL", (cert, key),
                ["-D", "security.ssl.reload.interval=1s",
                 "-D", "security.sasl.authentication.timeout=2s"])
    srv.served = (cert, key)
    yield srv
    stop(srv)


def test_cli_over_ssl(ssl_server, pki):
    rows = roundtrip(ssl_server.bootstrap, ca=pki.ca_[0])
    print(json.dumps({"test": "X7", "case": "cli-ssl", "rows": rows, "accepted": 1}))


def test_plaintext_client_refused_server_stays_up(ssl_server, pki):
    r = cli(ssl_server.bootstrap, "db", "list")
    assert r.returncode != 0
    assert "cannot connect" in r.stderr, r.stderr
    # raw plaintext bytes: closed, nothing answered in the clear
    host, port = ssl_server.bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"\x00\x00\x00\x0a" + b"\x00" * 10)
        s.settimeout(5)
        got = b""
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        except (ConnectionResetError, socket.timeout):
            pass
    assert not got.startswith(b"\x00\x00"), got  # no Fluss frame in the clear
    assert ssl_server.proc.poll() is None
    r = cli(ssl_server.bootstrap, "db", "list", ca=pki.ca_[0])
    assert r.returncode == 0, r.stderr
    print(json.dumps({"test": "X7", "case": "plaintext-on-ssl", "accepted": 0,
                      "server_up": 1}))


def test_handshake_deadline(ssl_server):
    """A connection that never finishes its handshake is closed at the
    gate's deadline (security.sasl.authentication.timeout, 2 s here)."""
    host, port = ssl_server.bootstrap.rsplit(":", 1)
    t0 = time.time()
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a ClientHello, never finished
        try:
            got = s.recv(1)
        except ConnectionResetError:
            got = b""
    waited = time.time() - t0
    assert got == b"" and 1.5 <= waited < 6, (got, waited)
    print(json.dumps({"test": "X7", "case": "handshake-deadline", "closed_after_s":
                      round(waited, 2), "accepted": 0}))


@pytest.mark.parametrize("version", ["-tls1", "-tls1_1"])
def test_old_protocols_refused(ssl_server, pki, version):
    rc, out = s_client(ssl_server.bootstrap, version, ca=pki.ca_[0])
    assert not handshake_ok(out), out
    print(json.dumps({"test": "X7", "case": f"s_client {version}", "accepted": 0}))


@pytest.mark.parametrize("version", ["-tls1_2", "-tls1_3"])
def test_current_protocols_accepted(ssl_server, pki, version):
    rc, out = s_client(ssl_server.bootstrap, version, "-verify_return_error", ca=pki.ca_[0])
    assert handshake_ok(out) and "Verify return code: 0 (ok)" in out, out
    print(json.dumps({"test": "X7", "case": f"s_client {version}", "accepted": 1}))


def test_renegotiation_refused(ssl_server, pki):
    host, port = ssl_server.bootstrap.rsplit(":", 1)
    # s_client renegotiates on a line "R" (TLS 1.2: 1.3 has no renegotiation)
    cmd = (f"(sleep 1; echo R; sleep 2) | openssl s_client -connect {host}:{port} -tls1_2 "
           f"-CAfile {pki.ca_[0]}")
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=30)
    out = out.stdout + out.stderr
    assert "RENEGOTIATING" in out, out
    assert "no renegotiation" in out.lower() or "alert" in out.lower(), out
    assert ssl_server.proc.poll() is None
    print(json.dumps({"test": "X7", "case": "renegotiation", "accepted": 0}))


def serial_seen(bootstrap, ca):
    rc, out = s_client(bootstrap, "-showcerts", ca=ca)
    assert handshake_ok(out), out
    pem = out[out.index("-----BEGIN CERTIFICATE-----"):out.index("-----END CERTIFICATE-----") + 25]
    r = subprocess.run(["openssl", "x509", "-noout", "-serial"], input=pem, capture_output=True,
                       text=True)
    return int(r.stdout.strip().split("=")[1], 16)


def test_certificate_reload(ssl_server, pki, tmp_path):
    before = serial_seen(ssl_server.bootstrap, pki.ca_[0])
    assert before == pki.server[2]
    fresh = pki.cert("server2", "localhost", pki.ca_)
    cert, key = ssl_server.served
    # replace by rename, key first (a reload between the two keeps the old pair)
    for src, dst in ((fresh[1], key), (fresh[0], cert)):
        tmp = dst.with_suffix(".new")
        shutil.copy(src, tmp)
        os.replace(tmp, dst)
    deadline = time.time() + 15
    after = before
    while time.time() < deadline and after == before:
        time.sleep(0.5)
        after = serial_seen(ssl_server.bootstrap, pki.ca_[0])
    assert after == fresh[2], (before, after)
    assert "TLS certificate reloaded" in log_text(ssl_server)
    rows = roundtrip(ssl_server.bootstrap, ca=pki.ca_[0])
    print(json.dumps({"test": "X7", "case": "reload", "serial_before": before,
                      "serial_after": after, "rows": rows, "accepted": 1}))


# ---- our client refuses servers it cannot trust ----

@pytest.mark.parametrize("which", ["expired", "foreign"])
def test_client_rejects_untrusted_server(tmp_path_factory, pki, which):
    srv = start(tmp_path_factory, f"ssl-{which}", "SSL", getattr(pki, which))
    try:
        r = cli(srv.bootstrap, "db", "list", ca=pki.ca_[0])
        assert r.returncode != 0
        assert "not trusted" in r.stderr, r.stderr
        words = "certificate has expired" if which == "expired" else "unable to get local issuer"
        assert words in r.stderr, r.stderr
    finally:
        stop(srv)
    print(json.dumps({"test": "X7", "case": f"server-cert-{which}", "accepted": 0}))


def test_client_checks_the_address(tmp_path_factory, pki):
    # a certificate for another address (SAN IP:10.9.8.7) from the right CA
    other = pki.cert("elsewhere", "elsewhere", pki.ca_, san="IP:10.9.8.7")
    srv = start(tmp_path_factory, "ssl-elsewhere", "SSL", other)
    try:
        r = cli(srv.bootstrap, "db", "list", ca=pki.ca_[0])
        assert r.returncode != 0 and "not trusted" in r.stderr, r.stderr
    finally:
        stop(srv)
    print(json.dumps({"test": "X7", "case": "server-cert-wrong-ip", "accepted": 0}))


# ---- client certificates required: the principal is the CN ----

@pytest.fixture(scope="module")
def mtls_server(tmp_path_factory, pki):
    srv = start(tmp_path_factory, "mtls", "SSL", pki.server,
                ["-D", f"security.ssl.truststore.certificates={pki.ca_[0]}",
                 "-D", "security.ssl.client.auth=required",
                 "-D", "authorizer.enabled=true", "-D", "super.users=User:alice"])
    yield srv
    stop(srv)


def test_client_auth_required(mtls_server, pki):
    b = mtls_server.bootstrap
    none = cli(b, "db", "list", ca=pki.ca_[0])
    assert none.returncode != 0, none.stdout
    wrong = cli(b, "db", "list", ca=pki.ca_[0], cert=pki.mallory[0], key=pki.mallory[1])
    assert wrong.returncode != 0, wrong.stdout
    rc, out = s_client(b, ca=pki.ca_[0], stdin="")
    # TLS 1.3: the refusal comes after the client's finished; no data flows
    assert mtls_server.proc.poll() is None
    # alice (super user by her CN) creates; bob (no ACL) is refused by the authorizer
    rows = roundtrip(b, ca=pki.ca_[0], cert=pki.alice[0], key=pki.alice[1])
    db = unique("bobdb")
    r = cli(b, "db", "create", db, ca=pki.ca_[0], cert=pki.bob[0], key=pki.bob[1])
    assert r.returncode != 0
    assert "User:bob" in r.stderr or "FlussPrincipal{name='bob'" in r.stderr, r.stderr
    r = cli(b, "acl", "add", "--principal", "User:bob", "--operation", "ALL", "--resource",
            "cluster", ca=pki.ca_[0], cert=pki.alice[0], key=pki.alice[1])
    assert r.returncode == 0, r.stderr
    r = cli(b, "db", "create", db, ca=pki.ca_[0], cert=pki.bob[0], key=pki.bob[1])
    assert r.returncode == 0, r.stderr
    print(json.dumps({"test": "X7", "case": "client-auth", "no_cert_accepted": 0,
                      "wrong_ca_accepted": 0, "alice_rows": rows, "bob_after_acl": 1,
                      "accepted": 0}))


# ---- SASL_SSL: TLS, then SASL/PLAIN ----

def test_cli_over_sasl_ssl(tmp_path_factory, pki):
    jaas = ('org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required '
            'user_admin="admin-pass";')
    srv = start(tmp_path_factory, "sasl-ssl", "SASL_SSL", pki.server,
                ["-D", "security.sasl.enabled.mechanisms=PLAIN",
                 "-D", f"security.sasl.plain.jaas.config={jaas}"])
    try:
        rows = roundtrip(srv.bootstrap, ca=pki.ca_[0], user="admin", password="admin-pass")
        bad = cli(srv.bootstrap, "db", "list", ca=pki.ca_[0], user="admin", password="nope")
        assert bad.returncode != 0
        notls = cli(srv.bootstrap, "db", "list", user="admin", password="admin-pass")
        assert notls.returncode != 0
        nosasl = cli(srv.bootstrap, "db", "list", ca=pki.ca_[0])
        assert nosasl.returncode != 0
        assert srv.proc.poll() is None
    finally:
        stop(srv)
    print(json.dumps({"test": "X7", "case": "cli-sasl-ssl", "rows": rows,
                      "bad_password_accepted": 0, "plaintext_accepted": 0,
                      "no_sasl_accepted": 0, "accepted": 1}))
