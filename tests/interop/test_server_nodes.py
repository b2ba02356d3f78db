"""get_server_nodes: coordinator and tablet servers as advertised in metadata."""

from conftest import IS_OURS


async def test_server_nodes(admin, server):
    nodes = await admin.get_server_nodes()
    coords = [n for n in nodes if n.server_type == "CoordinatorServer"]
    tablets = [n for n in nodes if n.server_type == "TabletServer"]
    assert len(coords) == 1, nodes
    assert len(tablets) >= 1, nodes
    assert len(coords) + len(tablets) == len(nodes), nodes

    c = coords[0]
    assert (c.host, c.port) == (server.host, server.coordinator_port)
    assert c.uid == f"cs-{c.id}"
    for t in tablets:
        assert t.uid == f"ts-{t.id}"
        assert t.host and 0 < t.port < 65536
    assert len({t.id for t in tablets}) == len(tablets)

    if IS_OURS:
        assert c.id == 0
        count = getattr(server, "tablets", 1)  # a cluster: tablet server i on tablet_port + i
        assert sorted((t.id, t.host, t.port) for t in tablets) == [
            (i, server.host, server.tablet_port + i) for i in range(count)]
