import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** The turn-holder fixture (test/fixtures/turn-holder.mjs) as a child process, and its next JSON line. */
export function spawnTurnHolder(args: string[]): { child: ChildProcess; next: () => Promise<Record<string, unknown>> } {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../fixtures/turn-holder.mjs', import.meta.url)), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async () => JSON.parse(String((await lines.next()).value)) as Record<string, unknown>
  return { child, next }
}
