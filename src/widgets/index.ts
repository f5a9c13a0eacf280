/** What the app wires of the widget feature. */
export { widgetRoutes } from './routes.js';
