"""Every Fluss data type survives CREATE_TABLE -> GET_TABLE_INFO.

pyfluss builds a Fluss schema from a pyarrow schema and renders the types it
reads back as strings (lower case, 'NOT NULL' suffix for non-nullable).
Mapping used by pyfluss 1.0.0 (fluss-rust from_arrow_type):

  bool->BOOLEAN  int8->TINYINT  int16->SMALLINT  int32->INT  int64->BIGINT
  float32->FLOAT  float64->DOUBLE  decimal128(p,s)->DECIMAL(p,s)
  string/large_string->STRING  binary/large_binary->BYTES
  fixed_size_binary(n)->BINARY(n)  date32/date64->DATE
  time32[s]/time32[ms]/time64[us]/time64[ns] -> TIME(0/3/6/9)
  timestamp[unit] -> TIMESTAMP(0/3/6/9); with tz -> TIMESTAMP_LTZ(0/3/6/9)
  list->ARRAY  map->MAP (key always NOT NULL)  struct->ROW

CHAR(n) has no pyarrow counterpart, so pyfluss cannot create it; it is
covered by the raw-protocol test in test_raw_protocol.py instead.
"""

import pyarrow as pa
import pytest

import fluss

# (id, pyarrow type, type string pyfluss renders for the nullable column)
TYPES = [
    ("boolean", pa.bool_(), "boolean"),
    ("tinyint", pa.int8(), "tinyint"),
    ("smallint", pa.int16(), "smallint"),
    ("int", pa.int32(), "int"),
    ("bigint", pa.int64(), "bigint"),
    ("float", pa.float32(), "float"),
    ("double", pa.float64(), "double"),
    ("decimal_10_2", pa.decimal128(10, 2), "decimal(10,2)"),
    ("decimal_38_18", pa.decimal128(38, 18), "decimal(38,18)"),
    ("decimal_1_0", pa.decimal128(1, 0), "decimal(1,0)"),
    ("string", pa.string(), "string"),
    ("binary_16", pa.binary(16), "binary(16)"),
    ("binary_1", pa.binary(1), "binary(1)"),
    ("bytes", pa.binary(), "bytes"),
    ("date", pa.date32(), "date"),
    ("time_0", pa.time32("s"), "time"),
    ("time_3", pa.time32("ms"), "time(3)"),
    ("time_6", pa.time64("us"), "time(6)"),
    ("time_9", pa.time64("ns"), "time(9)"),
    ("timestamp_0", pa.timestamp("s"), "timestamp(0)"),
    ("timestamp_3", pa.timestamp("ms"), "timestamp(3)"),
    ("timestamp_6", pa.timestamp("us"), "timestamp"),
    ("timestamp_9", pa.timestamp("ns"), "timestamp(9)"),
    ("timestamp_ltz_0", pa.timestamp("s", tz="UTC"), "timestamp_ltz(0)"),
    ("timestamp_ltz_3", pa.timestamp("ms", tz="UTC"), "timestamp_ltz(3)"),
    ("timestamp_ltz_6", pa.timestamp("us", tz="UTC"), "timestamp_ltz"),
    ("timestamp_ltz_9", pa.timestamp("ns", tz="Europe/Paris"), "timestamp_ltz(9)"),
    ("array_int", pa.list_(pa.int32()), "array<int>"),
    ("array_int_nn", pa.list_(pa.field("item", pa.int32(), nullable=False)),
     "array<int NOT NULL>"),
    ("array_array_string", pa.list_(pa.list_(pa.string())), "array<array<string>>"),
    ("map_string_bigint", pa.map_(pa.string(), pa.int64()), "map<string NOT NULL,bigint>"),
    ("map_int_array", pa.map_(pa.int32(), pa.list_(pa.float64())),
     "map<int NOT NULL,array<double>>"),
    ("row", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string(), nullable=False)]),
     "row<a: int, b: string NOT NULL>"),
    ("row_nested", pa.struct([
        pa.field("x", pa.struct([pa.field("y", pa.timestamp("ms"))])),
        pa.field("z", pa.map_(pa.string(), pa.binary(4))),
    ]), "row<x: row<y: timestamp(3)>, z: map<string NOT NULL,binary(4)>>"),
]


@pytest.mark.parametrize("arrow_type,expected", [(t, s) for _, t, s in TYPES],
                         ids=[i for i, _, _ in TYPES])
async def test_type_round_trip(admin, db, arrow_type, expected):
    schema = fluss.Schema(pa.schema([
        pa.field("k", pa.int32()),
        pa.field("c", arrow_type),
        pa.field("c_nn", arrow_type, nullable=False),
    ]))
    # what pyfluss itself renders before anything reaches the server
    assert schema.get_columns() == [("k", "int"), ("c", expected),
                                    ("c_nn", f"{expected} NOT NULL")]
    path = fluss.TablePath(db, "types")
    await admin.create_table(path, fluss.TableDescriptor(schema))
    info = await admin.get_table_info(path)
    assert info.get_schema().get_columns() == [
        ("k", "int"), ("c", expected), ("c_nn", f"{expected} NOT NULL")]
    assert info.get_schema().get_column_types() == ["int", expected, f"{expected} NOT NULL"]


async def test_all_types_in_one_table(admin, db):
    fields = [pa.field(f"c_{i}", t) for i, t, _ in TYPES]
    schema = fluss.Schema(pa.schema(fields))
    path = fluss.TablePath(db, "all_types")
    await admin.create_table(path, fluss.TableDescriptor(schema, bucket_count=2))
    info = await admin.get_table_info(path)
    assert info.get_schema().get_columns() == [(f"c_{i}", s) for i, _, s in TYPES]
    assert info.get_column_count() == len(TYPES)


async def test_pk_columns_forced_not_null(admin, db):
    schema = fluss.Schema(pa.schema([
        pa.field("a", pa.string()),            # nullable, but part of the PK
        pa.field("b", pa.int64(), nullable=False),
        pa.field("c", pa.timestamp("ms")),
        pa.field("d", pa.decimal128(5, 1), nullable=False),
    ]), primary_keys=["a", "c"])
    path = fluss.TablePath(db, "pk_nn")
    await admin.create_table(path, fluss.TableDescriptor(schema))
    info = await admin.get_table_info(path)
    assert info.get_schema().get_columns() == [
        ("a", "string NOT NULL"), ("b", "bigint NOT NULL"),
        ("c", "timestamp(3) NOT NULL"), ("d", "decimal(5,1) NOT NULL")]
    assert info.get_primary_keys() == ["a", "c"]


async def test_column_names_preserved(admin, db):
    names = ["UPPER", "lower", "Mixed_Case", "with space", "dots.in.name", "\u00fcml\u00e4ut", "x" * 100]
    schema = fluss.Schema(pa.schema([pa.field(n, pa.int32()) for n in names]))
    path = fluss.TablePath(db, "names")
    await admin.create_table(path, fluss.TableDescriptor(schema))
    info = await admin.get_table_info(path)
    assert info.get_column_names() == names
