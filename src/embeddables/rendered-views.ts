/**
 * The public views of published objects as they were sent, by object, each
 * with the version of the object it shows; bounded by a byte budget, past
 * which the least recently used go. A form's view can weigh half a megabyte,
 * and reading, checking and writing it out again for every visitor would let
 * one tenant's popular (or hammered) large form take the event loop from
 * everyone else's requests.
 */
export class RenderedViews {
  private readonly entries = new Map<string, { version: string; body: string }>();
  private total = 0;

  constructor(readonly budgetBytes: number) {}

  /** The view sent for this version of the object, which becomes the most recently used. */
  get(id: string, version: string): string | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.version !== version) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.body;
  }

  /** Keeps the view of one version of the object in place of any other version's. */
  set(id: string, version: string, body: string): void {
    this.drop(id);
    // A string's length stands in for its weight: one byte a character for most views, at most two.
    if (body.length > this.budgetBytes) return;
    this.entries.set(id, { version, body });
    this.total += body.length;
    for (const oldest of this.entries.keys()) {
      if (this.total <= this.budgetBytes) break;
      this.drop(oldest);
    }
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.total -= entry.body.length;
  }
}
