/** The Markdown pages of the package and their fenced code blocks. */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

export interface Snippet {
  page: string
  line: number
  lang: string
  code: string
}

/** Fenced code blocks of a Markdown page, with the line they start on. */
export function snippets(page: string): Snippet[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n')
  const out: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    out.push({ page, line: start + 1, lang: open[1] ?? '', code: body.join('\n') })
  }
  return out
}

/** Split a command line into words: single- or double-quoted words keep their spaces. */
export function words(line: string): string[] {
  const out: string[] = []
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!)
  return out
}
