/** Erasure is a process, not a route: the services build it from process.ts; the routes that ask for it record its events. */
export { ErasureProcess } from './process.js';
