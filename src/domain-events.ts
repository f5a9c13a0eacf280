import { accountEvents, type AccountEvent } from './accounts/events.js';
import { EventCatalog } from './event-catalog.js';

/** Every event the service writes, by feature. */
export type DomainEvent = AccountEvent;

export const catalog = new EventCatalog<DomainEvent>([...accountEvents]);
