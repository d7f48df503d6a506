/**
 * Files the CLI writes replace only a regular file: a symlink or a FIFO at `snapshot -o`, at
 * `watch --record` or at the config file is refused with one line (exit 2) and left as it was;
 * `--force` replaces it (snapshot, config), a recording never replaces anything.
 */
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { redisUrl, uniquePrefix } from '../helpers/redis.js'
import { runCli, type CliResult } from '../helpers/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'botmesh-file-writes-'))
const prefix = uniquePrefix('fw')
const oneLine = (r: CliResult, pattern: RegExp) => {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr.trim().split('\n')).toHaveLength(1)
  expect(r.stderr).toMatch(pattern)
}

describe('files the CLI writes', () => {
  it('snapshot -o: a symlink or a FIFO is refused and left, --force replaces the symlink', async () => {
    const target = join(dir, 'precious.txt')
    writeFileSync(target, 'keep me')
    const link = join(dir, 'snap-link.json')
    symlinkSync(target, link)
    const fifo = join(dir, 'snap-fifo.json')
    execFileSync('mkfifo', [fifo])
    const live = ['--url', redisUrl(), '--prefix', prefix, 'snapshot']
    const [l, f] = await Promise.all([runCli([...live, '-o', link]), runCli([...live, '-o', fifo])])
    oneLine(l, /-o .*snap-link\.json: is a symbolic link, not a regular file: not replaced \(--force replaces it\)/)
    oneLine(f, /-o .*snap-fifo\.json: is a FIFO \(named pipe\), not a regular file/)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(lstatSync(fifo).isFIFO()).toBe(true)
    expect(readFileSync(target, 'utf8')).toBe('keep me')
    const forced = await runCli([...live, '-o', link, '--force'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(lstatSync(link).isFile()).toBe(true)
    expect(readFileSync(target, 'utf8')).toBe('keep me')
  })

  it('watch --record: a symlink is refused and left', async () => {
    const target = join(dir, 'precious-rec.txt')
    writeFileSync(target, 'keep me')
    const link = join(dir, 'rec-link.jsonl')
    symlinkSync(target, link)
    const r = await runCli(['--url', redisUrl(), '--prefix', prefix, 'watch', '--jsonl', '--count', '1', '--record', link])
    oneLine(r, /--record .*rec-link\.jsonl: the file exists/)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readFileSync(target, 'utf8')).toBe('keep me')
  })

  it('the config file: a symlink is refused and left, --force replaces it', async () => {
    const target = join(dir, 'dotfiles-config.json')
    const body = JSON.stringify({ 'current-context': null, contexts: {} })
    writeFileSync(target, body)
    const link = join(dir, 'config-link.json')
    symlinkSync(target, link)
    const env = { BOTMESH_CONFIG: link }
    const r = await runCli(['--prefix', 'shop', 'config', 'set-context', 'prod'], { env })
    oneLine(r, /config file .*config-link\.json: is a symbolic link, not a regular file: not replaced \(--force replaces it/)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readFileSync(target, 'utf8')).toBe(body)
    const forced = await runCli(['--prefix', 'shop', 'config', 'set-context', 'prod', '--force'], { env })
    expect(forced.code, forced.stderr).toBe(0)
    expect(lstatSync(link).isFile()).toBe(true)
  })
})
