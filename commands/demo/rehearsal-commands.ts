/**
 * The rehearsal sub-commands of `demo` (kill, freeze, start, hang, …): each one request to the running
 * demo over its control socket, its answer on stdout. Split from index.ts, which adds them to `demo`
 * in the order rehearsalCommands() returns them.
 */
import { Command, Option } from 'commander'
import { SCHEMA_VERSION } from '../lib.js'
import { globalOptions } from '../target.js'
import { cliDuration } from '../duration.js'
import { run } from '../run.js'
import { EXIT } from '../output/exit-codes.js'
import { request, type ControlReply, type ControlRequest } from './control.js'
import { PROVIDER } from './orchestrator.js'
import { demoPrefix } from './demo-target.js'

/** A rehearsal sub-command: one request to the running demo, its answer on stdout. */
function rehearsal(
  name: string,
  description: string,
  example: string,
  build: (args: string[], opts: Record<string, string>) => ControlRequest,
): Command {
  const cmd: Command = new Command(name).description(description).addHelpText('after', `\nExample:\n  botmesh-coord demo ${example}`)
  return cmd.action(
    run(
      async (_ctx, ...args: unknown[]) => {
        const positional = args
          .slice(0, -1)
          .filter((a) => a !== undefined)
          .map(String) // commander passes the arguments, then the options
        const reply = await request(demoPrefix(cmd), build(positional, cmd.opts()))
        if (globalOptions(cmd).json)
          process.stdout.write(`${JSON.stringify({ schemaVersion: SCHEMA_VERSION, kind: `demo-${name}`, ...reply })}\n`)
        else if (reply.state) printStatus(reply)
        else process.stdout.write(`${reply.message}\n`)
        return reply.ok ? EXIT.ok : EXIT.conflict
      },
      { connect: false },
    ),
  )
}

function printStatus(reply: ControlReply): void {
  const s = reply.state!
  process.stdout.write(`demo pid ${s.pid}, prefix ${s.prefix}, ${s.url}${s.redis ? ` (throwaway redis-server pid ${s.redis.pid})` : ''}\n`)
  for (const r of s.replicas) process.stdout.write(`  ${r.replicaId}  ${r.state.padEnd(8)} pid ${r.pid ?? '-'}  log ${r.log}\n`)
}

/** The rehearsals on a replica's process: kill, freeze, start. */
function processRehearsals(): Command[] {
  return [
    rehearsal('kill', 'SIGKILL a replica of the running demo', 'kill r2', ([replica]) => ({ cmd: 'kill', replica })).argument(
      '<replica>',
      'r1, r2, …',
    ),
    rehearsal('freeze', 'SIGSTOP a replica for a while, then SIGCONT', 'freeze r2 8s', ([replica, duration]) => {
      const ms = cliDuration(duration!, 'duration', { min: 100, max: 3_600_000 })
      return { cmd: 'freeze', replica, seconds: ms / 1000 }
    })
      .argument('<replica>', 'r1, r2, …')
      .argument('<duration>', 'how long, e.g. 8s'),
    rehearsal('start', 'start a stopped or killed replica again (new incarnation)', 'start r2 --flow-version 2', ([replica], o) => ({
      cmd: 'start',
      replica,
      ...(o.flowVersion ? { flowVersion: o.flowVersion } : {}),
    }))
      .argument('<replica>', 'r1, r2, …')
      .addOption(
        new Option(
          '--flow-version <v>',
          "run another version of the demo's flows (a rolling deploy of a changed flow: other fingerprints)",
        ),
      ),
  ]
}

/** The rehearsals on the transport, the lead and the chats, and `status`. */
function incidentRehearsals(): Command[] {
  return [
    rehearsal('close-transport', `close the transport of ${PROVIDER} on its leader`, 'close-transport', () => ({ cmd: 'close-transport' })),
    rehearsal('open-transport', 'reopen a closed transport', 'open-transport', () => ({ cmd: 'open-transport' })),
    rehearsal('yield', `ask the leader of ${PROVIDER} to step down`, 'yield --to r3', (_a, o) => ({ cmd: 'yield', to: o.to })).addOption(
      new Option('--to <replica>', 'only this standby may take the lead'),
    ),
    rehearsal(
      'hang',
      "a replica's handler of a chat's next message stops finishing while it holds the turn (released by chat release)",
      'hang r2 chat:1',
      ([replica, chat]) => ({ cmd: 'hang', replica, ...(chat ? { chat } : {}) }),
    )
      .argument('<replica>', 'r1, r2, …')
      .argument('[chat]', 'the chat (default chat:1, a hot one)'),
    rehearsal(
      'stale-write',
      "a replica writes a checkpoint without the turn's fence, on a chat it does not hold (a runtime that does not pass turn.fence)",
      'stale-write r2',
      ([replica, chat]) => ({ cmd: 'stale-write', replica, ...(chat ? { chat } : {}) }),
    )
      .argument('<replica>', 'the writer: r1, r2, …')
      .argument('[chat]', 'the chat (default: one with a checkpoint the writer holds no part of)'),
    rehearsal(
      'deploy-flow',
      'a rolling deploy of a changed flow: every replica restarts in turn running its next version (another fingerprint)',
      'deploy-flow faq',
      ([flow], o) => ({ cmd: 'deploy-flow', flow, ...(o.flowVersion ? { version: o.flowVersion } : {}) }),
    )
      .argument('<flow>', 'order or faq')
      .addOption(new Option('--flow-version <v>', "the flow's version deployed (default: the next one)")),
    rehearsal('status', 'replicas, pids and log files of the running demo', 'status', () => ({ cmd: 'status' })),
  ]
}

/** Every rehearsal sub-command, in the order `demo --help` lists them. */
export function rehearsalCommands(): Command[] {
  return [...processRehearsals(), ...incidentRehearsals()]
}
