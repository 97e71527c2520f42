--
-- 043_type_images: G2 and G15 (their payload) for domains, enums and
-- composite types (issue 36: the stream rebuilds a real schema).
-- docs/reference.md, "A type's image".
--
-- A domain's and an enum's image is read from the catalogs, as relation
-- images are (pg_type, pg_constraint, pg_enum; names qualified as pg_dump
-- prints them, whatever the search_path), never from the statement text:
-- - every ddl_command_end row of a domain or an enum has "after" (no
--   "before", no "changes"): CREATE DOMAIN / TYPE ... AS ENUM, ALTER DOMAIN
--   (default, NOT NULL, ADD/DROP/VALIDATE/RENAME CONSTRAINT: the row of the
--   constraint renamed has its domain's image), ALTER TYPE ...
--   ADD VALUE / RENAME VALUE;
-- - a domain: its base type with typmod, collation (when not the base
--   type's), default, not_null and CHECK constraints by name; an enum: its
--   labels in their sort order (ADD VALUE BEFORE included);
-- - a composite type is a relation image of kind "composite type": its
--   columns, "after" at CREATE TYPE, "before"/"after"/"changes" at ALTER TYPE
--   ... ADD/DROP/RENAME/ALTER ATTRIBUTE.
-- Catches: types without images (a column of a domain or enum type replayed
-- onto a copy that never got the type).
--
-- (quiet: whether it is there already depends on the files run before)
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS ddl_notify;
RESET client_min_messages;

CREATE SCHEMA typ_s;
SET search_path = typ_s, public;
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset

--
-- 1. enums
--
CREATE TYPE typ_mood AS ENUM ('sad', 'ok');
ALTER TYPE typ_mood ADD VALUE 'happy';
ALTER TYPE typ_mood ADD VALUE 'awful' BEFORE 'sad';
ALTER TYPE typ_mood RENAME VALUE 'ok' TO 'fine';

--
-- 2. domains
--
CREATE DOMAIN typ_code AS varchar(8) COLLATE "C" DEFAULT 'none' NOT NULL
	CONSTRAINT typ_code_len CHECK (length(VALUE) > 1);
ALTER DOMAIN typ_code ADD CONSTRAINT typ_code_up CHECK (VALUE = upper(VALUE)) NOT VALID;
ALTER DOMAIN typ_code VALIDATE CONSTRAINT typ_code_up;
ALTER DOMAIN typ_code DROP DEFAULT;
ALTER DOMAIN typ_code DROP NOT NULL;
ALTER DOMAIN typ_code RENAME CONSTRAINT typ_code_len TO typ_code_length;
ALTER DOMAIN typ_code DROP CONSTRAINT typ_code_up;
-- a domain over a type of this schema, and its default: both qualified
CREATE DOMAIN typ_moods AS typ_mood[] DEFAULT ARRAY['fine'::typ_mood];

-- (17 and later record a domain's NOT NULL as a constraint, and report its
-- drop: left out here; the image's not_null says it on every version)
SELECT command_tag, object_identity, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(details) k) AS keys,
	   details->'after' AS after
FROM ddl_notify.event WHERE id > :last
  AND NOT (object_type = 'domain constraint' AND object_identity LIKE '%not_null on %')
ORDER BY id;

--
-- 3. composite types: relation images of their own kind
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
CREATE TYPE typ_pair AS (a int, b text COLLATE "C");
ALTER TYPE typ_pair ADD ATTRIBUTE c typ_code, DROP ATTRIBUTE a;
ALTER TYPE typ_pair RENAME ATTRIBUTE b TO bb;
ALTER TYPE typ_pair ALTER ATTRIBUTE c TYPE text;
SELECT command_tag, object_type, object_identity, details->'after'->>'kind' AS kind,
	   (SELECT string_agg(c->>'name' || ' ' || (c->>'type'), ', ' ORDER BY (c->>'attnum')::int)
		FROM jsonb_array_elements(details->'after'->'columns') c) AS columns_after,
	   details->'changes' AS changes
FROM ddl_notify.event WHERE id > :last AND details ? 'after' ORDER BY id;

--
-- 4. drops: named by their address (no image)
--
SELECT coalesce(max(id), 0) AS last FROM ddl_notify.event \gset
DROP TYPE typ_pair;
DROP DOMAIN typ_moods, typ_code;
DROP TYPE typ_mood;
SELECT command_tag, object_type, object_identity, details->'address_names' AS names,
	   details->>'original' AS original, details ? 'before' AS has_before
FROM ddl_notify.event WHERE id > :last ORDER BY id;

RESET search_path;
DROP SCHEMA typ_s;
