import { encode } from '../bson/codec.ts'
import { mongoError, notSupported, toMongoError } from '../errors.ts'
import type { IncomingCommand } from '../wire/messages.ts'
import type { CommandContext, CommandHandler } from './context.ts'
import { handshakeCommands } from './handshake.ts'
import { indexCommands } from './indexes.ts'
import { namespaceCommands } from './namespaces.ts'
import { readCommands } from './reads.ts'
import { writeCommands } from './writes.ts'
import { countCommand, countCommandsNamed } from './counters.ts'

const COMMANDS = new Map<string, CommandHandler>(
  Object.entries({
    ...handshakeCommands,
    ...readCommands,
    ...writeCommands,
    ...namespaceCommands,
    ...indexCommands,
  }),
)

countCommandsNamed([...COMMANDS.keys()])

/** Commands that change data: their reply waits for the log (see Durability in the docs). */
export const WRITE_COMMANDS = new Set([
  'insert',
  'update',
  'delete',
  'findAndModify',
  'create',
  'drop',
  'dropDatabase',
  'renameCollection',
  'createIndexes',
  'dropIndexes',
  'collMod',
])

/** Commands of features the server deliberately lacks: a clear error, not "no such command". */
const UNSUPPORTED = new Map<string, string>([
  ['commitTransaction', 'multi-document transactions'],
  ['abortTransaction', 'multi-document transactions'],
  ['mapReduce', 'mapReduce'],
  ['createUser', 'authentication and users'],
  ['saslStart', 'authentication'],
  ['authenticate', 'authentication'],
  ['replSetInitiate', 'replica set configuration'],
  ['shardCollection', 'sharding'],
  ['createSearchIndexes', 'search indexes'],
  ['bulkWrite', 'the bulkWrite command (MongoDB 8.0)'],
])

export function commandName(cmd: IncomingCommand): string {
  const name = Object.keys(cmd.body)[0]
  if (name === undefined) throw mongoError('FailedToParse', 'Command document is empty')
  return name
}

/** Runs one command and returns its encoded reply (errors become `ok: 0` replies). */
export async function runCommand(cmd: IncomingCommand, ctx: CommandContext): Promise<Uint8Array> {
  try {
    const name = commandName(cmd)
    if (cmd.body.autocommit === false || cmd.body.startTransaction === true)
      throw notSupported('multi-document transactions')
    const handler = COMMANDS.get(name)
    if (!handler) {
      const feature = UNSUPPORTED.get(name)
      if (feature) throw notSupported(feature)
      throw mongoError('CommandNotFound', `no such command: '${name}'`)
    }
    countCommand(name) // known names only: the counters stay bounded
    const reply = await handler(cmd, ctx)
    return reply instanceof Uint8Array ? reply : encode(reply)
  } catch (error) {
    return encode(toMongoError(error).toReply())
  }
}
