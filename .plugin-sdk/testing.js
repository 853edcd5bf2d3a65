// `hedgerow/testing` under plain node. The suite runs the real service, which is TypeScript run
// by tsx (a dependency of hedgerow), so tsx's loader is registered before the suite is imported.
// That is fine in a test process; the service itself never imports this file.
import { register } from 'tsx/esm/api'

register()
const suite = await import('../test/conformance/index.ts')

export const sinkConformance = suite.sinkConformance
export const toStoredEvent = suite.toStoredEvent
