/**
 * Values by wasm address (an unsigned 32-bit number, never 0): the live
 * exports of one host, found by their struct's address when its deleter runs.
 *
 * A `Map` would do, but V8 replaces a small Map's backing store when it
 * shrinks or fills with deleted entries: with one export at a time (the
 * common case: export, the consumer releases, export again) that is a new
 * store on every delete, garbage that shows as GC pauses in long exchange
 * loops. This table is open-addressed (linear probing, deletion by backward
 * shift, no tombstones) over a `Uint32Array` of keys: adding and removing
 * allocate nothing; only growth does.
 */
export class AddressTable<T> {
  #keys = new Uint32Array(16);
  #values: (T | undefined)[] = new Array<T | undefined>(16).fill(undefined);
  #shift = 28; // 32 - log2(capacity)
  #size = 0;

  /** Number of addresses held. */
  get size(): number {
    return this.#size;
  }

  /** The home slot of `address`: Fibonacci hashing (malloc addresses differ mostly in their middle bits). */
  #home(address: number): number {
    return Math.imul(address, 0x9e3779b1) >>> this.#shift;
  }

  /** The value at `address`, or undefined. */
  get(address: number): T | undefined {
    const key = address >>> 0;
    const keys = this.#keys;
    const mask = keys.length - 1;
    for (let i = this.#home(key); ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === key) return this.#values[i];
      if (k === 0) return undefined;
    }
  }

  /** Hold `value` at `address` (non-zero), replacing what was there. */
  set(address: number, value: T): void {
    const key = address >>> 0;
    if (key === 0) throw new RangeError("AddressTable: address 0 is never a live block");
    if ((this.#size + 1) * 2 > this.#keys.length) this.#grow();
    const keys = this.#keys;
    const mask = keys.length - 1;
    let i = this.#home(key);
    while (keys[i] !== 0 && keys[i] !== key) i = (i + 1) & mask;
    if (keys[i] === 0) this.#size++;
    keys[i] = key;
    this.#values[i] = value;
  }

  /** Remove `address` and return its value (undefined if it held none). */
  delete(address: number): T | undefined {
    const key = address >>> 0;
    const keys = this.#keys;
    const values = this.#values;
    const mask = keys.length - 1;
    let i = this.#home(key);
    while (keys[i] !== key) {
      if (keys[i] === 0) return undefined;
      i = (i + 1) & mask;
    }
    const value = values[i];
    // Backward shift: move later entries of the probe run into the hole unless their home lies in (hole, j].
    for (let j = (i + 1) & mask; keys[j] !== 0; j = (j + 1) & mask) {
      const home = this.#home(keys[j]!);
      const stays = i < j ? i < home && home <= j : i < home || home <= j;
      if (!stays) {
        keys[i] = keys[j]!;
        values[i] = values[j];
        i = j;
      }
    }
    keys[i] = 0;
    values[i] = undefined;
    this.#size--;
    return value;
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    this.#keys = new Uint32Array(oldKeys.length * 2);
    this.#values = new Array<T | undefined>(oldKeys.length * 2).fill(undefined);
    this.#shift--;
    this.#size = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] !== 0) this.set(oldKeys[i]!, oldValues[i] as T);
    }
  }
}
