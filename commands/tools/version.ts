/**
 * `version`: this client's version, the Redis server's (every master), and the key schema — the one
 * this release reads and the one recorded under the prefix. `--version` prints the client's alone,
 * without connecting.
 */
import { Command } from 'commander'
import { PACKAGE_VERSION, SCHEMA_VERSION, maskUrl } from '../lib.js'
import { openContext } from '../context.js'
import { jsonOut, outputFormat } from '../output/format.js'
import { reportError } from '../output/report.js'
import { describeError } from '../output/errors.js'
import { urlContext } from '../target.js'
import { EXIT } from '../output/exit-codes.js'

export function versionCommand(): Command {
  return new Command('version')
    .description("the client's version, the Redis server's, and the key schema (this release's and the prefix's)")
    .addHelpText('after', '\nExamples:\n  botmesh-coord version\n  botmesh-coord --prefix shop version -o json')
    .action(async (_o: unknown, cmd: Command) => {
      const client = { version: PACKAGE_VERSION, keySchema: SCHEMA_VERSION, node: process.version }
      const json = outputFormat(cmd) === 'json' || outputFormat(cmd) === 'jsonl'
      let ctx
      try {
        // The schema check is off: a schema newer than this release is what this command reports.
        ctx = await openContext(cmd, { schema: false })
        // Through the reader's source: a live server's masters, or the ones a snapshot recorded (--from).
        const source = ctx.reader.source
        const nodes = Array.from({ length: await source.nodeCount() }, (_, i) => i)
        const infos = await Promise.all(
          nodes.map((n) =>
            source
              .probe(n, 'info')
              .then((i) => /^redis_version:(.*)$/m.exec(i)?.[1]?.trim() ?? '?')
              .catch(() => null),
          ),
        )
        // A schema key that cannot be read (corrupt, wrong type, refused) is reported as such, not as
        // "none": the replicas refuse to start on it.
        const read = await ctx.reader.schema().then(
          (s) => ({ schema: s, problem: null }),
          (err: unknown) => ({ schema: null, problem: describeError(ctx!.explain(err), urlContext(cmd)) }),
        )
        const server = {
          url: maskUrl(ctx.url),
          layout: ctx.keys.layout,
          redisVersions: [...new Set(infos.filter((v): v is string => v !== null))],
          prefix: ctx.keys.prefix,
          keySchema: read.schema?.version ?? null,
          ...(read.problem ? { keySchemaError: read.problem.line } : {}),
        }
        const schemaText = read.problem
          ? `unreadable under prefix ${server.prefix}: ${read.problem.line}`
          : server.keySchema === null
            ? `none under prefix ${server.prefix} (no replica has started with it)`
            : `${server.keySchema} under prefix ${server.prefix}${server.keySchema > SCHEMA_VERSION ? ': newer than this release, upgrade botmesh-coord' : ''}`
        if (json) process.stdout.write(`${jsonOut('version', { client, server })}\n`)
        else {
          const lines = [
            `client      botmesh-coord ${client.version} (key schema ${client.keySchema}, Node ${client.node})`,
            `server      Redis ${server.redisVersions.join(', ') || '? (INFO refused)'} at ${server.url} (${server.layout}, ${nodes.length} master${nodes.length === 1 ? '' : 's'})`,
            `key schema  ${schemaText}`,
          ]
          process.stdout.write(`${lines.join('\n')}\n`)
        }
        process.exitCode = read.problem
          ? read.problem.code
          : server.keySchema !== null && server.keySchema > SCHEMA_VERSION
            ? EXIT.corrupt
            : EXIT.ok
      } catch (err) {
        if (!json)
          process.stdout.write(`client      botmesh-coord ${client.version} (key schema ${client.keySchema}, Node ${client.node})\n`)
        process.exitCode = reportError(cmd, ctx ? ctx.explain(err) : err, urlContext(cmd))
      } finally {
        await ctx?.close()
      }
    })
}
