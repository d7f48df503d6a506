-- The fields of a lead hash P:l:<name> (docs/redis-layout.md): every script names them through LEAD.
-- TypeScript reads them through LEAD_FIELDS in src/wire/hashes.ts, the same table;
-- test/integration/hash-schema.test.ts runs this file in Redis and checks that the two agree.
-- The holder's fields are named as a chat's are (CHAT): lease-renew-1 renews either kind of hash.
local LEAD = {
  fence = 'f',                      -- fence of the current (or last) grant
  holder = 'h',                     -- holder's replicaId, incarnation: only while held
  holderIncarnation = 'hi',
  expiresAt = 'exp',                -- lease expiry, leading since, last renewal (Redis ms): only while held
  grantedAt = 'g',
  lastRenewal = 'lr',
  lastHolder = 'lh',                -- the last holder (kept after release)
  lastHolderIncarnation = 'lhi',
  previousHolder = 'ph',            -- the holder before the current grant (previousHolder)
  previousHolderIncarnation = 'phi',
  transportDownSince = 'td',        -- the leader's transport is down since (Redis ms): only while held
  transportYieldsAt = 'tdy',        -- the leader yields then (Redis ms) unless its transport comes back up
  releasedAt = 'rel',               -- when the last holder let go, while nobody leads
  releasedHow = 'rw',               -- how: 'released', 'yielded', 'expired', 'revoked', 'evicted'
  releasedBy = 'rb',                -- by whom (an operator), when said
  handoverMs = 'hg',                -- the last handover: rel -> next grant (ms), how (rw) and by whom (rb)
  handoverHow = 'hw',
  handoverBy = 'hb',
  yieldBy = 'yr',                   -- a pending yield request: by whom, target replicaId ('' any), until, at
  yieldTarget = 'yt',
  yieldExpiresAt = 'yexp',
  yieldAt = 'yat',
  candidatePrefix = 'c:',           -- c:<incarnation> = "deadline|replicaId" of a standing candidate
}
