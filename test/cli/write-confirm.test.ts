import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { canPrompt, confirm } from '../../commands/output/confirm.js'

const io = (answer: string | null) => {
  const input = Object.assign(new PassThrough(), { isTTY: true })
  const output = new PassThrough()
  let asked = ''
  // Answered once the question is out, as a person would (after the writer's turn of the event loop).
  output.on('data', (d: Buffer) => {
    if (asked === '') setImmediate(() => (answer === null ? input.end() : input.write(answer)))
    asked += d.toString()
  })
  return { input, output, asked: () => asked }
}

describe('confirm (the y/N prompt of write commands)', () => {
  it('only y or yes confirms; anything else, or the end of input, is a no', async () => {
    for (const [answer, want] of [
      ['y\n', true],
      ['YES\n', true],
      ['\n', false],
      ['n\n', false],
      ['sure\n', false],
      [null, false],
    ] as const) {
      const t = io(answer)
      expect(await confirm('release the turn of chat:42?', t), String(answer)).toBe(want)
      expect(t.asked()).toMatch(/release the turn of chat:42\? \[y\/N\]/)
    }
  })
  it('asks only on a terminal', () => {
    expect(canPrompt({ input: Object.assign(new PassThrough(), { isTTY: true }) })).toBe(true)
    expect(canPrompt({ input: new PassThrough() })).toBe(false)
  })
})
