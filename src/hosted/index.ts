/** What the app wires of the hosted pages. */
export { hostedRoutes } from './routes.js';
