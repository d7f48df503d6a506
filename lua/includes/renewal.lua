-- A lease renewal (lease-renew-1, lease-renew-many-0; needs the chat include before it): the fields
-- it writes, as HSET's field/value pairs. `offered` and `holder` are the hash's CHAT.offered and
-- CHAT.holder: a chat turn still offered — used without the poll that takes it up — is taken up by
-- this renewal, its holder the chat's last holder from here on (as take_up makes it).
local function renewal_fields(offered, holder, inc, expires, renewed)
  if offered == '1' then
    return { CHAT.expiresAt, expires, CHAT.lastRenewal, renewed, CHAT.lastHolder, holder, CHAT.lastHolderIncarnation, inc,
      CHAT.offered, '0' }
  end
  return { CHAT.expiresAt, expires, CHAT.lastRenewal, renewed }
end
