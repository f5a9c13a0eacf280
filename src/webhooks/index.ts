/** What the app wires of webhooks; the services build the dispatcher from dispatcher.ts. */
export { webhookRoutes } from './routes.js';
