/** What the app wires of the poll feature. */
export { pollRoutes } from './routes.js';
