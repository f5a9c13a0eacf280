/** What the app wires of the form feature. */
export { formRoutes } from './routes.js';
