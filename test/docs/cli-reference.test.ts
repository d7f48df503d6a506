/** docs/cli-reference.md is the commands' own --help: regenerate it with `npm run docs` when this fails. */
import { expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
// @ts-expect-error a plain .mjs script without types
import { cliReference, PAGE } from '../../scripts/cli-reference.mjs'

it('the committed CLI reference matches the help of the built commands (npm run docs)', async () => {
  const expected = (await cliReference()) as string
  expect(readFileSync(PAGE as string, 'utf8'), 'docs/cli-reference.md is stale: run `npm run docs`').toBe(expected)
})
