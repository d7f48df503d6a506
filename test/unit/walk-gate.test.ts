/**
 * The walks of the keyspace have at most WALK_IN_FLIGHT commands at the servers of one host at a time
 * (walkCommand in src/state/read-script.ts): the others wait in the order they were asked for, a
 * command that fails lets the next one go, a server on another host does not wait behind them, and
 * one that stopped answering does not hold the others of its host.
 * The clients are ioredis clients that never connect (lazyConnect): only their addresses are read.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { WALK_IN_FLIGHT, WALK_STALL_MS, walkCommand } from '../../src/state/read-script.js'

const client = (host: string, port: number) => new Redis({ host, port, lazyConnect: true })
// Two masters on one host, one on another.
const first = client('10.1.0.1', 7000)
const second = client('10.1.0.1', 7001)
const elsewhere = client('10.1.0.2', 7000)
afterAll(() => [first, second, elsewhere].forEach((c) => c.disconnect()))

/** A command that answers (or fails) when the test says so, recording when it was sent. */
function commands(n: number) {
  const sent: number[] = []
  const finish: Array<(fail?: boolean) => void> = []
  let atServer = 0
  let most = 0
  const run = (i: number) => () =>
    new Promise<number>((resolve, reject) => {
      sent.push(i)
      most = Math.max(most, ++atServer)
      finish[i] = (fail) => {
        atServer--
        if (fail) reject(new Error(`command ${i} failed`))
        else resolve(i)
      }
    })
  return { sent, finish, run, most: () => most, n }
}

const settle = () => new Promise((r) => setTimeout(r, 0))

describe('walkCommand', () => {
  it(`sends at most ${WALK_IN_FLIGHT} commands at once to the servers of a host, the rest in order as earlier ones answer`, async () => {
    const c = commands(7)
    const answers = Array.from({ length: c.n }, (_, i) => walkCommand(i % 2 ? first : second, c.run(i)))
    await settle()
    expect(c.sent).toEqual([0, 1])
    c.finish[1]!()
    await settle()
    expect(c.sent).toEqual([0, 1, 2])
    // A failure frees its place as an answer does, and reaches its caller.
    c.finish[0]!(true)
    await expect(answers[0]).rejects.toThrow('command 0 failed')
    expect(c.sent).toEqual([0, 1, 2, 3])
    for (let i = 2; i < c.n; i++) {
      c.finish[i]!()
      await settle()
    }
    expect(await Promise.all(answers.slice(1))).toEqual([1, 2, 3, 4, 5, 6])
    expect(c.sent).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(c.most()).toBe(WALK_IN_FLIGHT)
    // Once every command answered, the next ones go at once again.
    const again = commands(2)
    void walkCommand(first, again.run(0))
    void walkCommand(first, again.run(1))
    await settle()
    expect(again.sent).toEqual([0, 1])
    again.finish[0]!()
    again.finish[1]!()
  })

  it('does not hold a server on another host behind them', async () => {
    const here = commands(3)
    const there = commands(1)
    for (let i = 0; i < here.n; i++) void walkCommand(first, here.run(i))
    void walkCommand(elsewhere, there.run(0))
    await settle()
    expect(here.sent).toEqual([0, 1])
    expect(there.sent).toEqual([0])
    for (let i = 0; i < here.n; i++) {
      here.finish[i]!()
      await settle()
    }
    there.finish[0]!()
  })

  it(`frees the place of a command unanswered for ${WALK_STALL_MS} ms; that connection's next commands do not wait`, async () => {
    const silent = commands(3)
    const other = commands(1)
    void walkCommand(first, silent.run(0))
    void walkCommand(first, silent.run(1))
    void walkCommand(second, other.run(0))
    await settle()
    expect(silent.sent).toEqual([0, 1])
    expect(other.sent).toEqual([])
    await new Promise((r) => setTimeout(r, WALK_STALL_MS + 50))
    // The silent server's two places are free: the other server's command goes, and the silent
    // connection's next one goes at once, without a place.
    expect(other.sent).toEqual([0])
    void walkCommand(first, silent.run(2))
    await settle()
    expect(silent.sent).toEqual([0, 1, 2])
    other.finish[0]!()
    for (let i = 0; i < silent.n; i++) silent.finish[i]!()
    await settle()
    // Answered again: it waits for a place like any other.
    const after = commands(3)
    for (let i = 0; i < after.n; i++) void walkCommand(first, after.run(i))
    await settle()
    expect(after.sent).toEqual([0, 1])
    for (let i = 0; i < after.n; i++) {
      after.finish[i]!()
      await settle()
    }
  })
})
