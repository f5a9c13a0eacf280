import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type MessagePort, type WorkerOptions } from 'node:worker_threads';

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

/** What stopped a thread: the driver's errors cross from it as objects holding only their `code` (SQLITE_CANTOPEN), no message. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  if (typeof message === 'string') return message;
  if (typeof code === 'string') return code;
  return String(error);
}

/**
 * A thread's messages, taken one at a time in the order it sent them. A
 * thread that fails, or ends before the taker expects no more, makes the
 * next take throw, named as `what`.
 */
export function messagesOf<M>(worker: Worker, what: string): { next(): Promise<M> } {
  const queue: M[] = [];
  let failure: Error | undefined;
  let exited = false;
  let wake: (() => void) | undefined;
  worker.on('message', (message: M) => {
    queue.push(message);
    wake?.();
  });
  worker.on('error', (error: unknown) => {
    failure = new Error(`${what}: ${reasonOf(error)}`);
    wake?.();
  });
  worker.on('exit', () => {
    exited = true;
    wake?.();
  });
  return {
    async next() {
      while (queue.length === 0) {
        if (failure) throw failure;
        if (exited) throw new Error(`${what} stopped before its last message`);
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      return queue.shift()!;
    },
  };
}

/**
 * Sends to the thread's parent at most `ahead` messages before the parent
 * has taken the first: each message it posts back is one taken. With
 * `bytes`, messages are also held back while those not taken yet weigh that
 * much (each weighs what its sender says), one message always allowed: a
 * count alone bounds memory only as far as messages keep to one size.
 */
export function creditedSender<M>(port: MessagePort, ahead: number, bytes = Number.POSITIVE_INFINITY): (message: M, transfer?: ArrayBuffer[], weight?: number) => Promise<void> {
  /** The weights of the messages sent and not taken yet, oldest first. */
  const untaken: number[] = [];
  let held = 0;
  let wake: (() => void) | undefined;
  port.on('message', () => {
    held -= untaken.shift() ?? 0;
    wake?.();
  });
  return async (message, transfer = [], weight = 0) => {
    while (untaken.length >= ahead || (untaken.length > 0 && held + weight > bytes)) await new Promise<void>((resolve) => (wake = resolve));
    untaken.push(weight);
    held += weight;
    port.postMessage(message, transfer);
  };
}
