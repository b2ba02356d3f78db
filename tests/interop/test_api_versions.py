"""API_VERSIONS, key by key and version by version, against what
KNOWN_DIFFERENCES.md §4 says each server lists.

The file holds four tables (each after a `<!-- table: NAME -->` line):
api-reference (the keys the 0.9.1 reference lists per role), api-versions
(ranges other than 0..0, reference and fluss-c), api-missing (keys fluss-c
does not offer yet, with the issue that brings each) and api-extra (keys
fluss-c offers beyond the reference). Against the reference its answer must
be api-reference exactly; against fluss-c, api-reference minus api-missing
plus api-extra. Any other difference fails, so a new API on either side
needs its row (or the removal of one) in the same commit.
"""

import re
from pathlib import Path

import pytest

import rawwire
from conftest import IS_REFERENCE, connect
from logutil import tablet_address

KNOWN_DIFFERENCES = Path(__file__).with_name("KNOWN_DIFFERENCES.md")
ROLES = {"coordinator": 1, "tablet": 2}


def md_table(text: str, name: str) -> list:
    """The body rows (lists of stripped cells) of the table after
    `<!-- table: name -->`; a table with a header only gives []."""
    marker = f"<!-- table: {name} -->"
    assert text.count(marker) == 1, f"{KNOWN_DIFFERENCES.name}: one '{marker}' expected"
    lines = text[text.index(marker) + len(marker):].lstrip("\n").splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    assert len(rows) >= 2 and set("".join(rows[1])) <= set("-: "), \
        f"table {name}: a header and a separator line expected"
    return rows[2:]


def key_ranges(spec: str) -> set:
    """'1000-1003, 1010' -> {1000, 1001, 1002, 1003, 1010}."""
    keys = set()
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        assert m, f"not a key or a range: {part!r}"
        lo, hi = int(m[1]), int(m[2] or m[1])
        assert lo <= hi, part
        keys |= set(range(lo, hi + 1))
    return keys


def versions(spec: str) -> tuple:
    m = re.fullmatch(r"(\d+)\.\.(\d+)", spec)
    assert m, f"not a version range: {spec!r}"
    return int(m[1]), int(m[2])


def expected_lists():
    """-> ({role: {key: (min, max)}} of the reference, the same of fluss-c,
    {(role, key): name} of every key a table names)."""
    text = KNOWN_DIFFERENCES.read_text()
    names = {}

    def named(role, key, name):
        assert role in ROLES, f"unknown role {role!r}"
        assert names.setdefault((role, key), name) == name, (role, key, name)
        return key

    reference, ours = {}, {}
    for role, server_type, spec in md_table(text, "api-reference"):
        assert ROLES.get(role) == int(server_type), (role, server_type)
        reference[role] = {k: (0, 0) for k in key_ranges(spec)}
    assert set(reference) == set(ROLES)
    ours = {role: dict(apis) for role, apis in reference.items()}
    for role, key, name, ref_v, our_v, _why in md_table(text, "api-versions"):
        k = named(role, int(key), name)
        assert k in reference[role], f"api-versions names {role} {k}, not in api-reference"
        reference[role][k] = versions(ref_v)
        ours[role][k] = versions(our_v)
    for role, key, name, brings in md_table(text, "api-missing"):
        k = named(role, int(key), name)
        assert k in reference[role], f"api-missing names {role} {k}, not in api-reference"
        assert brings, f"api-missing {role} {k}: which issue brings it?"
        del ours[role][k]
    for role, key, name, v, why in md_table(text, "api-extra"):
        k = named(role, int(key), name)
        assert k not in reference[role], f"api-extra names {role} {k}, which the reference has"
        assert why, f"api-extra {role} {k}: why?"
        ours[role][k] = versions(v)
    return reference, ours, names


def compare(role, got: dict, want: dict, names: dict) -> list:
    """The differences of got against want, one line each."""
    out = []
    for k in sorted(set(got) | set(want)):
        what = f"{role} {k} {names.get((role, k), '')}".rstrip()
        if k not in want:
            out.append(f"{what}: listed {got[k]}, KNOWN_DIFFERENCES §4 says not listed")
        elif k not in got:
            out.append(f"{what}: not listed, KNOWN_DIFFERENCES §4 says {want[k]}")
        elif got[k] != want[k]:
            out.append(f"{what}: versions {got[k]}, KNOWN_DIFFERENCES §4 says {want[k]}")
    return out


def test_tables_parse():
    """The tables themselves (no server): the counts the issue gives."""
    reference, ours, _ = expected_lists()
    assert (len(reference["coordinator"]), len(reference["tablet"])) == (45, 32)
    assert len(reference["coordinator"]) - len(ours["coordinator"]) <= 18
    assert all(max(k) < 1060 for k in reference.values())


async def address(server, role):
    if role == "coordinator":
        return server.host, server.coordinator_port
    if getattr(server, "tablet_port", None):
        return server.host, server.tablet_port
    conn = await connect(server.bootstrap)
    try:
        return await tablet_address(conn.get_admin())
    finally:
        await conn.close()


@pytest.mark.parametrize("role", sorted(ROLES))
async def test_api_versions_match_known_differences(server, role):
    reference, ours, names = expected_lists()
    want = (reference if IS_REFERENCE else ours)[role]
    with rawwire.RawConnection(*await address(server, role)) as c:
        server_type, got = c.api_versions()
    assert server_type == ROLES[role]
    diff = compare(role, got, want, names)
    assert not diff, "API_VERSIONS differs from KNOWN_DIFFERENCES §4:\n" + "\n".join(diff)


@pytest.mark.parametrize("role", sorted(ROLES))
async def test_api_versions_v1_request(server, role):
    """API_VERSIONS sent as v1: the reference serves it as v0 (§2); fluss-c
    lists 0..0 and refuses it with 2 like any version out of range (§3)."""
    body = rawwire.f_bytes(1, "fluss-c-interop") + rawwire.f_bytes(2, "0")
    with rawwire.RawConnection(*await address(server, role)) as c:
        rtype, resp = c.call(rawwire.API_VERSIONS, body, api_version=1)
    if IS_REFERENCE:
        assert rtype == rawwire.RESPONSE_SUCCESS
        assert rawwire.as_int32(rawwire.decode(resp)[2][0]) == ROLES[role]
    else:
        assert rtype == rawwire.RESPONSE_ERROR
        assert rawwire.decode_error(resp)[0] == 2
