-- ALTER TABLE through Flink's Fluss catalog (fluss-flink 0.9.1 sends
-- ALTER_TABLE): SET and RESET of an option 0.9.1 lets change and of a
-- custom option, a refused option, ADD COLUMN on a log and a primary-key
-- table with rows written before and after (old rows read NULL in the new
-- column), projection pushdown across both schemas, a point query.
CREATE CATALOG fluss_catalog WITH ('type' = 'fluss', 'bootstrap.servers' = '${bootstrap}');
USE CATALOG fluss_catalog;
CREATE DATABASE ${db};
USE ${db};

CREATE TABLE events (id INT, name STRING) WITH ('bucket.num' = '1');
INSERT INTO events VALUES (1, 'a'), (2, CAST(NULL AS STRING));

ALTER TABLE events SET ('table.datalake.freshness' = '2min', 'owner' = 'team');
ALTER TABLE events RESET ('owner');

--! error The option 'table.log.ttl' is not supported to alter yet.
ALTER TABLE events SET ('table.log.ttl' = '1d');

ALTER TABLE events ADD score BIGINT COMMENT 'added later';
INSERT INTO events VALUES (3, 'c', 30), (4, 'd', CAST(NULL AS BIGINT));

SELECT * FROM events;
--> +I[1, a, null]
--> +I[2, null, null]
--> +I[3, c, 30]
--> +I[4, d, null]

SELECT name, id FROM events;
--> +I[a, 1]
--> +I[null, 2]
--> +I[c, 3]
--> +I[d, 4]

CREATE TABLE users (id INT NOT NULL, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket.num' = '1');
INSERT INTO users VALUES (1, 'ann'), (2, 'bob');
ALTER TABLE users ADD age INT;
INSERT INTO users VALUES (2, 'bob', 20), (3, 'cy', 30);

--! final
SELECT * FROM users;
--> +I[1, ann, null]
--> +I[2, bob, 20]
--> +I[3, cy, 30]

--! mode batch
SELECT * FROM users WHERE id = 1;
--> +I[1, ann, null]

SELECT * FROM users WHERE id = 2;
--> +I[2, bob, 20]
