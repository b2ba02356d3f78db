-- Log tables: INSERT VALUES and INSERT SELECT, streaming reads with
-- projection pushdown (checked on the server's written bytes), LIMIT,
-- COUNT(*), and the scan startup modes.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE events (id INT, name STRING, payload STRING) WITH ('bucket.num' = '3');

INSERT INTO events VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z');

SELECT id, name FROM events;
--> +I[1, a]
--> +I[2, b]
--> +I[3, c]

-- 3000 rows of 2 KB payload each from a bounded datagen source.
CREATE TEMPORARY TABLE gen (
  id INT, name STRING, payload STRING
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '3000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1001', 'fields.id.end' = '4000',
  'fields.name.length' = '4',
  'fields.payload.length' = '2000'
);
INSERT INTO events SELECT id, name, payload FROM gen;

-- Projection pushdown: reading only id moves a few KB; reading payload
-- moves its 6 MB (about 3 MB as the table's compressed Arrow batches).
--! final
--! server-bytes-below 200000
SELECT COUNT(*), SUM(CAST(id AS BIGINT)), MIN(id), MAX(id) FROM events;
--> +I[3003, 7501506, 1, 4000]

--! final
--! server-bytes-above 2000000
SELECT COUNT(*), SUM(CHAR_LENGTH(payload)) FROM events;
--> +I[3003, 6000003]

-- Batch mode: LIMIT (LIMIT_SCAN is for PK tables; log tables read the log)
-- and COUNT(*) from the table statistics.
--! mode batch
SELECT COUNT(*) FROM events;
--> +I[3003]

--! error only support queries on table with datalake enabled or point queries
SELECT id, name FROM events WHERE id <= 3 LIMIT 10;

CREATE TABLE one_bucket (id INT, v STRING) WITH ('bucket.num' = '1');
INSERT INTO one_bucket VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e');
-- A log table's LIMIT reads the newest rows below the high watermark.
SELECT * FROM one_bucket LIMIT 3;
--> +I[3, c]
--> +I[4, d]
--> +I[5, e]

--! mode streaming
-- Startup modes: latest sees only what is written after the job starts;
-- timestamp sees what was written at or after the mark.
CREATE TABLE modes (id INT, v STRING) WITH ('bucket.num' = '2');
INSERT INTO modes VALUES (1, 'before');
--! mark ts_mid
INSERT INTO modes VALUES (2, 'after-mark');

--! during INSERT INTO modes VALUES (3, 'while-running')
SELECT * FROM modes /*+ OPTIONS('scan.startup.mode' = 'latest') */;
--> +I[3, while-running]

SELECT * FROM modes /*+ OPTIONS('scan.startup.mode' = 'timestamp', 'scan.startup.timestamp' = '${ts_mid}') */;
--> +I[2, after-mark]
--> +I[3, while-running]

SELECT * FROM modes /*+ OPTIONS('scan.startup.mode' = 'earliest') */;
--> +I[1, before]
--> +I[2, after-mark]
--> +I[3, while-running]
