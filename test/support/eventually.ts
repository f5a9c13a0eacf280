/**
 * Waits for a condition another process or a timer brings about, checking it
 * every `everyMs`. Answers false after `deadlineMs`: that bound only turns a
 * condition that never comes into a failure instead of a hung suite, so it is
 * far above any wait expected even on a loaded machine; how fast the
 * condition comes is a figure of the benchmark, not of the tests.
 */
export async function eventually(condition: () => boolean | Promise<boolean>, { everyMs = 20, deadlineMs = 60_000 } = {}): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
