-- The fields of a chat's state hash P:c:<chat> (docs/redis-layout.md): every script names them
-- through CHAT. TypeScript reads them through CHAT_FIELDS in src/wire/chat.ts, the same table;
-- test/integration/chat-schema.test.ts runs this file in Redis and checks that the two agree.
local CHAT = {
  lastTicket = 'n',                 -- last ticket issued
  fence = 'f',                      -- fence of the current (or last) grant
  holder = 'h',                     -- holder's replicaId, incarnation, ticket: only while held
  holderIncarnation = 'hi',
  holderTicket = 'ht',
  expiresAt = 'exp',                -- lease expiry, grant time, last renewal (Redis ms): only while held
  grantedAt = 'g',
  lastRenewal = 'lr',
  waited = 'wt',                    -- how long the holder's ticket waited (ms): only while held
  lastHolder = 'lh',                -- the last holder (kept after release)
  lastHolderIncarnation = 'lhi',
  previousHolder = 'ph',            -- the holder before the current grant (previousHolder)
  previousHolderIncarnation = 'phi',
  skipped = 'sk',                   -- dead tickets skipped
  ticketPrefix = 't:',              -- t:<ticket> = "deadline|enqueuedAt|incarnation|replicaId"
  requestPrefix = 'rq:',            -- rq:<requestId> = the ticket one acquisition took
  ticketRequestPrefix = 'q:',       -- q:<ticket> = the request id of the acquisition that took it
  holderRequest = 'hq',             -- the holder's request id: only while held
  offered = 'of',                   -- '1' while the holder's grant is offered, not yet taken up ('0' once taken)
  waiterPrefix = 'w:',              -- w:<incarnation> = Redis ms until which that incarnation's queued tickets live
  presumedDeadPrefix = 'x:',        -- x:<ticket> = the incarnation of a ticket skipped as presumed dead (its poll, if it comes, learns it was too late)
  epoch = 'ep',                     -- Redis's clock (µs) when a take first found this state: a state made again has another
}
