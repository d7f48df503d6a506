/**
 * The one place that wires ink to the terminal for a full-screen app: the alternate screen, a hidden
 * cursor, and their restoration however the app ends (q, Ctrl-C, SIGTERM, an exception).
 */
import type { ReactElement } from 'react'
import { render } from 'ink'
import { unguarded } from '../output/safe-text.js'

const ALT_ON = '\u001b[?1049h\u001b[H\u001b[?25l'
const ALT_OFF = '\u001b[?25h\u001b[?1049l'

export interface FullScreenOptions {
  stdout?: NodeJS.WriteStream
  stdin?: NodeJS.ReadStream
}

/** Render `element` full screen; resolves when it exits (useApp().exit(), Ctrl-C, SIGTERM/SIGHUP). */
export async function renderFullScreen(element: ReactElement, o: FullScreenOptions = {}): Promise<void> {
  // ink moves the cursor and clears lines: the terminal guard is off while it draws. What it draws
  // comes from the dashboard's source, whose strings are shown escaped (tui/safe-source.ts).
  return unguarded(() => drawFullScreen(element, o))
}

async function drawFullScreen(element: ReactElement, o: FullScreenOptions): Promise<void> {
  const stdout = o.stdout ?? process.stdout
  let restored = false
  const restore = () => {
    if (restored) return
    restored = true
    stdout.write(ALT_OFF)
  }
  stdout.write(ALT_ON)
  const app = render(element, { stdout, stdin: o.stdin ?? process.stdin, exitOnCtrlC: true, patchConsole: true })
  const onSignal = () => app.unmount()
  process.once('SIGTERM', onSignal)
  process.once('SIGHUP', onSignal)
  process.once('exit', restore)
  try {
    await app.waitUntilExit()
  } finally {
    process.off('SIGTERM', onSignal)
    process.off('SIGHUP', onSignal)
    process.off('exit', restore)
    app.cleanup()
    restore()
  }
}
