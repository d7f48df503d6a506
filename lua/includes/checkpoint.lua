-- The fields of a conversation checkpoint's hash P:cp:<chat> (docs/redis-layout.md): every script
-- names them through CHECKPOINT. TypeScript reads them through CHECKPOINT_FIELDS in
-- src/wire/hashes.ts, the same table; test/integration/hash-schema.test.ts runs this file in Redis
-- and checks that the two agree.
local CHECKPOINT = {
  revision = 'rev',                 -- max(last + 1, Redis TIME in µs)
  flow = 'flow',                    -- the flow name and step
  step = 'step',
  data = 'd',                       -- JSON { state, answer? }
  ownerReplica = 'oi',              -- the writer: replicaId, incarnation, chat-turn fence ('' unfenced)
  ownerIncarnation = 'oinc',
  ownerFence = 'of',
  updatedAt = 'at',                 -- Redis ms of the write
  ephemeral = 'eph',                -- ephemeral (forward) checkpoints: '1', their TTL in ms, the flow's fingerprint
  ttl = 'ttl',
  fingerprint = 'fp',
  answerBytes = 'ab',               -- bytes of the saved answer
  writeId = 'wid',                  -- the id of the write that stored it (a re-sent write answers with its revision)
}
