/**
 * ACL refusals in every wording Redis uses (7.0 and 7.2, outside and inside a script): one test says
 * whether an error is one (the library's start() and the CLI ask the same), and the CLI names the
 * grant that is missing.
 */
import { describe, expect, it } from 'vitest'
import { aclDenial } from '../../commands/output/errors.js'
import { isAclRefusal } from '../../src/errors/from-redis.js'

describe('ACL refusals', () => {
  it('every wording is a refusal, and the CLI names what to grant', () => {
    const cases: Array<[string, RegExp]> = [
      ["NOPERM this user has no permissions to run the 'publish' command", /may not run PUBLISH \(grant \+publish\)/],
      ["ACL failure in script: No permissions to run the 'publish' command", /may not run PUBLISH \(grant \+publish\)/],
      ['NOPERM this user has no permissions to access one of the keys used as arguments', /may not access these keys/],
      ['No permissions to access a key', /may not access these keys/],
      ['NOPERM this user has no permissions to access one of the channels used as arguments', /pub\/sub channel/],
      ["The user executing the script can't publish to the channel mentioned in the command", /may not publish to the wake channel/],
    ]
    for (const [msg, said] of cases) {
      expect(isAclRefusal(msg), msg).toBe(true)
      expect(aclDenial(msg), msg).toMatch(said)
    }
  })

  it('other errors are not refusals', () => {
    for (const msg of [
      'ERR syntax error',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'OOM command not allowed',
    ]) {
      expect(isAclRefusal(msg)).toBe(false)
      expect(aclDenial(msg)).toBeNull()
    }
  })
})
