/**
 * A Map of at most `capacity` entries: adding a new key to a full map first drops the oldest added one.
 * For the service's in-memory caches, whose worst case must stay bounded whatever callers ask for.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly capacity: number;

  constructor(capacity: number) {
    super();
    if (!(capacity >= 1)) throw new RangeError(`capacity must be at least 1, got ${capacity}`);
    this.capacity = capacity;
  }

  override set(key: K, value: V): this {
    if (this.size >= this.capacity && !this.has(key)) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}
