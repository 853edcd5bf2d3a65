/**
 * V8 settings of the service's processes. main.ts imports this module first, so they are set
 * before any other module is evaluated and any function is optimised.
 *
 * Allocation-site pretenuring is off. V8 watches each place that allocates objects (an object or
 * array literal) and, once most of its objects outlive the young generation, allocates that
 * place's objects in the old generation from then on. A service alternates workloads: in a burst
 * of capture batches, request-scoped objects live for the milliseconds a batch awaits its writes,
 * so places shared by every request (Koa's context, the router, the HTTP kit) are tenured. In the
 * flags requests that follow, those objects, dead a millisecond later, go straight to the old
 * generation, keep the young objects they point to alive through scavenges, and fill the old
 * generation until full collections of 10-25 ms come every few seconds: the flags p99 rose tenfold
 * after capture (docs/performance.md). V8 takes the decision back only when a full collection
 * finds almost nothing alive, which a service holding caches and GeoIP data never sees.
 */
import v8 from 'node:v8'

v8.setFlagsFromString('--no-allocation-site-pretenuring')
