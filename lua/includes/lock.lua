-- The fields of a fenced lock's hash P:k:<lock> (docs/redis-layout.md): every script names them
-- through LOCK. TypeScript reads them through LOCK_FIELDS in src/wire/hashes.ts, the same table;
-- test/integration/hash-schema.test.ts runs this file in Redis and checks that the two agree.
local LOCK = {
  token = 'tk',                     -- the holder's token: only while held
  fence = 'f',                      -- fence of the current (or last) acquisition
  expiresAt = 'exp',                -- expiry and acquisition time (Redis ms): only while held
  acquiredAt = 'g',
  owner = 'o',                      -- the owner's description (host:pid unless given)
  releasedAt = 'rel',               -- when it was last released
}
