/**
 * `demo`: the command and its options and help. Running it is run-demo.ts (where it runs:
 * demo-target.ts); its rehearsal sub-commands are rehearsal-commands.ts.
 */
import { Command, Option } from 'commander'
import { durationOption } from '../duration.js'
import { run } from '../run.js'
import { rehearsalCommands } from './rehearsal-commands.js'
import { runDemo, type DemoFlags } from './run-demo.js'

export { REHEARSAL, type DemoDashboardOptions } from './run-demo.js'

/** `demo`: real replicas on a local Redis, the dashboard on them, and incident rehearsal. */
export function demoCommand(): Command {
  const demo: Command = new Command('demo')
    .description('run real replicas on a local Redis (started if none) with the dashboard: a first look, and incident rehearsal')
    .addOption(new Option('--replicas <n>', 'replica processes').default('3'))
    .addOption(new Option('--chats <n>', 'chats the traffic goes to (the first tenth are hot)').default('20'))
    .addOption(new Option('--rate <n>', 'inbound messages per second, over all replicas').default('10'))
    .addOption(
      durationOption('--lease-ms <duration>', 'lease length of every replica (failover time)', { min: 300, default: '5s', timer: true }),
    )
    .addOption(
      durationOption('--provider-down-ms <duration>', 'a leader whose transport stays closed this long yields', {
        min: 300,
        default: '5s',
        timer: true,
      }),
    )
    .addOption(
      durationOption('--turn-wait <duration>', "how long a replica's message waits for its chat's turn (turnWaitMs; default 30s)", {
        min: 500,
        timer: true,
      }),
    )
    .addOption(
      new Option(
        '--rehearsal',
        'settings slow enough to follow the runbook by hand: lease 30s, provider down 1m, 1 msg/s, turn wait 1m, checkpoints 1h, markers 2h',
      ),
    )
    .addOption(durationOption('--duration <duration>', 'stop by itself after this long (scripts), e.g. 40s', { min: 1 }))
    .addOption(new Option('--no-tui', 'no dashboard: one summary line per second (with --json: one JSON object per line)'))
    .addHelpText(
      'after',
      `
Examples:
  botmesh-coord demo
  botmesh-coord demo --rehearsal
  botmesh-coord demo --no-tui --lease-ms 3s --duration 40s
  botmesh-coord --url redis://127.0.0.1:6380 demo --replicas 5 --rate 50

Without --url / REDIS_URL / --context it starts a redis-server of its own on a free loopback port (no
persistence) and stops it on exit. The prefix is "demo" unless --prefix is given. It writes a context
(demo) so that the commands it prints reach it: --context demo. Rehearse from another terminal:
  botmesh-coord demo hang r2 [chat]       r2's handler of the chat's next message stops finishing while it holds the turn
  botmesh-coord demo kill r2              SIGKILL a replica: its leases expire, its chats move
  botmesh-coord demo freeze r2 8s         SIGSTOP for 8 s, then SIGCONT
  botmesh-coord demo start r2             start it again: same replicaId, new incarnation
  botmesh-coord demo close-transport      the leader's transport closes: it yields after --provider-down-ms
  botmesh-coord demo open-transport       it reopens (before the yield, nothing happens)
  botmesh-coord demo yield [--to r3]      an operator's yield request (CoordinationAdmin.requestYield)
  botmesh-coord demo stale-write r2       r2 writes a checkpoint without the turn's fence on a chat it does not hold
  botmesh-coord demo deploy-flow faq      a rolling deploy of a changed flow (old checkpoints: not resumed)
  botmesh-coord demo status               replicas, pids and log files of the running demo`,
    )
  demo.action(run(async (_ctx, flags: DemoFlags) => runDemo(demo, flags), { connect: false }))

  for (const cmd of rehearsalCommands()) demo.addCommand(cmd)
  return demo
}
