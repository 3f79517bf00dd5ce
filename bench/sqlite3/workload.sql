-- workload.sql — the sqlite3 workload of bench/run.sh, run by the sqlite3
-- shell against an in-memory database: generated tables (recursive CTEs, no
-- random()), inserts, indexes, joins, aggregates, window functions, updates
-- and deletes in a transaction, string functions, sorting.  Everything is
-- deterministic: the output must be the same for every build.
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -65536;

CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, score REAL);
CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT, price REAL, category INTEGER);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, item INTEGER,
                    qty INTEGER, day INTEGER, note TEXT);

BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO customer
  SELECT i, 'cust' || i, 'city' || (i * 7 % 97), (i * 37 % 1000) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
INSERT INTO item
  SELECT i, 'item' || printf('%03d', i), (i * 13 % 1000) / 4.0, i % 23 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
INSERT INTO orders
  SELECT i, (i * 7919) % 20000 + 1, (i * 31 % 500) + 1, i % 17 + 1, i % 365,
         printf('%08x-%s', i * 2654435761 % 4294967296,
                substr('abcdefghijklmnopqrstuvwxyz', i % 22 + 1, 5))
  FROM n;
COMMIT;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_item ON orders(item, qty);
CREATE INDEX customer_city ON customer(city);

-- Joins and aggregates.
SELECT c.city, count(*), sum(o.qty * i.price), round(avg(c.score), 4)
  FROM customer c JOIN orders o ON o.customer = c.id JOIN item i ON i.id = o.item
 GROUP BY c.city ORDER BY 3 DESC, 1 LIMIT 10;
SELECT i.category, count(DISTINCT o.customer), max(o.qty), min(i.price)
  FROM orders o JOIN item i ON i.id = o.item
 GROUP BY i.category HAVING count(*) > 100 ORDER BY i.category;
SELECT c.name, t.total
  FROM customer c
  JOIN (SELECT customer, sum(qty) AS total FROM orders GROUP BY customer) t
    ON t.customer = c.id
 ORDER BY t.total DESC, c.id LIMIT 10;

-- Window functions and sorting.
SELECT day, daily, sum(daily) OVER (ORDER BY day ROWS 6 PRECEDING)
  FROM (SELECT day, sum(qty) AS daily FROM orders GROUP BY day)
 ORDER BY day LIMIT 20;
SELECT customer, id, rank() OVER (PARTITION BY customer ORDER BY qty DESC, id)
  FROM orders WHERE customer <= 40 ORDER BY customer, 3 LIMIT 30;

-- Updates and deletes in a transaction, then re-aggregate.
BEGIN;
UPDATE orders SET qty = qty + 1 WHERE item IN (SELECT id FROM item WHERE label LIKE 'item1%');
DELETE FROM orders WHERE id % 11 = 0;
UPDATE customer SET score = score * 1.5 WHERE city IN ('city3', 'city5', 'city7');
COMMIT;
SELECT count(*), sum(qty), total(qty * 0.5) FROM orders;

-- Strings.
SELECT upper(substr(note, 10)), count(*) FROM orders GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5;
SELECT city, group_concat(name, ',')
  FROM (SELECT city, name FROM customer WHERE id % 1000 = 0 ORDER BY name)
 GROUP BY city ORDER BY city LIMIT 5;
SELECT count(*) FROM orders WHERE note GLOB '*a[bc]*' OR instr(note, 'xyz') > 0;
SELECT replace(name, 'cust', 'C'), length(name) FROM customer
 WHERE name > 'cust19990' ORDER BY name DESC LIMIT 5;
