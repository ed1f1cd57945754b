/**
 * The table behind `tensor_to_js` / `tensor_from_js`: integer handles for
 * DLManagedTensorVersioned addresses in flight between C and JS.
 *
 * Whoever `take`s an address owns it (must call its deleter once). Handles
 * count up and are never reused, so a handle that was already taken fails
 * with ALREADY_CONSUMED instead of naming another tensor.
 */
import { WebDLPackError } from "../../errors.js";

/** Largest handle (int32); the table refuses new entries after that. */
const MAX_HANDLE = 0x7fffffff;

/** Handles (> 0) for managed-tensor addresses; pure logic, no wasm. */
export class TensorHandleTable {
  #next = 1;
  readonly #live = new Map<number, number>();

  /** Number of tensors published and not yet taken. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Publish the address of a managed tensor; returns its handle (> 0).
   * Throws INVALID_ARGUMENT for address 0 and OUT_OF_MEMORY when handles run out.
   */
  put(address: number): number {
    const addr = address >>> 0;
    if (addr === 0) {
      throw new WebDLPackError("NULL_POINTER", "cannot publish a NULL managed tensor", {
        field: "DLManagedTensorVersioned *",
        value: address,
        expected: "a nonzero address",
      });
    }
    if (this.#next > MAX_HANDLE) {
      throw new WebDLPackError("OUT_OF_MEMORY", "tensor handles exhausted", {
        field: "handle",
        value: this.#next,
        expected: `at most ${MAX_HANDLE} handles per library instance`,
      });
    }
    const handle = this.#next++;
    this.#live.set(handle, addr);
    return handle;
  }

  /**
   * Take the address published under `handle`; the caller now owns it.
   * Throws INVALID_ARGUMENT for a handle never issued, ALREADY_CONSUMED for one already taken.
   */
  take(handle: number): number {
    const addr = this.#live.get(handle);
    if (addr === undefined) {
      const issued = Number.isInteger(handle) && handle > 0 && handle < this.#next;
      throw new WebDLPackError(
        issued ? "ALREADY_CONSUMED" : "INVALID_ARGUMENT",
        issued ? `tensor handle ${handle} was already taken` : `unknown tensor handle ${handle}`,
        {
          field: "handle",
          value: handle,
          expected: "a handle published and not yet taken",
        },
      );
    }
    this.#live.delete(handle);
    return addr;
  }

  /** Whether `handle` is published and not yet taken. */
  has(handle: number): boolean {
    return this.#live.has(handle);
  }

  /** Remove every entry and return the addresses (for disposal: the caller releases them). */
  drain(): number[] {
    const out = [...this.#live.values()];
    this.#live.clear();
    return out;
  }
}
