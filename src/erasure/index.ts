/** What the app wires of erasure; the services build its process from process.ts. */
export { erasureRoutes } from './routes.js';
