/** The errors the Lua scripts raise reach the caller as the library's error classes, with their codes. */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { InvalidIdError, KeyLayout } from '../../src/index.js'
import { ScriptRunner } from '../../src/scripts/runner.js'
import { ADMIN_LEAD_EVICT } from '../../src/scripts/registry.js'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'

const client = new Redis(redisUrl())
afterAll(() => client.quit())

describe('script errors', () => {
  it('BMC_INVALID_ID (a required incarnation left empty) is an InvalidIdError, code ERR_INVALID_ID', async () => {
    const keys = new KeyLayout(uniquePrefix('se'), 'standalone')
    const scripts = new ScriptRunner(client, 5000)
    const err = await scripts
      .call(ADMIN_LEAD_EVICT, { lead: keys.lead('provider:x') }, { incarnation: '', wakeChannelPrefix: keys.wakeChannelPrefix })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidIdError)
    expect((err as InvalidIdError).code).toBe('ERR_INVALID_ID')
    expect((err as Error).message).toBe('an incarnation is required')
  })
})
