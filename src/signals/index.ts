/** What the app wires of the display and start counts. */
export { signalRoutes } from './routes.js';
