import path from 'node:path'
import type { RootDatabase } from 'lmdb'
import { Catalog } from '../engine/catalog.ts'
import { SILENT } from '../persistence/journal.ts'
import { catalogVersion, LmdbBackend, LmdbCatalogRecorder } from './catalog-store.ts'
import { openRoot, openStores, type LmdbStores } from './environment.ts'

function readOnly(): never {
  throw new Error('a reader thread does not write: this command must run on the writer thread')
}

/**
 * The data folder as a thread other than the writer's sees it: the same lmdb environment (shared
 * in the process, see openRoot) and a catalog read from its records, rebuilt whenever the writer
 * has changed them. Nothing here writes.
 */
export class LmdbReadView {
  private catalog: Catalog | undefined
  private version = -1
  private readonly stores: LmdbStores & { transactionNumber: number }

  private constructor(
    private readonly root: RootDatabase,
    compression: boolean,
  ) {
    this.stores = { ...openStores(root, compression), touched: readOnly, transactionNumber: 0 }
  }

  /** Opens `<dataDir>/lmdb`, which the writer thread must have opened (and migrated) first. */
  static open(dataDir: string, compression: boolean): LmdbReadView {
    return new LmdbReadView(openRoot(path.join(dataDir, 'lmdb')), compression)
  }

  /**
   * The catalog as of now, for one command: its reads see every commit made before this call
   * (write acknowledgements included) and nothing committed after, until the next call. lmdb-js
   * reads outside a transaction through one shared read transaction that it renews only on a
   * later tick; resetting it here moves it to the newest commit.
   */
  begin(): Catalog {
    this.root.resetReadTxn()
    this.stores.transactionNumber += 1
    const version = catalogVersion(this.stores.meta)
    if (!this.catalog || version !== this.version) {
      const catalog = new Catalog(SILENT, { newCollection: readOnly })
      new LmdbCatalogRecorder(this.stores).load(catalog, new LmdbBackend(this.stores), true)
      this.catalog = catalog
      this.version = version
    }
    return this.catalog
  }

  /** Leaves the shared environment (the writer thread closes it last). */
  async close(): Promise<void> {
    await this.root.close()
  }
}
