/**
 * A port that accepts connections and never answers (a hung Redis, a wrong service behind a load
 * balancer): every command ends within about its --timeout with one line and the exit code for
 * "Redis unreachable" — not after the silent socket's own time-outs — and the library's start()
 * rejects as CoordinationUnavailableError within about its commandTimeoutMs.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CoordinationUnavailableError, RedisCoordinator } from '../../src/index.js'
import { EXIT } from '../../commands/output/exit-codes.js'
import { runCli } from '../helpers/cli.js'

describe('a server that accepts and never answers', () => {
  let server: net.Server
  const sockets = new Set<net.Socket>()
  let url = ''
  beforeAll(async () => {
    server = net.createServer((s) => {
      sockets.add(s)
      s.on('error', () => {})
      s.on('close', () => sockets.delete(s))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  })
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const commands = [
    ['leases', 'ls'],
    ['chat', 'inspect', 'x'],
    ['doctor'],
    ['chat', 'release', 'chat:1', '--yes'],
    ['leases', 'ls', '--layout', 'standalone'],
  ]
  it.each(commands.map((c) => [c.join(' '), c] as const))('%s: ends within about --timeout 2s, exit "unreachable"', async (_, args) => {
    const started = Date.now()
    const r = await runCli(['--url', url, '--timeout', '2s', ...args], { timeoutMs: 15_000 })
    const took = Date.now() - started
    expect(r.code, r.stderr).toBe(EXIT.unreachable)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/Redis unreachable at redis:\/\/127\.0\.0\.1:\d+: timed out/)
    expect(took).toBeLessThan(6_000)
  })

  it('the library: start() rejects as CoordinationUnavailableError within about commandTimeoutMs', async () => {
    const c = new RedisCoordinator({ url, replicaId: 'pod-s', commandTimeoutMs: 1000 })
    const started = Date.now()
    const err = await c.start().then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(CoordinationUnavailableError)
    expect((err as CoordinationUnavailableError).reason).toBe('unreachable')
    expect(Date.now() - started).toBeLessThan(3_000)
    const closing = Date.now()
    await c.stop().catch(() => {})
    expect(Date.now() - closing).toBeLessThan(3_000)
  })
})
