/**
 * Who keeps a tensor's bytes alive: the {@link Ownership} of a producer's
 * managed struct (or of a GPU pointer with a release hook), counted so the
 * release runs exactly once, and the FinalizationRegistry safety net for
 * owning Tensors dropped without dispose.
 */
import type { WasmHost } from "../dlpack/index.js";

/**
 * Someone's bytes this Tensor uses (a producer's managed struct, or a
 * GPU allocation with a release hook): `release` runs exactly once, when the
 * last reference — the Tensor itself or one of its exports — is released.
 */
export class Ownership {
  private refs = 1;
  private done = false;
  constructor(private readonly onLastRelease: () => void) {}
  /** One more user of the producer's bytes (an export). */
  retain(): void {
    this.refs++;
  }
  /** One user fewer; the last one runs the release (exactly once overall). */
  release(): void {
    if (this.done) return;
    this.refs--;
    if (this.refs > 0) return;
    this.done = true;
    this.onLastRelease();
  }
}

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
 * How many owning Tensors were garbage-collected without dispose (their
 * reference then released by the safety net), and how many of those
 * deleter calls threw.
 */
export function finalizerStats(): { readonly finalized: number; readonly finalizerErrors: number } {
  return { ...stats };
}
