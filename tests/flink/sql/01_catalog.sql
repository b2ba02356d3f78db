-- The Fluss catalog: databases, tables with every type Flink maps to Fluss,
-- SHOW / DESCRIBE / DROP.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE all_types (
  c_bool BOOLEAN,
  c_tiny TINYINT,
  c_small SMALLINT,
  c_int INT,
  c_big BIGINT,
  c_float FLOAT,
  c_double DOUBLE,
  c_dec DECIMAL(10, 2),
  c_bigdec DECIMAL(30, 5),
  c_char CHAR(3),
  c_str STRING,
  c_bin BINARY(4),
  c_bytes BYTES,
  c_date DATE,
  c_time TIME,
  c_ts TIMESTAMP(3),
  c_ts6 TIMESTAMP(6),
  c_ltz TIMESTAMP_LTZ(3),
  c_arr ARRAY<INT>,
  c_map MAP<STRING, INT>,
  c_row ROW<x INT, y STRING>
) WITH ('bucket.num' = '2');

CREATE TABLE t2 (id INT, name STRING) WITH ('bucket.num' = '1');

SHOW TABLES;
--> +I[all_types]
--> +I[t2]

DESCRIBE t2;
--> +I[id, INT, true, null, null, null]
--> +I[name, STRING, true, null, null, null]

INSERT INTO all_types VALUES (
  TRUE, CAST(1 AS TINYINT), CAST(2 AS SMALLINT), 3, 4, CAST(5.5 AS FLOAT), 6.25,
  CAST(7.89 AS DECIMAL(10, 2)), CAST('12345678901234567890.12345' AS DECIMAL(30, 5)),
  'abc', 'hello', X'01020304', X'0506', DATE '2024-01-02', TIME '03:04:05',
  TIMESTAMP '2024-01-02 03:04:05.678', TIMESTAMP '2024-01-02 03:04:05.123456',
  TO_TIMESTAMP_LTZ(1700000000123, 3),
  ARRAY[1, 2, 3], MAP['k', 1], ROW(7, 'seven'));
--! error does not support partial updates
INSERT INTO all_types (c_int, c_str) VALUES (42, CAST(NULL AS STRING));
INSERT INTO all_types VALUES (
  CAST(NULL AS BOOLEAN), CAST(NULL AS TINYINT), CAST(NULL AS SMALLINT), 42, CAST(NULL AS BIGINT),
  CAST(NULL AS FLOAT), CAST(NULL AS DOUBLE), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS DECIMAL(30, 5)),
  CAST(NULL AS CHAR(3)), CAST(NULL AS STRING), CAST(NULL AS BINARY(4)), CAST(NULL AS BYTES),
  CAST(NULL AS DATE), CAST(NULL AS TIME), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS TIMESTAMP(6)),
  CAST(NULL AS TIMESTAMP_LTZ(3)), CAST(NULL AS ARRAY<INT>), CAST(NULL AS MAP<STRING, INT>),
  CAST(NULL AS ROW<x INT, y STRING>));

SELECT c_bool, c_tiny, c_small, c_int, c_big, c_float, c_double, c_dec, c_bigdec, c_char,
       c_str, c_bin, c_bytes, c_date, c_time, c_ts, c_ts6, c_arr, c_map, c_row
FROM all_types;
--> +I[true, 1, 2, 3, 4, 5.5, 6.25, 7.89, 12345678901234567890.12345, abc, hello, [1, 2, 3, 4], [5, 6], 2024-01-02, 03:04:05, 2024-01-02T03:04:05.678, 2024-01-02T03:04:05.123456, [1, 2, 3], {k=1}, +I[7, seven]]
--> +I[null, null, null, 42, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null]

SELECT c_ltz FROM all_types WHERE c_int = 3;
--> +I[2023-11-14T22:13:20.123Z]

DROP TABLE t2;
SHOW TABLES;
--> +I[all_types]

DROP TABLE all_types;
SHOW TABLES;

USE fluss;
DROP DATABASE ${db};
