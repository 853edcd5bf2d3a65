/**
 * Errors the embedded server answers with. Codes and code names are MongoDB's own
 * (src/mongo/base/error_codes.yml), so drivers and the service classify them exactly as they
 * would classify a real server's.
 */
export const ErrorCode = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  Unauthorized: 13,
  TypeMismatch: 14,
  InvalidLength: 16,
  IllegalOperation: 20,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  DollarPrefixedFieldName: 52,
  NotSingleValueField: 54,
  EmptyFieldName: 56,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  InvalidIdField: 53,
  CannotCreateIndex: 67,
  InvalidPipelineOperator: 168,
  CannotIndexParallelArrays: 171,
  OperationNotSupportedInTransaction: 263,
  NotImplemented: 238,
  NoReplicationEnabled: 76,
  CursorInUse: 292,
  InvalidIndexSpecificationOption: 197,
  BSONObjectTooLarge: 10334,
  Location17276: 17276,
  Location40324: 40324,
  Location15952: 15952,
  Location16410: 16410,
  IndexBuildAborted: 276,
  InterruptedAtShutdown: 11600,
  BackgroundOperationInProgressForNamespace: 12587,
  DuplicateKey: 11000,
  KeyTooLong: 17280,
} as const

export type ErrorCodeName = keyof typeof ErrorCode

const CODE_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]))

export class MongoServerError extends Error {
  readonly codeName: string
  constructor(
    readonly code: number,
    message: string,
    /** Extra reply fields (keyPattern/keyValue for duplicates, errorLabels, ...). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'MongoServerError'
    this.codeName = CODE_NAMES.get(code) ?? ''
  }

  /** The error as a command reply (`ok: 0`). */
  toReply(): Record<string, unknown> {
    const reply: Record<string, unknown> = { ok: 0, errmsg: this.message, code: this.code }
    if (this.codeName) reply.codeName = this.codeName
    return { ...reply, ...this.extra }
  }

  /** The error as one entry of a write command's `writeErrors`. */
  toWriteError(index: number): Record<string, unknown> {
    const entry: Record<string, unknown> = { index, code: this.code }
    if (this.codeName) entry.codeName = this.codeName
    const { errorLabels: _labels, ...rest } = this.extra
    return { ...entry, errmsg: this.message, ...rest }
  }
}

export const mongoError = (name: ErrorCodeName, message: string, extra?: Record<string, unknown>) =>
  new MongoServerError(ErrorCode[name], message, extra)

/** What MongoDB has but this server deliberately does not do: name it, never guess. */
export const notSupported = (what: string) =>
  mongoError(
    'NotImplemented',
    `${what} is not supported by the embedded MongoDB-compatible server; use a real MongoDB (MONGODB_URL) for it`,
  )

/**
 * Turns anything thrown while executing a command into a MongoServerError. mingo reports
 * problems as plain Errors with its own wording; the common ones are mapped onto the codes and
 * messages MongoDB uses, the rest become BadValue carrying mingo's message.
 */
export function toMongoError(error: unknown): MongoServerError {
  if (error instanceof MongoServerError) return error
  const message = error instanceof Error ? error.message : String(error)
  const mapped = mapMingoMessage(message)
  return mapped ?? mongoError('BadValue', message)
}

const MINGO_PATTERNS: Array<[RegExp, (m: RegExpMatchArray) => MongoServerError]> = [
  [
    /^unknown top level operator: (\$\w+)/,
    (m) =>
      mongoError(
        'BadValue',
        `unknown top level operator: ${m[1]}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.`,
      ),
  ],
  [/^unknown query operator (\$\w+)/, (m) => mongoError('BadValue', `unknown operator: ${m[1]}`)],
  [
    /^unregistered pipeline operator (\$\w+)/,
    (m) => new MongoServerError(ErrorCode.Location40324, `Unrecognized pipeline stage name: '${m[1]}'`),
  ],
  [
    /^accumulator '(\$\w+)' is not registered/,
    (m) => mongoError('InvalidPipelineOperator', `Unrecognized expression '${m[1]}'`),
  ],
  [
    /^Use of undefined variable: (\w+)/,
    (m) => new MongoServerError(ErrorCode.Location17276, `Use of undefined variable: ${m[1]}`),
  ],
]

function mapMingoMessage(message: string): MongoServerError | undefined {
  for (const [pattern, make] of MINGO_PATTERNS) {
    const match = message.match(pattern)
    if (match) return make(match)
  }
  return undefined
}
