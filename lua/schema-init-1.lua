#!lua
--[[
  schema-init-1: record the schema version and layout of a prefix the first time a writer starts.

  KEYS[1] schema hash
  ARGV[1] schema version   ARGV[2] layout

  Returns { version, layout } as stored (the caller refuses a newer version and warns on another layout)
]]
--@include time
redis.call('HSETNX', KEYS[1], 'version', ARGV[1])
redis.call('HSETNX', KEYS[1], 'layout', ARGV[2])
redis.call('HSETNX', KEYS[1], 'createdAt', fmt(NOW))
local v = redis.call('HMGET', KEYS[1], 'version', 'layout')
return { v[1], v[2] }
