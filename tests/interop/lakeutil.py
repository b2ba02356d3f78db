"""What the lake tests share: a flussd with a lake, and a database on it."""

import contextlib
from pathlib import Path

from conftest import connect, unique


def lake_args(warehouse: Path):
    """flussd's arguments for a lake at warehouse (Iceberg, Hadoop layout)."""
    return ["-D", "datalake.format=iceberg", "-D", "datalake.iceberg.type=hadoop",
            "-D", f"datalake.iceberg.warehouse={warehouse}"]


@contextlib.asynccontextmanager
async def lake_session(start_server, tmp_path, db_prefix, *args):
    """A flussd with a lake under tmp_path/warehouse (more flussd args in
    args), a pyfluss connection and a new database: yields (server,
    connection, admin, database, warehouse); the connection is closed
    after (state["conn"] if the caller keeps a reconnected one there)."""
    wh = tmp_path / "warehouse"
    srv = start_server(*lake_args(wh), *args)
    conn = await connect(srv.bootstrap)
    admin = conn.get_admin()
    db = unique(db_prefix)
    await admin.create_database(db, ignore_if_exists=False)
    state = {"conn": conn}
    try:
        yield srv, state, admin, db, wh
    finally:
        await state["conn"].close()


def duckdb_scan(table_dir, columns="*"):
    """duckdb's iceberg_scan of the Iceberg table at table_dir (its
    iceberg and avro extensions from PyPI's duckdb-ext-* wheels, loaded
    offline), as a pyarrow Table."""
    import sysconfig

    import duckdb
    ext = f"{sysconfig.get_paths()['purelib']}/duckdb_ext/extensions"
    con = duckdb.connect(config={"extension_directory": ext,
                                 "autoinstall_known_extensions": False})
    con.sql("LOAD avro")
    con.sql("LOAD iceberg")
    return con.sql(f"SELECT {columns} FROM iceberg_scan('{table_dir}')").fetch_arrow_table()
