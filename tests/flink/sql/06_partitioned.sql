-- Partitioned tables: static and dynamic partitions, partition pruning
-- (checked on the server's written bytes), a partitioned primary-key table.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE logs (id INT, payload STRING, dt STRING) PARTITIONED BY (dt) WITH ('bucket.num' = '2');
ALTER TABLE logs ADD PARTITION (dt = '2024-01-01');
ALTER TABLE logs ADD PARTITION (dt = '2024-01-02');
SHOW PARTITIONS logs;
--> +I[dt=2024-01-01]
--> +I[dt=2024-01-02]

-- Static partition insert.
INSERT INTO logs PARTITION (dt = '2024-01-01') VALUES (1, 'small'), (2, 'small');

-- Dynamic partition insert: 2000 rows of 2 KB into the second partition.
CREATE TEMPORARY TABLE gen (id INT, payload STRING) WITH (
  'connector' = 'datagen', 'number-of-rows' = '2000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '10', 'fields.id.end' = '2009',
  'fields.payload.length' = '2000');
INSERT INTO logs SELECT id, payload, '2024-01-02' FROM gen;

-- Partition pruning: only the first partition is read.
--! server-bytes-below 100000
SELECT id, payload, dt FROM logs WHERE dt = '2024-01-01';
--> +I[1, small, 2024-01-01]
--> +I[2, small, 2024-01-01]

--! final
--! server-bytes-above 1500000
SELECT dt, COUNT(*), SUM(CHAR_LENGTH(payload)) FROM logs GROUP BY dt;
--> +I[2024-01-01, 2, 10]
--> +I[2024-01-02, 2000, 4000000]

-- A streaming read discovers a partition created after it started.
--! during ALTER TABLE logs ADD PARTITION (dt = '2024-01-03')
--! during INSERT INTO logs PARTITION (dt = '2024-01-03') VALUES (3, 'late')
--! timeout 120
SELECT id, payload FROM logs /*+ OPTIONS('scan.partition.discovery.interval' = '1 s') */ WHERE dt = '2024-01-03';
--> +I[3, late]

ALTER TABLE logs DROP PARTITION (dt = '2024-01-01');
SHOW PARTITIONS logs;
--> +I[dt=2024-01-02]
--> +I[dt=2024-01-03]

-- A partitioned primary-key table (the partition key is part of the key).
CREATE TABLE kv_part (id INT NOT NULL, dt STRING NOT NULL, v STRING, PRIMARY KEY (id, dt) NOT ENFORCED)
  PARTITIONED BY (dt) WITH ('bucket.num' = '1');
ALTER TABLE kv_part ADD PARTITION (dt = 'a');
ALTER TABLE kv_part ADD PARTITION (dt = 'b');
INSERT INTO kv_part VALUES (1, 'a', 'x'), (1, 'b', 'y'), (2, 'a', 'z');
INSERT INTO kv_part VALUES (1, 'a', 'x2');
--! final
SELECT * FROM kv_part;
--> +I[1, a, x2]
--> +I[1, b, y]
--> +I[2, a, z]

--! mode batch
SELECT * FROM kv_part WHERE id = 1 AND dt = 'b';
--> +I[1, b, y]

--! mode streaming
-- An auto-partitioned table: the server pre-creates today's and tomorrow's
-- partitions (UTC days) at CREATE (fluss-c before it answers, 0.9.1 just
-- after: hence the retry).
CREATE TABLE auto_days (id INT, dt STRING) PARTITIONED BY (dt) WITH (
  'bucket.num' = '1',
  'table.auto-partition.enabled' = 'true',
  'table.auto-partition.time-unit' = 'DAY',
  'table.auto-partition.time-zone' = 'UTC',
  'table.auto-partition.num-precreate' = '2');
--! retry 30
SHOW PARTITIONS auto_days;
--> +I[dt=${today_utc}]
--> +I[dt=${tomorrow_utc}]
INSERT INTO auto_days VALUES (1, '${today_utc}'), (2, '${tomorrow_utc}');
--! final
SELECT * FROM auto_days;
--> +I[1, ${today_utc}]
--> +I[2, ${tomorrow_utc}]
