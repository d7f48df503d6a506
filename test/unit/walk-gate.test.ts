/**
 * The walks of the keyspace have at most WALK_IN_FLIGHT commands at the servers at a time, every master
 * together (walkCommand in src/state/read-script.ts): the others wait in the order they were asked
 * for, and a command that fails lets the next one go.
 */
import { describe, expect, it } from 'vitest'
import { WALK_IN_FLIGHT, walkCommand } from '../../src/state/read-script.js'

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
  it(`sends at most ${WALK_IN_FLIGHT} commands at once, the rest in order as earlier ones answer`, async () => {
    const c = commands(7)
    const answers = Array.from({ length: c.n }, (_, i) => walkCommand(c.run(i)))
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
    void walkCommand(again.run(0))
    void walkCommand(again.run(1))
    await settle()
    expect(again.sent).toEqual([0, 1])
    again.finish[0]!()
    again.finish[1]!()
  })
})
