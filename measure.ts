const root = process.argv[2];
const { startTestService } = await import(`${root}/test/helpers/service.ts`);
const PLUGINS = [{ plugin: 'validate' }, { plugin: 'alias-resolve' }, { plugin: 'person-update' }, { plugin: 'decide' }, { plugin: 'sink-mongo', required: true }];
const heavyFlag = (id: number, count: number) => ({ id, key: `heavy-${id}`, active: true, filters: { groups: Array.from({ length: count }, (_, i) => ({ properties: [{ key: 'name', type: 'person', operator: 'regex', value: `(?<=x)(a+)+\\1b${'b'.repeat(i)}` }], rollout_percentage: 100 })) } });
const t = await startTestService({ plugins: PLUGINS });
const put = await t.admin('PUT', `/api/projects/${t.project.id}/flag_definitions`, { flags: Array.from({ length: 20 }, (_, i) => heavyFlag(10 + i, 10)) });
console.log('put', put.status);
const heavy = async () => { const s = performance.now(); const r = await fetch(`${t.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: t.project.api_token, distinct_id: 'a', person_properties: { name: `x${'a'.repeat(30)}c` } }) }); const b = await r.json(); return { ms: performance.now() - s, errors: b.errorsWhileComputingFlags, failed: Object.values(b.flags).filter((f: any) => f.failed).length }; };
for (let i = 0; i < 3; i++) {
  const p = heavy(); let done = false; p.then(() => (done = true)); const waits: number[] = [];
  while (!done) { const s = performance.now(); await fetch(`${t.url}/_health`); waits.push(performance.now() - s); }
  const r = await p; console.log(root, JSON.stringify(r), 'max health wait', Math.max(...waits).toFixed(0), 'ms');
}
// 4 concurrent heavy requests
{ const s = performance.now(); const ps = Array.from({ length: 4 }, heavy); let done = false; Promise.all(ps).then(() => (done = true)); const waits: number[] = [];
  while (!done) { const s2 = performance.now(); await fetch(`${t.url}/_health`); waits.push(performance.now() - s2); }
  await Promise.all(ps); console.log('4 concurrent: total', (performance.now() - s).toFixed(0), 'ms, max health wait', Math.max(...waits).toFixed(0)); }
await t.close();
