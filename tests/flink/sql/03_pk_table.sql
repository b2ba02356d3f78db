-- Primary-key tables: upsert sink, changelog as Flink shows it, the
-- $changelog and $binlog system tables, point queries, LIMIT, COUNT(*),
-- partial update, DELETE / UPDATE in batch mode.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE users (
  id INT NOT NULL,
  name STRING,
  score BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('bucket.num' = '2');

INSERT INTO users VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'cy', 30);
INSERT INTO users VALUES (2, 'bob', 21);

-- A streaming read: the snapshot (or changelog) state, then changes.
--! final
--! during INSERT INTO users VALUES (3, 'cy', 31), (4, 'dee', 40)
SELECT * FROM users;
--> +I[1, ann, 10]
--> +I[2, bob, 21]
--> +I[3, cy, 31]
--> +I[4, dee, 40]

-- The changelog with its change types, from the beginning.
SELECT _change_type, _log_offset, id, name, score FROM users$changelog /*+ OPTIONS('scan.startup.mode' = 'earliest') */ WHERE id = 2;
--> +I[insert, 1, 2, bob, 20]
--> +I[update_before, 2, 2, bob, 20]
--> +I[update_after, 3, 2, bob, 21]

-- $binlog: one row per change, before and after images side by side.
SELECT _change_type, `before`.score, `after`.score FROM users$binlog /*+ OPTIONS('scan.startup.mode' = 'earliest') */ WHERE `after`.id = 2 OR `before`.id = 2;
--> +I[insert, null, 20]
--> +I[update, 20, 21]

--! mode batch
-- Point query on the full key (LOOKUP), LIMIT (LIMIT_SCAN), COUNT(*).
SELECT * FROM users WHERE id = 3;
--> +I[3, cy, 31]

SELECT * FROM users WHERE id = 99;

SELECT COUNT(*) FROM users;
--> +I[4]

CREATE TABLE one_pk (id INT NOT NULL, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '1');
INSERT INTO one_pk VALUES (1, 'a'), (2, 'b'), (3, 'c');
SELECT * FROM one_pk LIMIT 5;
--> +I[1, a]
--> +I[2, b]
--> +I[3, c]

-- DELETE and UPDATE with a condition on the full primary key.
DELETE FROM users WHERE id = 1;
UPDATE users SET score = 99 WHERE id = 4;
SELECT * FROM users WHERE id = 1;
SELECT * FROM users WHERE id = 4;
--> +I[4, dee, 99]

--! error only supports DELETE statement with conditions on primary key
DELETE FROM users WHERE score > 5;

--! mode streaming
--! final
SELECT * FROM users;
--> +I[2, bob, 21]
--> +I[3, cy, 31]
--> +I[4, dee, 99]

-- Partial update: two INSERTs into different columns of the same rows.
CREATE TABLE wide (id INT NOT NULL, a STRING, b STRING, c INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '1');
INSERT INTO wide (id, a) VALUES (1, 'a1'), (2, 'a2');
INSERT INTO wide (id, b) VALUES (1, 'b1'), (3, 'b3');
INSERT INTO wide (id, a, c) VALUES (1, 'a1x', 7);
--! final
SELECT * FROM wide;
--> +I[1, a1x, b1, 7]
--> +I[2, a2, null, null]
--> +I[3, null, b3, null]
