/**
 * Files the CLI writes (`snapshot -o`, the config file): what is at the path is replaced only when it
 * is a regular file, or nothing. A symlink, a FIFO, a device node, a socket or a directory there is
 * refused with one line (exit 2) unless `--force`: renaming a new file over it would silently break
 * whatever it was (a link into a dotfiles tree, a pipe another process reads).
 */
import { lstatSync, type Stats } from 'node:fs'
import { CliError } from './errors.js'
import { EXIT } from './exit-codes.js'

function kind(s: Stats): string {
  if (s.isSymbolicLink()) return 'a symbolic link'
  if (s.isFIFO()) return 'a FIFO (named pipe)'
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device node'
  if (s.isSocket()) return 'a socket'
  if (s.isDirectory()) return 'a directory'
  return 'not a regular file'
}

/** Refuse (exit 2) when `path` holds something other than a regular file, unless `force`. `what` names the option. */
export function checkReplaceable(path: string, what: string, force = false, hint = ' (--force replaces it)'): void {
  let s: Stats
  try {
    s = lstatSync(path)
  } catch {
    return // nothing there (or not reachable: the write itself says why)
  }
  if (s.isFile() || force) return
  throw new CliError(`${what} ${path}: is ${kind(s)}, not a regular file: not replaced${hint}`, EXIT.usage)
}
