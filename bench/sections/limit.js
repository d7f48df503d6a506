// Section 1: what the same private redis-server can do: round trips per second for PING and a
// trivial EVALSHA (`return 1`), with 1 and with P clients, each one command in flight (no pipelining).
// Two clients: redis-benchmark (C, the server's limit) and an ioredis loop in one Node process
// (what one Node process can drive).
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { round } from '../lib/stats.js'

const run = promisify(execFile)

async function redisBenchmark(port, clients, requests, args) {
  try {
    const { stdout } = await run(
      'redis-benchmark',
      ['-h', '127.0.0.1', '-p', String(port), '-c', String(clients), '-n', String(requests), '-P', '1', '--csv', ...args],
      { timeout: 120_000 },
    )
    const line = stdout
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('"test"'))
      .pop()
    const rps = Number(JSON.parse(`[${line}]`)[1])
    return round(rps, 0)
  } catch {
    return null
  }
}

async function ioredisLoop(url, clients, seconds, op) {
  const cs = Array.from({ length: clients }, () => new Redis(url))
  try {
    await Promise.all(cs.map((c) => c.ping()))
    let n = 0
    const end = performance.now() + seconds * 1000
    const t0 = performance.now()
    await Promise.all(
      cs.map(async (c) => {
        while (performance.now() < end) {
          await op(c)
          n++
        }
      }),
    )
    return round(n / ((performance.now() - t0) / 1000), 0)
  } finally {
    cs.forEach((c) => c.disconnect())
  }
}

export async function runLimit({ url, port, replicas, requests, seconds }) {
  const admin = new Redis(url)
  const sha = await admin.script('LOAD', 'return 1')
  admin.disconnect()
  const rows = []
  for (const clients of [1, replicas]) {
    rows.push({
      clients,
      pingRedisBenchmark: await redisBenchmark(port, clients, requests, ['-t', 'ping_mbulk']),
      evalshaRedisBenchmark: await redisBenchmark(port, clients, requests, ['evalsha', sha, '0']),
      pingIoredis: await ioredisLoop(url, clients, seconds, (c) => c.ping()),
      evalshaIoredis: await ioredisLoop(url, clients, seconds, (c) => c.evalsha(sha, 0)),
    })
  }
  return rows
}
