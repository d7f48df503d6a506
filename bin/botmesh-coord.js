#!/usr/bin/env node
// The executable shim only: the CLI lives in commands/ and is built to dist/commands/cli.js.
import('../dist/commands/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/commands/cli.js')) {
    process.stderr.write('botmesh-coord: not built yet: run `npm install` (or `npm run build`) in the package folder\n')
    process.exit(70)
  }
  throw err
})
