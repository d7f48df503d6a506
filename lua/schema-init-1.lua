#!lua
--[[
  schema-init-1: record the schema version and layout of a prefix the first time a writer starts.

  KEYS[1] schema hash
  ARGV[1] schema version   ARGV[2] layout

  Returns { version, layout } as stored (the caller refuses a newer version and warns on another layout)
]]
--@include time
--@include schema
redis.call('HSETNX', KEYS[1], SCHEMA.version, ARGV[1])
redis.call('HSETNX', KEYS[1], SCHEMA.layout, ARGV[2])
redis.call('HSETNX', KEYS[1], SCHEMA.createdAt, fmt(NOW))
local v = redis.call('HMGET', KEYS[1], SCHEMA.version, SCHEMA.layout)
return { v[1], v[2] }
