/**
 * Flag definitions cached in memory per project. Requests never wait on the database for
 * definitions once a project is cached: a background poll reads every cached project's version
 * document and group type mapping (two queries, whatever the number of projects) and reloads the
 * projects that changed. Changes made through this process's API reload the project before the
 * API answers, so the next request sees them; other processes see them after one poll interval.
 * A version poll works on every MongoDB (change streams need a replica set).
 */
import type { Logger } from 'pino'
import type { DefinitionsReader } from './store/definitions.ts'
import type { Generations } from './store/generations.ts'
import { ProjectDefinitions } from './project-definitions.ts'

export interface CacheOptions {
  pollIntervalMs: number
  maxProjects: number
  /** Log what each loaded version's flags compiled to (the decide option `printCompiledFlags`). */
  printCompiledFlags?: boolean
}

export class DefinitionsCache {
  private readonly entries = new Map<number, ProjectDefinitions>()
  private readonly inFlight = new Map<number, Promise<ProjectDefinitions>>()
  private timer: NodeJS.Timeout | undefined
  private polling = false
  private readonly listeners = new Set<(definitions: ProjectDefinitions) => void>()

  constructor(
    private readonly reader: DefinitionsReader,
    private readonly generations: Generations,
    private readonly options: CacheOptions,
    private readonly logger: Logger,
  ) {}

  /** The project's definitions: cached, or read now (concurrent first reads share one load). */
  /** The cached definitions when there are some, without waiting (the flags request path). */
  cached(projectId: number): ProjectDefinitions | undefined {
    return this.entries.get(projectId)
  }

  async get(projectId: number): Promise<ProjectDefinitions> {
    return this.entries.get(projectId) ?? this.inFlight.get(projectId) ?? this.reload(projectId)
  }

  /** Reads the project's definitions now, whatever is cached (after a write through the API). */
  reload(projectId: number): Promise<ProjectDefinitions> {
    const load = this.reader
      .load(projectId)
      .then((stored) => this.store(new ProjectDefinitions(projectId, stored)))
      .finally(() => {
        if (this.inFlight.get(projectId) === load) this.inFlight.delete(projectId)
      })
    this.inFlight.set(projectId, load)
    return load
  }

  /** Called with a cached project's definitions each time they change (not when first read). */
  onChange(listener: (definitions: ProjectDefinitions) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Keeps the newest: a slow read that started before a faster, later one must not win. */
  private store(definitions: ProjectDefinitions): ProjectDefinitions {
    const current = this.entries.get(definitions.projectId)
    if (current && current.version > definitions.version) return current
    if (this.options.printCompiledFlags && current !== definitions) {
      const { projectId: project, generation, version } = definitions
      this.logger.info(
        { project, generation, version, compiled: definitions.prepared.listing() },
        'flags: compiled definitions',
      )
    }
    const changed =
      current !== undefined &&
      (current.generation !== definitions.generation ||
        current.version !== definitions.version ||
        !current.sameGroupTypes({ ...definitions.groupTypeMapping }))
    if (!current && this.entries.size >= this.options.maxProjects) {
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(definitions.projectId, definitions)
    if (changed) for (const listener of this.listeners) listener(definitions)
    return definitions
  }

  /** One poll: reloads every cached project whose version or group type mapping changed. */
  async poll(): Promise<void> {
    if (this.polling || this.entries.size === 0) return
    this.polling = true
    try {
      const ids = [...this.entries.keys()]
      const [versions, mappings] = await Promise.all([
        this.generations.liveMany(ids),
        this.reader.groupTypeMappings(ids),
      ])
      const changed = ids.filter((id) => {
        const cached = this.entries.get(id)
        const live = versions.get(id) ?? { generation: 0, version: 0 }
        return (
          cached !== undefined &&
          (cached.version !== live.version ||
            cached.generation !== live.generation ||
            !cached.sameGroupTypes(mappings.get(id) ?? {}))
        )
      })
      await Promise.all(changed.map((id) => this.reload(id)))
    } catch (error) {
      this.logger.warn({ err: error }, 'flag definitions poll failed; serving cached definitions')
    } finally {
      this.polling = false
    }
  }

  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.options.pollIntervalMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}
