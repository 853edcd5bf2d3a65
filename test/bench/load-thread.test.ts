import { expect } from 'chai'
import { loadThread } from './load-thread.ts'

describe('bench load thread', () => {
  it('refuses a run, without hanging, when its sender module does not load', async () => {
    const run = loadThread(new URL('./no-such-sender.ts', import.meta.url), {})
    const outcome = await run({ seconds: 0.1, record: false }).then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    expect(outcome).to.match(/no-such-sender/)
    // and every later run too
    const again = await run({ seconds: 0.1, record: false }).then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    expect(again).to.equal(outcome)
  })
})
