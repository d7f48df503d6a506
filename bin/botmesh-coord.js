#!/usr/bin/env node
// The executable shim only: the CLI lives in commands/ and is built to dist/commands/cli.js.

// ink draws only the final frame when it believes it runs in CI (the CI variable, read when ink is
// loaded). The dashboard on a real terminal is interactive whatever the environment says.
if (process.stdout.isTTY && process.argv.slice(2).some((a) => a === 'watch' || a === 'demo')) {
  delete process.env.CI
  delete process.env.CONTINUOUS_INTEGRATION
}

import('../dist/commands/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/commands/cli.js')) {
    process.stderr.write('botmesh-coord: not built yet: run `npm install` (or `npm run build`) in the package folder\n')
    process.exit(70)
  }
  throw err
})
