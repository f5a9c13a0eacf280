import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * The module beside `from` named `name`, as this code runs: `name.ts` from
 * the sources, `name.js` from the build.
 */
export function besideModule(from: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(from))}`, from);
}

/**
 * A worker thread running the module. From the sources (.ts, under tsx), a
 * worker thread does not inherit tsx's loader on Node 20, so a one-line
 * module registers it there first.
 */
export function startThread(module: URL, options: WorkerOptions): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); });`, { ...options, eval: true });
}
