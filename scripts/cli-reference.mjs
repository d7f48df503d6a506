#!/usr/bin/env node
// docs/cli-reference.md from the commands' own help (the built CLI in dist/), so the page cannot
// drift from what `--help` prints. `npm run docs` writes it; test/docs/cli-reference.test.ts checks
// that the committed page is what this prints.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const PAGE = join(ROOT, 'docs', 'cli-reference.md')
const WIDTH = 100

/** Every command's full help (examples included), in tree order. */
export async function cliReference() {
  process.env.BOTMESH_COORD_NO_MAIN = '1'
  const { buildProgram } = await import(pathToFileURL(join(ROOT, 'dist', 'commands', 'cli.js')).href)
  const program = buildProgram()
  const sections = []
  const visit = (cmd, path) => {
    let text = ''
    cmd.configureOutput({ writeOut: (s) => (text += s), getOutHelpWidth: () => WIDTH, getOutHasColors: () => false })
    cmd.outputHelp()
    sections.push({ path, text: text.trimEnd() })
    for (const sub of cmd.commands) if (!sub._hidden) visit(sub, `${path} ${sub.name()}`)
  }
  visit(program, 'botmesh-coord')
  const toc = sections.map((s) => `- [\`${s.path}\`](#${s.path.replace(/ /g, '-')})`).join('\n')
  return [
    '# CLI reference',
    '',
    "<!-- Generated from the commands' own --help by scripts/cli-reference.mjs (npm run docs): do not edit. -->",
    '',
    'Every command and option, exactly as `--help` prints them. The guide with real output is',
    '[cli.md](cli.md); targets, credentials and exit codes are in [operations.md](operations.md).',
    '',
    toc,
    '',
    ...sections.flatMap((s) => [`## ${s.path}`, '', '```text', s.text, '```', '']),
  ].join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(PAGE, await cliReference())
  process.stdout.write(`wrote ${PAGE}\n`)
}
