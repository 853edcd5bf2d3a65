/**
 * core/v8-settings.ts in a process of its own. V8's test hooks (natives syntax) tell an object
 * literal's allocation site to pretenure, as V8 itself does once most of the site's objects have
 * lived long, and ask where the site's next object was made: in the old generation without the
 * settings (the control, which shows the probe sees pretenuring), in the young one with them.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect } from 'chai'

const ROOT = path.resolve(import.meta.dirname, '../..')

const PROBE = `
function make(i) { return { a: i, nested: { b: i } } }
%PrepareFunctionForOptimization(make);
for (let i = 0; i < 10; i++) make(i);
const marked = %PretenureAllocationSite(make(10));
gc({ type: 'minor' });
%PrepareFunctionForOptimization(make);
make(11);
%OptimizeFunctionOnNextCall(make);
console.log(JSON.stringify({ marked, young: %InYoungGeneration(make(12)) }));
`

function probe(withSettings: boolean): { marked: boolean; young: boolean } {
  const settings = withSettings ? `await import(${JSON.stringify(path.join(ROOT, 'core/v8-settings.ts'))});\n` : ''
  const args = [
    '--import',
    'tsx',
    '--allow-natives-syntax',
    '--expose-gc',
    '--input-type=module',
    '-e',
    settings + PROBE,
  ]
  return JSON.parse(execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' }))
}

describe('core/v8-settings', function () {
  this.timeout(30_000)

  it('the control: without the settings, a site told to pretenure makes its next object old', () => {
    expect(probe(false)).to.deep.equal({ marked: true, young: false })
  })

  it('turns allocation-site pretenuring off: the site is not marked and its objects stay young', () => {
    expect(probe(true)).to.deep.equal({ marked: false, young: true })
  })

  it('is the first module main.ts evaluates', () => {
    const main = readFileSync(path.join(ROOT, 'core/main.ts'), 'utf8')
    expect(main.match(/^import .*$/m)?.[0]).to.equal("import './v8-settings.ts'")
  })
})
