/**
 * Who keeps a tensor's bytes alive: the {@link Ownership} of a producer's
 * managed struct (or of a GPU pointer with a release hook), counted so the
 * release runs exactly once, and the FinalizationRegistry safety net for
 * owning Tensors dropped without dispose.
 */
import type { WasmHost } from "../dlpack/index.js";
import { once, Once, type Release } from "../release.js";

/**
 * The holders of one piece of memory (docs/ownership.md): a count, and the
 * producer's release, a {@link Once} run when the last holder releases. The
 * counting implementation of {@link Release}, behind a Tensor's
 * {@link Ownership} (the Tensor, its exports and `retain()`s) and the
 * adapters' `BufferLease` (the Tensors over a framework's buffer).
 */
export class Holders implements Release {
  #count: number;
  readonly #last: Once;

  /** `initial` holders (a Tensor starts as its own first holder; a lease with none). */
  constructor(onLastRelease: () => void, initial = 1) {
    this.#last = new Once(onLastRelease);
    this.#count = initial;
  }

  /** Holders right now. */
  get count(): number {
    return this.#count;
  }

  /** True once the last holder released and the producer's release ran. */
  get released(): boolean {
    return this.#last.released;
  }

  /** One more holder, whose caller releases it with exactly one {@link release} (`hold()` returns that release). */
  add(): void {
    this.#count++;
  }

  /** One holder fewer; the last one runs the producer's release (exactly once overall). True if this call ran it. */
  release(): boolean {
    if (this.#last.released) return false;
    this.#count--;
    return this.#count <= 0 && this.#last.release();
  }

  /** One more holder, with its own release ({@link once}: a holder can not release twice). */
  hold(): () => void {
    this.add();
    return once(() => this.release());
  }
}

/**
 * Someone's bytes this Tensor uses (a producer's managed struct, or a GPU
 * allocation with a release hook): its {@link Holders}, starting with the
 * Tensor itself; the release runs when the last of the Tensor and its
 * exports lets go.
 */
export class Ownership extends Holders {}

/** The Ownership of a managed struct: its deleter (if not NULL) is the release. */
export function managedOwnership(host: WasmHost, address: number, deleter: number): Ownership {
  return new Ownership(() => {
    if (deleter !== 0) host.callVoidPointer(deleter, address);
  });
}

const stats = { finalized: 0, finalizerErrors: 0 };

export const finalizerRegistry = new FinalizationRegistry<Ownership>((owner) => {
  stats.finalized++;
  try {
    owner.release();
  } catch {
    stats.finalizerErrors++; // nowhere to report from a finalizer; counted for tests
  }
});

/**
 * An owning Tensor's hold when the ledger does not list it: its place on the finalizer safety net. Its
 * {@link Watch.release} (the Tensor's dispose) takes it off the net and releases the owner, once.
 */
export class Watch implements Release {
  tensor: object | null;
  readonly owner: Ownership;
  /** 0: not registered yet; 1: registered (this object is the unregister token); 2: released. */
  state: 0 | 1 | 2 = 0;

  constructor(tensor: object, owner: Ownership) {
    this.tensor = tensor;
    this.owner = owner;
  }

  /** True once the Tensor released it. */
  get released(): boolean {
    return this.state === 2;
  }

  /** Take the Tensor off the safety net (or never put it there) and release its hold on the owner. */
  release(): boolean {
    if (this.state === 2) return false;
    if (this.state === 1) finalizerRegistry.unregister(this);
    // Made and released in the same task, last in line (a loop's exchange): off the pending list now, so the list
    // does not keep it (and its Tensor) alive through the young generation's collections until the flush.
    else if (pending[pending.length - 1] === this) pending.pop();
    this.state = 2;
    this.tensor = null;
    this.owner.release();
    return true;
  }
}

/** Owning tensors made since the last flush, not yet registered. */
const pending: Watch[] = [];
let flushQueued = false;
/** A synchronous loop making more than this many tensors registers them without waiting for the task to end. */
const PENDING_MAX = 1024;

function flushPending(): void {
  flushQueued = false;
  for (const w of pending) {
    if (w.state === 0 && w.tensor !== null) {
      finalizerRegistry.register(w.tensor, w.owner, w);
      w.state = 1;
    }
    w.tensor = null;
  }
  pending.length = 0;
}

/**
 * Put an owning tensor under the finalizer safety net. Registration is the
 * expensive part of a short exchange, and most tensors are disposed in the
 * same task that made them; so it happens at the end of the current task (a
 * microtask), for the tensors still undisposed then — or at once when a
 * synchronous loop has made {@link PENDING_MAX} of them. Until then the
 * pending list holds the tensor, so it cannot be collected unregistered.
 */
export function watchOwner(tensor: object, owner: Ownership): Watch {
  const w = new Watch(tensor, owner);
  pending.push(w);
  if (pending.length >= PENDING_MAX) flushPending();
  else if (!flushQueued) {
    flushQueued = true;
    queueMicrotask(flushPending);
  }
  return w;
}

/**
 * How many owning Tensors were garbage-collected without dispose (their
 * reference then released by the safety net), and how many of those
 * deleter calls threw.
 */
export function finalizerStats(): { readonly finalized: number; readonly finalizerErrors: number } {
  return { ...stats };
}
