import { describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../src/index.js'
import { maskUrl, parseRedisUrl, sentinelUrl, withCredentials } from '../../src/url.js'

describe('Redis URLs', () => {
  it('reads a direct URL: TLS, credentials, database, IPv6', () => {
    expect(parseRedisUrl('rediss://ops:p%40ss@redis.internal:6380/3')).toEqual({
      kind: 'direct',
      tls: true,
      host: 'redis.internal',
      port: 6380,
      db: 3,
      username: 'ops',
      password: 'p@ss',
    })
    expect(parseRedisUrl('redis://[::1]')).toMatchObject({ kind: 'direct', host: '::1', port: 6379, db: 0 })
  })

  it('reads a Sentinel URL: several sentinels, the master name, a database, default port 26379', () => {
    expect(parseRedisUrl('rediss+sentinel://:secret@10.0.0.1:26380,10.0.0.2,[::1]:26381/my%20master/2')).toEqual({
      kind: 'sentinel',
      tls: true,
      sentinels: [
        { host: '10.0.0.1', port: 26380 },
        { host: '10.0.0.2', port: 26379 },
        { host: '::1', port: 26381 },
      ],
      masterName: 'my master',
      db: 2,
      password: 'secret',
    })
  })

  it('refuses what cannot work, in one line naming the URL without its password', () => {
    const bad = [
      'redis+sentinel://:pw@127.0.0.1:26379',
      'redis+sentinel://:pw@127.0.0.1:26379/m/x',
      'redis+sentinel://:pw@127.0.0.1:26379/m/1/2',
      'redis://:pw@a:1,b:2',
      'http://:pw@host',
      'redis://:pw@host:99999',
    ]
    for (const url of bad) {
      let err: unknown
      try {
        parseRedisUrl(url)
      } catch (e) {
        err = e
      }
      expect(err, url).toBeInstanceOf(ConfigurationError)
      expect((err as Error).message).not.toContain('pw')
    }
  })

  it('builds the URL of --sentinel/--master-name, sets credentials, masks the password', () => {
    const url = sentinelUrl(['a:26379', 'b:26380'], 'main')
    expect(url).toBe('redis+sentinel://a:26379,b:26380/main')
    const withPw = withCredentials(url, { username: 'ops', password: 's/cr@t' })
    expect(parseRedisUrl(withPw)).toMatchObject({ username: 'ops', password: 's/cr@t', masterName: 'main' })
    expect(maskUrl(withPw)).toBe('redis+sentinel://ops:***@a:26379,b:26380/main')
    expect(maskUrl('redis://:pw@h:1/')).toBe('redis://:***@h:1')
  })
})
