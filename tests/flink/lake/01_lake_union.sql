-- Union read through the official connector (fluss-flink-1.20 with the
-- fluss-lake-iceberg 0.9.1 plugin and Iceberg's Hadoop catalog) of a table
-- flussd tiers into Iceberg itself: t$lake reads the Iceberg table alone,
-- a batch SELECT reads the lake snapshot and the log after it, a streaming
-- read starts in the lake and continues in the log. Run by
-- tests/flink/lake-suite against a flussd with datalake.format: iceberg.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE logs (id INT, name STRING, amount DECIMAL(10, 2)) WITH (
  'bucket.num' = '2',
  'table.datalake.enabled' = 'true',
  'table.datalake.freshness' = '1s'
);

INSERT INTO logs VALUES (1, 'a', 1.50), (2, 'b', 2.25), (3, 'c', CAST(NULL AS DECIMAL(10, 2))), (4, 'd', 4.00);

-- the lake alone, once a round has tiered the rows (Iceberg's reader)
--! mode batch
--! retry 60
SELECT id, name, amount FROM logs$lake;
--> +I[1, a, 1.50]
--> +I[2, b, 2.25]
--> +I[3, c, null]
--> +I[4, d, 4.00]

-- later rows stay in the log: the next round is an hour away
ALTER TABLE logs SET ('table.datalake.freshness' = '1h');
INSERT INTO logs VALUES (5, 'e', 5.55), (6, 'f', -6.00);

--! mode batch
SELECT id, name, amount FROM logs$lake;
--> +I[1, a, 1.50]
--> +I[2, b, 2.25]
--> +I[3, c, null]
--> +I[4, d, 4.00]

-- batch union read: the lake snapshot, then the log after its offsets
--! mode batch
SELECT id, name, amount FROM logs;
--> +I[1, a, 1.50]
--> +I[2, b, 2.25]
--> +I[3, c, null]
--> +I[4, d, 4.00]
--> +I[5, e, 5.55]
--> +I[6, f, -6.00]

--! mode batch
SELECT COUNT(*), SUM(id) FROM logs;
--> +I[6, 21]

-- streaming union read (startup mode full): the lake, the log after it,
-- then what is written while the job runs
--! mode streaming
--! during INSERT INTO logs VALUES (7, 'g', 7.77)
SELECT id, name, amount FROM logs;
--> +I[1, a, 1.50]
--> +I[2, b, 2.25]
--> +I[3, c, null]
--> +I[4, d, 4.00]
--> +I[5, e, 5.55]
--> +I[6, f, -6.00]
--> +I[7, g, 7.77]

-- Decimals past 18 digits (FIXED_LEN_BYTE_ARRAY in the Parquet files) in
-- SNAPPY pages: Iceberg's Java reader reads what flussd wrote.
CREATE TABLE wide (id INT, big DECIMAL(38, 4), mid DECIMAL(20, 0)) WITH (
  'bucket.num' = '1',
  'table.datalake.enabled' = 'true',
  'table.datalake.freshness' = '1s',
  'iceberg.write.parquet.compression-codec' = 'snappy'
);
INSERT INTO wide VALUES
  (1, CAST('12345678901234567890123456789012.3456' AS DECIMAL(38, 4)), CAST('98765432109876543210' AS DECIMAL(20, 0))),
  (2, CAST('-9999999999999999999999999999999999.9999' AS DECIMAL(38, 4)), CAST('-12345678901234567890' AS DECIMAL(20, 0))),
  (3, CAST(NULL AS DECIMAL(38, 4)), CAST('0' AS DECIMAL(20, 0)));

--! mode batch
--! retry 60
SELECT id, big, mid FROM wide$lake;
--> +I[1, 12345678901234567890123456789012.3456, 98765432109876543210]
--> +I[2, -9999999999999999999999999999999999.9999, -12345678901234567890]
--> +I[3, null, 0]

-- After the log expired: rows 1..3 are in the lake only (uncompressed 5 KB
-- rows, one 4 KB segment each: past table.log.ttl and below the lake
-- offset, retention deletes them), row 4 in the log; the log alone has
-- lost them, the union has all four.
CREATE TABLE expiring (id INT, pad STRING) WITH (
  'bucket.num' = '1',
  'table.datalake.enabled' = 'true',
  'table.datalake.freshness' = '1s',
  'table.log.ttl' = '1 s',
  'table.log.arrow.compression.type' = 'NONE'
);
INSERT INTO expiring VALUES (1, REPEAT('x', 5000));
INSERT INTO expiring VALUES (2, REPEAT('x', 5000));
INSERT INTO expiring VALUES (3, REPEAT('x', 5000));

--! mode batch
--! retry 60
SELECT id FROM expiring$lake;
--> +I[1]
--> +I[2]
--> +I[3]

--! sleep 2000
INSERT INTO expiring VALUES (4, REPEAT('x', 5000));

-- the log alone (from its earliest offset): only what retention left
--! mode streaming
--! retry 60
SELECT id FROM expiring /*+ OPTIONS('scan.startup.mode' = 'earliest') */;
--> +I[4]

--! mode batch
SELECT id, CHAR_LENGTH(pad) FROM expiring;
--> +I[1, 5000]
--> +I[2, 5000]
--> +I[3, 5000]
--> +I[4, 5000]

