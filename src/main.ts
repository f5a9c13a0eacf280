import { addressesAt } from './http/about.js';
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './app.js';
import { embedScript } from './embed/script.js';
import { forgetAddress, recordAddress } from './infra/address.js';
import { createLogger, openServices } from './services.js';

/** D2: a listen that fails because of HOST or PORT says which, in one line. */
function listenFailure(error: unknown, config: { HOST: string; PORT: number }): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
    return `invalid configuration: HOST ${JSON.stringify(config.HOST)} is not an address of this machine (${String(code)})`;
  }
  if (code === 'EADDRINUSE') return `invalid configuration: PORT ${config.PORT} is in use on ${config.HOST}`;
  if (code === 'EACCES') return `invalid configuration: PORT ${config.PORT} needs privileges this process does not have`;
  return undefined;
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const logger = createLogger(config);
  const services = await openServices(config, { logger });
  await services.start();
  const app = await buildApp(services);
  // Bundled once here, so no visitor waits for it.
  embedScript();

  let closing = false;
  let recorded: string | undefined;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    try {
      if (recorded) forgetAddress(config.DATA_DIR, recorded);
      await app.close();
      await services.close();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  let listening: string;
  try {
    listening = await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    const reason = listenFailure(error, config);
    if (!reason) throw error;
    process.stderr.write(`${reason}\n`);
    await services.close().catch(() => undefined);
    process.exit(1);
  }
  const base = config.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? listening;
  // The admin CLI reads it for the links it prints (its own environment may lack this PORT).
  if (recordAddress(config.DATA_DIR, base)) recorded = base;
  const at = addressesAt(base);
  // The line a newcomer reads first: where each part of the service is.
  const where =
    config.ROLE === 'projector'
      ? { health: at.health, ready: at.ready }
      : { docs: at.docs, api_reference: at.api_reference, openapi: at.openapi, embed_script: at.embed_script, dashboard: at.dashboard, health: at.health, ready: at.ready };
  const parts = config.ROLE === 'projector' ? `health ${at.health}, readiness ${at.ready}` : `API docs ${at.docs}, OpenAPI ${at.openapi}, embed script ${at.embed_script}, dashboard ${at.dashboard}, health ${at.health}`;
  // A point-in-time copy says so first: its answers are of its moment, and it takes no writes.
  const copy = services.readOnly ? `a read-only copy as of ${services.readOnly.until}, ` : '';
  // Said at start-up, so a laptop's owner knows where the link of their first sign-in will be.
  const mail = services.mailer.kind === 'log' ? '; mail: SMTP_URL is unset, so sign-in links and other mail are written to this log' : `; mail: sent through SMTP as ${config.MAIL_FROM}`;
  logger.info(
    { role: config.ROLE, mail: services.mailer.kind, events: services.events.kind, read_models: services.readModels.kind, data_dir: config.DATA_DIR, url: base, ...(services.readOnly ? { read_only_as_of: services.readOnly.until } : {}), ...where },
    `feedback service ready at ${base}: ${copy}${parts}${mail}`,
  );

}

main().catch((error: unknown) => {
  process.stderr.write(`could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
