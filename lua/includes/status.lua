-- The status codes of the turn scripts' replies, by name: every script writes them as TURN.<name>
-- and RELEASE.<name>, src/scripts/registry.ts reads them through TURN_STATUS and RELEASE_STATUS, the
-- same tables (test/integration/chat-schema.test.ts runs this file in Redis and checks they agree).
local TURN = {                  -- turn-acquire-2
  granted = 1,                  -- the turn is ours (or an offer pushed to us, taken up now)
  queued = 0,                   -- still queued, behind a holder whose lease runs holderLeftMs more
  dropped = -1,                 -- the ticket is no longer queued, or not this acquisition's
  lapsed = -2,                  -- the ticket was granted, but the grant lapsed before this poll took it up
  stateLost = -3,               -- the chat's whole state is gone (flushed, evicted, lost): take a ticket again
  presumedDead = -4,            -- the ticket was skipped, its replica presumed dead (it was too late, not an operator's skip)
}
local RELEASE = {               -- turn-release-2
  released = 1,                 -- the turn was given back
  withdrawn = 2,                -- the queued ticket was withdrawn
  notOurs = 0,                  -- neither was ours any more
}
