import { expect } from 'chai'
import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { threadCpuMillis } from '../../../../../plugins/decide/evaluator/properties/thread-cpu.ts'

const processCpuMillis = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

describe('threadCpuMillis', () => {
  // Both tests spin until the spinning thread has had the CPU time they need, not for a wall time:
  // on a loaded machine a 40 ms spin got 2 ms of CPU.
  it("grows with this thread's own work", () => {
    const before = threadCpuMillis()
    const started = performance.now()
    while (threadCpuMillis() - before <= 20 && performance.now() - started < 10_000) {}
    expect(threadCpuMillis() - before).to.be.greaterThan(20)
  })

  it("does not count another thread's work, which the process's CPU time does (a descheduled match looked busy)", async function () {
    if (!existsSync('/proc/thread-self/schedstat')) this.skip()
    const done = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(
      `const { workerData } = require('node:worker_threads')
       const { readFileSync } = require('node:fs')
       const ownCpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
       const before = ownCpuMs()
       const started = performance.now()
       while (ownCpuMs() - before < 100 && performance.now() - started < 10_000) {}
       Atomics.store(workerData, 0, 1)
       Atomics.notify(workerData, 0)`,
      { eval: true, workerData: done },
    )
    await new Promise((resolve) => worker.once('online', resolve))
    const thread = threadCpuMillis()
    const whole = processCpuMillis()
    // this thread sleeps while the worker spins
    Atomics.wait(done, 0, 0, 15_000)
    const threadUsed = threadCpuMillis() - thread
    const processUsed = processCpuMillis() - whole
    await worker.terminate()
    expect(Atomics.load(done, 0)).to.equal(1)
    expect(processUsed, 'the worker really spun').to.be.greaterThan(50)
    expect(threadUsed).to.be.lessThan(20)
  })
})
