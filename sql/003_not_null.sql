--
-- 003_not_null: G2 (complete capture) for NOT NULL, the one part of capture
-- whose rows differ between PostgreSQL versions because PostgreSQL's own
-- catalog does.
--
-- Up to 17 NOT NULL is a flag of the column (pg_attribute.attnotnull); from
-- 18 on it is also a constraint in pg_constraint, named TABLE_COLUMN_not_null
-- unless named, with an address of its own.  What ddl_notify records:
-- - SET NOT NULL and DROP NOT NULL: the ALTER TABLE row, whose subcommand
--   names the column on every version (18 collects it with the constraint's
--   address: capture takes the column, not the constraint's name).
-- - 18+: a dropped NOT NULL constraint is a sql_drop row of object_type
--   "table constraint" like any other constraint: DROP NOT NULL (original,
--   on the table and on each inheritance child), DROP TABLE and DROP COLUMN
--   (not original, with the table or column); up to 17 there is no such
--   object and no such row.
-- expected/003_not_null.out is 15, 16 and 17's output, _1.out 18 and 19's:
-- they differ only in those sql_drop rows.
--
-- Catches (on 18+): the SET/DROP NOT NULL subcommand naming the constraint
-- (t_nn_c_not_null) instead of the column.
--
CREATE EXTENSION IF NOT EXISTS ddl_notify;

CREATE FUNCTION pg_temp.ev(since bigint)
RETURNS TABLE (trigger_event text, command_tag text, object_type text,
			   object_identity text, details jsonb)
LANGUAGE sql AS $$
	SELECT trigger_event, command_tag, object_type, object_identity,
		   nullif(details - '{before,after,changes,statement}'::text[], '{}')
	FROM ddl_notify.event WHERE id > since ORDER BY id
	-- the relation images ("before", "after", "changes") are left out:
	-- 040_relation_images shows them
$$;

SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TABLE t_nn (id int PRIMARY KEY, c text, d int NOT NULL);
CREATE TABLE t_nn_child () INHERITS (t_nn);
ALTER TABLE t_nn ALTER COLUMN c SET NOT NULL;
ALTER TABLE t_nn ALTER COLUMN c DROP NOT NULL;
ALTER TABLE t_nn DROP COLUMN d;
DROP TABLE t_nn CASCADE;
SELECT * FROM pg_temp.ev(:last);

-- Cleanup: the next file starts from scratch
DROP EXTENSION ddl_notify;
