import { z } from 'zod';
import { ResponseSubmitted } from './src/submissions/events.js';
const text = '{"response_id":"rsp_bench000000002","account_id":"acc_01M8BXMJZ3EJQ4P6YCFQ40C8QP","widget_id":"wgt_big","answers":{"rating":3,"comment":"Fine, thanks"},"metadata":{"browser":"Chrome","browser_version":"126.0","device":"Desktop","os":"Linux","ip_hash":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","language":"en","completion_time_ms":4200,"page_url":"https://shop.example/","page_title":"Shop"},"submitted_at":"2026-09-21T14:13:20.002Z"}';
const N = 300_000;
const objs = Array.from({ length: N }, () => JSON.parse(text));
const time = (name: string, f: (o: any) => unknown) => { const t = performance.now(); for (const o of objs) f(o); console.log(name, ((performance.now() - t) / N * 1000).toFixed(3), 'µs'); };
const answers = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
const answersObj = objs.map((o) => o.answers);
for (let r = 0; r < 2; r++) {
  time('whole', (o) => ResponseSubmitted.schema.safeParse(o));
  time('answers record', (o) => answers.safeParse(o.answers));
  time('metadata', (o) => (ResponseSubmitted.schema.shape.metadata as any).safeParse(o.metadata));
  time('JSON.parse', () => JSON.parse(text));
}
const v = z.union([z.string(), z.number(), z.boolean()]);
const catchall = z.object({}).catchall(v);
const scalar = (x: unknown) => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
const custom = z.custom<Record<string, string | number | boolean>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x) && Object.values(x).every(scalar));
for (let r = 0; r < 2; r++) {
  time('catchall', (o) => catchall.safeParse(o.answers));
  time('custom', (o) => custom.safeParse(o.answers));
}
console.log(catchall.safeParse({ a: 1, b: 'x', c: true }), catchall.safeParse({ a: null }).success, catchall.safeParse({ a: [] }).success);
