-- The fields of a prefix's schema record P:schema (docs/redis-layout.md): schema-init-1 names them
-- through SCHEMA. TypeScript reads them through SCHEMA_FIELDS in src/wire/hashes.ts, the same table;
-- test/integration/hash-schema.test.ts runs this file in Redis and checks that the two agree.
local SCHEMA = {
  version = 'version',              -- the schema version
  layout = 'layout',                -- 'standalone' or 'cluster'
  createdAt = 'createdAt',          -- Redis ms of the first write
}
