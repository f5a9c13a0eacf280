import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { App } from '../../src/app.js';
import { DASHBOARD_CSP } from '../../src/dashboard/pages.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core run on the page as it stands: its serious and critical violations, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"], preload: false }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

const PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>Edit — Dashboard</title><link rel="stylesheet" href="/dashboard/assets/app.css"><link rel="stylesheet" href="/dashboard/assets/editor.css"></head>' +
  '<body><main class="editor-page"><h1>Editor</h1><div id="app"></div></main><script type="module" src="/test-editor.js"></script></body></html>';

/**
 * Serves `/test-editor`: the dashboard's editor alone, under the dashboard's
 * Content-Security-Policy, mounted by `script` (a module served as
 * `/test-editor.js` that imports the dashboard's assets).
 */
export function serveEditorPage(app: App, script: string): void {
  app.get('/test-editor', async (_request, reply) => reply.type('text/html; charset=utf-8').header('content-security-policy', DASHBOARD_CSP).send(PAGE));
  app.get('/test-editor.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(script));
}
