// The types of scripts/made-once.js, for the tests' build (test/support/processes.ts).
export function newestSource(root: string, paths: readonly string[]): number;
export function madeFrom(stamp: string): number;
export function stampMade(stamp: string, sources: number): void;
export function takeLock(lock: string): boolean;
export function releaseLock(lock: string): void;
