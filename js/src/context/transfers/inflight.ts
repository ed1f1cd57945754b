/**
 * Transfers of one device that are waiting on the GPU, and what happens to
 * them when the device is lost: every wait is raced against the device's
 * loss, so each pending transfer rejects with the same typed DEVICE_LOST error
 * at once (not whenever, or whether, WebGPU settles its map promise), and the
 * transfer's own cleanup then destroys its staging buffers.
 */
import { WebDLPackError } from "../../errors.js";

/** How long a failed map waits for `device.lost` to settle before it reports GPU_ERROR instead of DEVICE_LOST. */
const LOSS_GRACE_MS = 200;

/** In-flight bookkeeping for one device. */
export class Inflight {
  #pending = 0;
  /**
   * The DEVICE_LOST error, once the device is lost (set by {@link lose} only). A field, not a getter: every
   * transfer reads it, and a getter is a call where the transfer code is not optimized yet (its first calls).
   */
  lostError: WebDLPackError | undefined = undefined;
  /** Rejecters of the waits in progress (guard); a loss calls each. A Set, not a race on one long-lived promise, so nothing piles up. */
  readonly #waiting = new Set<(error: WebDLPackError) => void>();
  /** How the device is described in errors (e.g. "device 0"). */
  readonly #name: string;

  readonly #deviceLost: Promise<unknown>;

  /** Bookkeeping for `device` (named `name` in errors); follows `device.lost` itself. */
  constructor(device: GPUDevice, name: string) {
    this.#name = name;
    this.#deviceLost = device.lost.then(
      (info) => this.lose(info?.reason ?? "unknown"),
      () => this.lose("unknown"),
    );
  }

  /** Transfers started and not finished. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Count a transfer as started, for a caller that calls {@link end} exactly once (the small readback: no closure
   * made per call). Throws DEVICE_LOST after a loss.
   */
  start(): void {
    if (this.lostError !== undefined) throw this.lostError;
    this.#pending += 1;
  }

  /** Count a transfer {@link start}ed as finished. */
  end(): void {
    this.#pending -= 1;
  }

  /** Count a transfer as started; returns the function that counts it finished (idempotent). */
  begin(): () => void {
    if (this.lostError !== undefined) throw this.lostError;
    this.#pending += 1;
    let open = true;
    return () => {
      if (open) {
        open = false;
        this.#pending -= 1;
      }
    };
  }

  /** `promise`, or DEVICE_LOST as soon as the device is lost. */
  guard<T>(promise: Promise<T>): Promise<T> {
    if (this.lostError !== undefined) return Promise.reject(this.lostError);
    return new Promise<T>((resolve, reject) => {
      this.#waiting.add(reject);
      promise.then(
        (value) => {
          this.#waiting.delete(reject);
          resolve(value);
        },
        (err: unknown) => {
          this.#waiting.delete(reject);
          reject(err);
        },
      );
    });
  }

  /** The error a failed transfer reports: DEVICE_LOST after a loss, typed errors as they are, else GPU_ERROR. */
  failure(err: unknown, what: string): WebDLPackError {
    if (this.lostError !== undefined) return this.lostError;
    if (err instanceof WebDLPackError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new WebDLPackError("GPU_ERROR", `${what} failed: ${message}`, {
      field: "ptr",
      value: undefined,
      expected: "a live buffer on a working device",
      cause: err,
    });
  }

  /**
   * Like {@link failure}, for an error WebGPU raised (a map that failed): a
   * lost device makes maps fail before (or without) `device.lost` settling,
   * so give it a moment to settle first — only on this failure path.
   */
  async settle(err: unknown, what: string): Promise<WebDLPackError> {
    if (this.lostError === undefined && !(err instanceof WebDLPackError)) {
      await Promise.race([this.#deviceLost, new Promise((resolve) => setTimeout(resolve, LOSS_GRACE_MS))]);
    }
    return this.failure(err, what);
  }

  /** The device was lost: every pending and later transfer rejects with DEVICE_LOST. */
  lose(reason: string): void {
    if (this.lostError !== undefined) return;
    this.lostError = new WebDLPackError(
      "DEVICE_LOST",
      `${this.#name} was lost during a transfer (${reason}); ` +
        "its data is gone: set the device up again and recompute",
      {
        field: "deviceId",
        value: this.#name,
        expected: "a device that is not lost",
      },
    );
    for (const reject of this.#waiting) reject(this.lostError);
    this.#waiting.clear();
  }
}
