/**
 * A running `botmesh-coord exporter` (the built binary as a subprocess) on a free loopback port:
 * started with `--listen 127.0.0.1:0`, its address read from the line it prints, stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { BIN } from './cli.js'
import { until } from './wait.js'

export interface ExporterProc {
  readonly url: string
  readonly pid: number
  get(path: string): Promise<{ status: number; text: string }>
  /** One sample of /metrics: the value of a series (`name{labels}` exactly as printed), or undefined. */
  sample(series: string): Promise<number | undefined>
  stop(): Promise<void>
}

/** `global`: options before the command (--url, --prefix); `own`: the exporter's (--scrape-timeout). */
export async function startExporter(global: string[], own: string[] = []): Promise<ExporterProc> {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...global, 'exporter', '--listen', '127.0.0.1:0', ...own], {
    env: { ...process.env, NO_COLOR: '1', REDIS_URL: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const seen = await until(
    () => (child.exitCode !== null ? { exited: child.exitCode } : /serving (http:\/\/[^/\s]+)\/metrics/.exec(stderr)?.[1]),
    20_000,
    'the exporter to listen',
    20,
  )
  if (typeof seen !== 'string') throw new Error(`the exporter exited (${seen.exited}): ${stderr}`)
  const base = seen
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`)
    return { status: res.status, text: await res.text() }
  }
  return {
    url: base,
    pid: child.pid!,
    get,
    sample: async (series) => {
      const { text } = await get('/metrics')
      const line = text.split('\n').find((l) => l.startsWith(`${series} `))
      return line === undefined ? undefined : Number(line.slice(series.length + 1))
    },
    stop: async () => {
      if (child.exitCode === null) {
        process.kill(child.pid!, 'SIGTERM')
        await exited
      }
    },
  }
}
