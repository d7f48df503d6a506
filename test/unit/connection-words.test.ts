/**
 * A printed command carries the connection it came from: the context's name, else --url (never a
 * password: a URL holding one is printed as the environment variable) and --prefix when not default.
 */
import { describe, expect, it } from 'vitest'
import { connectionWords, withConnection } from '../../commands/target.js'

describe('printed commands', () => {
  it('name the context, else the URL and the prefix, and never a password', () => {
    expect(connectionWords({ url: 'redis://10.0.0.5:6380', prefix: 'shop', context: 'prod' })).toBe('--context prod')
    expect(connectionWords({ url: 'redis://10.0.0.5:6380', prefix: 'shop', context: null })).toBe(
      '--url redis://10.0.0.5:6380 --prefix shop',
    )
    expect(connectionWords({ url: 'redis://127.0.0.1:6379', prefix: 'botmesh', context: null })).toBe('')
    const secret = connectionWords({ url: 'rediss://ops:s3cr%3Dt@redis:6380', prefix: 'shop', context: null })
    expect(secret).toBe('--url $REDIS_URL --prefix shop')
    expect(secret).not.toContain('s3cr')
    // Pasted into a shell as printed: a URL with query options (&, ?) is quoted.
    expect(connectionWords({ url: 'redis://10.0.0.5:6380/0?tls=true&x=1', prefix: 'shop', context: null })).toBe(
      "--url 'redis://10.0.0.5:6380/0?tls=true&x=1' --prefix shop",
    )
  })

  it('insert it after every botmesh-coord that starts a command, and nowhere else', () => {
    const words = '--context demo'
    expect(withConnection('wait 5s, or revoke it now: botmesh-coord chat release chat:7 --if-fence 12', words)).toBe(
      'wait 5s, or revoke it now: botmesh-coord --context demo chat release chat:7 --if-fence 12',
    )
    expect(withConnection('botmesh-coord replica evict <id> / botmesh-coord chat release <key>', words)).toBe(
      'botmesh-coord --context demo replica evict <id> / botmesh-coord --context demo chat release <key>',
    )
    expect(withConnection('something other than botmesh-coord wrote it', words)).toBe('something other than botmesh-coord wrote it')
    expect(withConnection('botmesh-coord chat ls', '')).toBe('botmesh-coord chat ls')
  })
})
