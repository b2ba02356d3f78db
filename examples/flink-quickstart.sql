-- Flink SQL against fluss-c: a catalog, a log table, a primary-key table,
-- a streaming upsert and a lookup join.  Run it in Flink's sql-client, or
-- without a Flink installation:  tests/flink/run 127.0.0.1:9123 examples/flink-quickstart.sql
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '127.0.0.1:9123');
USE CATALOG fluss_catalog;
CREATE DATABASE IF NOT EXISTS demo;
USE demo;

DROP TABLE IF EXISTS clicks;
DROP TABLE IF EXISTS users;
CREATE TABLE clicks (user_id INT, url STRING, ts TIMESTAMP(3), ptime AS PROCTIME());
CREATE TABLE users (user_id INT NOT NULL, name STRING, PRIMARY KEY (user_id) NOT ENFORCED);

INSERT INTO users VALUES (1, 'ann'), (2, 'bob');
INSERT INTO clicks VALUES (1, '/home', TIMESTAMP '2026-01-01 10:00:00'),
                          (2, '/cart', TIMESTAMP '2026-01-01 10:00:01'),
                          (1, '/pay',  TIMESTAMP '2026-01-01 10:00:02');

-- 1. Clicks per user, a continuously updated result.
--! final
SELECT user_id, COUNT(*) AS clicks FROM clicks GROUP BY user_id;
--> +I[1, 2]
--> +I[2, 1]

-- 2. Enrich the click stream with a lookup join on the primary-key table.
SELECT c.url, u.name FROM clicks AS c
  JOIN users FOR SYSTEM_TIME AS OF c.ptime AS u ON c.user_id = u.user_id;
--> +I[/home, ann]
--> +I[/cart, bob]
--> +I[/pay, ann]

-- 3. A point query on the primary key in batch mode.
--! mode batch
SELECT * FROM users WHERE user_id = 2;
--> +I[2, bob]
