/**
 * An environment or option the CLI cannot use is one line with a documented exit code: a config
 * folder under /proc or /sys (Node's recursive mkdir loops forever under /proc), a --timeout or
 * --interval longer than a timer can wait (Node would fire it after 1 ms, with a warning).
 */
import { describe, expect, it } from 'vitest'
import { redisUrl } from '../helpers/redis.js'
import { runCli, type CliResult } from '../helpers/cli.js'

const oneLine = (r: CliResult, pattern: RegExp) => {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).toMatch(pattern)
  expect(r.stderr).not.toMatch(/a bug|TimeoutOverflowWarning/)
}

describe('hostile environment and options', () => {
  it('XDG_CONFIG_HOME under /proc or /sys: one line, exit 2', async () => {
    const [proc, sys] = await Promise.all(
      ['/proc/botmesh-x', '/sys/botmesh-x'].map((d) =>
        runCli(['--prefix', 'shop', 'config', 'set-context', 'x'], {
          env: { XDG_CONFIG_HOME: d, BOTMESH_CONFIG: undefined },
          timeoutMs: 10_000,
        }),
      ),
    )
    oneLine(proc!, /^botmesh-coord: config file \/proc\/botmesh-x\/botmesh-coord\/config\.json: cannot write it: /)
    oneLine(sys!, /^botmesh-coord: config file \/sys\/botmesh-x\/botmesh-coord\/config\.json: cannot write it: /)
  })

  it('a timer duration over 2^31-1 ms: one line, exit 2', async () => {
    const [timeout, interval, waitTimeout] = await Promise.all([
      runCli(['--url', redisUrl(), '--timeout', '25d', 'leases', 'ls']),
      runCli(['--url', redisUrl(), 'events', '-f', '--interval', '30d']),
      runCli(['--url', redisUrl(), 'provider', 'yield', 'wa', '--wait', '--wait-timeout', '30d']),
    ])
    oneLine(timeout, /--timeout.*25d is longer than a timer can wait \(at most 2147483647ms/)
    oneLine(interval, /--interval.*30d is longer than a timer can wait/)
    oneLine(waitTimeout, /--wait-timeout.*30d is longer than a timer can wait/)
  })
})
