-- The fields of a handover marker's hash P:ho:<chat> (docs/redis-layout.md): every script names them
-- through HANDOVER. TypeScript reads them through HANDOVER_FIELDS in src/wire/hashes.ts, the same
-- table; test/integration/hash-schema.test.ts runs this file in Redis and checks that the two agree.
local HANDOVER = {
  name = 'name',                    -- the async conversation's name
  replicaId = 'rid',                -- the replica and incarnation that left the marker
  incarnation = 'inc',
  since = 'since',                  -- when the conversation started waiting (kept while the same one waits)
  updatedAt = 'at',                 -- the last write
  data = 'd',                       -- the data given, as JSON, or '' for none
  fence = 'of',                     -- the writer's chat-turn fence; '' for an unfenced write
}
