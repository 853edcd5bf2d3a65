import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * A new empty temporary folder for each test of the enclosing `describe`, handed to `use` before
 * the test and removed after it.
 */
export function folderPerTest(prefix: string, use: (folder: string) => void): void {
  let folder: string | undefined
  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), prefix))
    use(folder)
  })
  afterEach(() => {
    if (folder) rmSync(folder, { recursive: true, force: true })
    folder = undefined
  })
}
