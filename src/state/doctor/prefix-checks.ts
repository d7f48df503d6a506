/** The checks of the prefix: its schema record, its layout, prefixes nested on it, corrupt values. */
import { validatePrefix } from '../../keys.js'
import type { DoctorCheck, DoctorState, DoctorFinding } from './types.js'

/** No schema record: deleted or evicted under a prefix that holds state, or no replica ever started with this prefix. */
function noRecord(s: DoctorState): DoctorFinding {
  const survey = s.schema.survey
  if (survey?.used)
    return {
      id: 'schema',
      status: 'warn',
      detail: `no schema record under prefix ${s.prefix}, though it holds botmesh-coord state: ${s.schemaKey} was deleted or evicted`,
      fix: 'restart one replica: it writes the record when it starts (the replicas running now are not affected; the record tells readers the schema version and layout)',
    }
  const others = survey && survey.others.length ? survey.others : null
  return {
    id: 'schema',
    status: 'warn',
    detail: `no schema record under prefix ${s.prefix}: no replica has started with it${survey ? ' (no botmesh-coord key at all under it)' : ''}${others ? `; prefixes with botmesh-coord state here: ${others.join(', ')}` : ''}`,
    fix: others
      ? `pass the replicas' prefix: --prefix ${others[0]} (or BOTMESH_PREFIX)`
      : "check --prefix / BOTMESH_PREFIX (the replicas' prefix option)",
  }
}

const schema: DoctorCheck = {
  id: 'schema',
  title: 'the schema record: there, readable, understood',
  run(s) {
    const { record, corrupt, unread, problem } = s.schema
    if (unread)
      return [
        {
          id: 'schema',
          status: 'skip',
          detail: `could not read ${s.schemaKey}: ${unread.replace(/^Redis unreachable:\s*/, '')}`,
          fix: 'see the cluster check',
        },
      ]
    if (corrupt)
      return [
        {
          id: 'schema',
          status: 'fail',
          detail: corrupt,
          fix: `something other than botmesh-coord wrote ${s.schemaKey}; the replicas refuse to start on it (inspect it with redis-cli HGETALL)`,
        },
      ]
    if (!record) return [noRecord(s)]
    if (problem) return [{ id: 'schema', status: 'fail', detail: problem, fix: 'upgrade botmesh-coord' }]
    return [{ id: 'schema', status: 'ok', detail: `schema ${record.version}, first written with the ${record.layout} layout` }]
  },
}

const layout: DoctorCheck = {
  id: 'layout',
  title: 'one layout under the prefix',
  run(s) {
    const { record } = s.schema
    const { other, count, names } = s.strays
    if (record && record.layout !== s.layout)
      return [
        {
          id: 'layout',
          status: 'fail',
          detail: `prefix ${s.prefix} was first written with the ${record.layout} layout, read now with ${s.layout}${count ? `; ${count} key(s) of the ${other} layout found` : ''}`,
          fix: `give every replica and the CLI the same layout (--layout ${record.layout}); replicas with different layouts do not see each other's turns`,
        },
      ]
    if (!count) return [{ id: 'layout', status: 'ok', detail: `every key under the prefix uses the ${s.layout} layout` }]
    return [
      {
        id: 'layout',
        status: 'fail',
        detail: `${count} chat/lead/replica key(s) under prefix ${s.prefix} were written with the ${other} layout (e.g. ${names.slice(0, 3).join(', ')}): those replicas do not coordinate with the others`,
        fix: `configure layout: '${s.layout}' on every replica`,
      },
    ]
  },
}

/**
 * Prefixes nested on a kind of key (`shop:c` beside `shop`) are refused by this release, but one an
 * earlier release ran on may still hold state here, under this prefix's key names (`shop:c:c:chat:1`
 * is chat `c:chat:1` of `shop`), so an intervention here could change its turns. Found by its schema
 * record, read by name.
 */
const nestedPrefix: DoctorCheck = {
  id: 'nested-prefix',
  title: 'no state of a prefix nested on a kind of key',
  run(s) {
    const { looked, found } = s.nested
    if (!found.length)
      return [{ id: 'nested-prefix', status: 'ok', detail: `no prefix nested on a kind of key (${looked[0]!.prefix}, …) holds state here` }]
    const first = found[0]!
    let why = ''
    try {
      validatePrefix(first.prefix)
    } catch (err) {
      why = (err as Error).message
    }
    const segment = first.prefix.slice(s.prefix.length + 1)
    return [
      {
        id: 'nested-prefix',
        status: 'fail',
        detail: `prefix ${found.map((f) => `${f.prefix} (schema record ${f.schema})`).join(', ')} holds state here, under this prefix's key names (${first.prefix}'s chat <id> is ${first.prefix}:c:<id>, chat ${segment}:<id> of ${s.prefix} on the standalone layout): commands under ${s.prefix} count, list and can change it as their own`,
        fix: `${why}; until then, check a key that begins with ${segment}: before acting on it`,
      },
    ]
  },
}

const corrupt: DoctorCheck = {
  id: 'corrupt',
  title: 'values botmesh-coord can decode',
  run(s) {
    const { count, first, scanned } = s.corrupt
    if (!count) return [{ id: 'corrupt', status: 'ok', detail: `${scanned} keys scanned, none corrupt` }]
    return [
      {
        id: 'corrupt',
        status: 'fail',
        detail: `${count} corrupt value(s): ${first.map((k) => `${k.rawKey} (${k.error.replace(/^corrupt value at Redis key "[^"]*": /, '')})`).join(', ')}`,
        fix: 'inspect them with redis-cli; something other than botmesh-coord writes under this prefix',
      },
    ]
  },
}

export const PREFIX_CHECKS: DoctorCheck[] = [schema, layout, nestedPrefix, corrupt]
