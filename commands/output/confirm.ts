import { createInterface } from 'node:readline'

export interface ConfirmIO {
  input?: NodeJS.ReadableStream & { isTTY?: boolean }
  output?: NodeJS.WritableStream
}

/** Is there a person to ask? (stdin is a terminal) */
export function canPrompt(io: ConfirmIO = {}): boolean {
  return Boolean((io.input ?? process.stdin).isTTY)
}

/**
 * Ask `question [y/N]` on the terminal and read one line: true only for y / yes (any case).
 * Anything else, an empty line, or the end of input is a no. The question goes to stderr, so stdout
 * stays data. Callers check canPrompt() first: without a terminal there is nobody to ask.
 */
export function confirm(question: string, io: ConfirmIO = {}): Promise<boolean> {
  const input = io.input ?? process.stdin
  const output = io.output ?? process.stderr
  return new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: false })
    let answered = false
    output.write(`${question} [y/N] `)
    rl.once('line', (line) => {
      answered = true
      rl.close()
      resolve(/^\s*y(es)?\s*$/i.test(line))
    })
    rl.once('close', () => {
      if (!answered) {
        output.write('\n')
        resolve(false)
      }
    })
  })
}
