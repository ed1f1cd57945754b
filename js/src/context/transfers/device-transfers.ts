/**
 * The one home for GPU byte movement on one device: upload, readback (into a
 * new array or into the caller's memory, wasm heap included), GPU → GPU copy
 * and clear, with the staging rings they reuse and the bookkeeping that makes
 * a lost device reject every pending transfer and destroy every staging buffer.
 * The context keeps one per device (beside its allocator); every layer above
 * (ctx methods, Python's bridge, the C host, the adapters) comes here.
 */
import { clearBytes, copyBytes } from "./copy.js";
import { Inflight } from "./inflight.js";
import { readFrom, type ReadEnv, type ReadPlan, type ReadSink } from "./read.js";
import { ReadRing, WriteRing, type RingStats } from "./staging.js";
import { type UploadClass, writeRange, type UploadHistory, type UploadPath, type WritePlan } from "./write.js";
import { calibrate, type Calibration } from "./calibrate.js";
import { bufferFacts, type KnownBuffer } from "../ground/buffer-facts.js";

const MiB = 2 ** 20;
/** GPUBufferUsage.COPY_DST. */
const COPY_DST = 0x8;

/** How transfers are split and how much staging is kept (defaults measured: bench/gpu, results-gpu-*.md). */
export interface TransferPlan {
  read: ReadPlan;
  write: WritePlan;
  /** Bytes of MAP_READ staging kept between readbacks. */
  maxKeptReadBytes: number;
  /** Bytes of mapped MAP_WRITE staging kept between uploads. */
  maxKeptWriteBytes: number;
  /** Fresh result arrays at least this large are touched while the GPU works (page faults overlap the GPU). */
  touchFreshMinBytes: number;
}

/** Defaults: see bench/results-gpu-*.md for the measurements behind each number. */
export const DEFAULT_TRANSFER_PLAN: Readonly<TransferPlan> = Object.freeze({
  read: Object.freeze({
    singleBytes: 4 * MiB,
    minPieceBytes: 4 * MiB,
    maxPieces: 8,
    submitPerPiece: true,
    wholeFromBytes: Number.POSITIVE_INFINITY,
    turnBytes: 0,
  }),
  write: Object.freeze({
    classes: Object.freeze([Object.freeze({ fromBytes: MiB, cold: "staging", warm: "staging" } as const)]),
    makeStaging: true,
    minPieceBytes: 4 * MiB,
    maxPieces: 8,
  }),
  // A 256 MiB transfer's staging and up to half of that again for every smaller size an application runs on the same
  // device (64 + 16 + 4 + 1 MiB …: 341 MiB a ring). With 288 MiB, 256 MiB transfers in Node evicted and re-made a
  // piece every call (0.71× a hand-written readback); on a long-lived device running every size in turn, the 256 MiB
  // staging never fitted beside the smaller sizes' and every 256 MiB upload took writeBuffer (0.15×, issue 33).
  maxKeptReadBytes: 384 * MiB,
  maxKeptWriteBytes: 384 * MiB,
  touchFreshMinBytes: MiB,
});

/**
 * The plan for an adapter and runtime before the device is measured (setup measures it: calibrate.ts, and
 * replaces the upload classes and the fresh-array touch), from the measurements (bench/results-gpu-*.md,
 * 16 MiB medians):
 * - software (CPU) adapter: writeBuffer measured faster than staging at every size (SwiftShader in Node and
 *   Chromium: writeBuffer + wait 0.5–1.9 ms vs a kept MAP_WRITE buffer 1.2–5 ms), so uploads always take writeBuffer;
 * - a GPU: staging measured 3.6–7× faster than writeBuffer from 16 MiB (H100) and equal at 1 MiB, so from 1 MiB;
 * - in a browser the GPU process copies mapped bytes over IPC, and pieces pipeline that (H100 Chromium upload
 *   16 MiB: 4 pieces 6.4 ms vs one buffer 9.2 ms); where WebGPU runs in-process on a GPU (Node + dawn.node)
 *   mapping is a pointer and pieces only add maps: uploads go in one piece up to 256 MiB there (H100, warm medians:
 *   16 MiB one buffer 1.86 ms vs 4 pieces 2.31; 256 MiB 24.9 ms vs 4 pieces of 64 MiB 29.1, 2 pieces 31.0, a
 *   hand-written buffer 25.0; 64 MiB 8.53 vs hand-written 8.41), and readbacks of 128 MiB or more in one piece
 *   too (256 MiB: one buffer 24.1 ms vs 8 pieces 33.5, 4 pieces 31.7, hand-written 23.7; at 64 MiB pieces still
 *   win, 8 pieces 6.55 ms vs one 7.62).
 */
export function planFor(
  adapter: { vendor: string; architecture: string; description: string } | null,
  inProcess: boolean = webgpuInProcess(),
): Readonly<TransferPlan> {
  const software =
    adapter !== null && /swiftshader|llvmpipe|lavapipe|warp/i.test(`${adapter.architecture} ${adapter.description}`);
  if (!software && !inProcess) return DEFAULT_TRANSFER_PLAN;
  const write = software
    ? { ...DEFAULT_TRANSFER_PLAN.write, classes: [], makeStaging: false }
    : { ...DEFAULT_TRANSFER_PLAN.write, minPieceBytes: 256 * MiB };
  const read = software ? DEFAULT_TRANSFER_PLAN.read : { ...DEFAULT_TRANSFER_PLAN.read, wholeFromBytes: 128 * MiB };
  return Object.freeze({ ...DEFAULT_TRANSFER_PLAN, write: Object.freeze(write), read: Object.freeze(read) });
}

/** True where WebGPU runs in this process (Node with dawn.node), false in a browser (a GPU process behind IPC). */
function webgpuInProcess(): boolean {
  const g = globalThis as {
    process?: { versions?: { node?: unknown } };
    window?: unknown;
    WorkerGlobalScope?: unknown;
  };
  return typeof g.process?.versions?.node === "string" && g.window === undefined && g.WorkerGlobalScope === undefined;
}

/** Counters of one device's transfers. */
export interface TransferStats {
  /** Transfers waiting on the GPU. */
  pending: number;
  /** Readback staging (MAP_READ). */
  read: RingStats;
  /** Upload staging (MAP_WRITE). */
  write: RingStats;
  /** Path of the last upload. */
  lastUploadPath: UploadPath | null;
  /** What setup measured on this device (null: not measured, the plan's defaults are used). */
  calibration: Calibration | null;
}

/** Transfers of one device. */
export class DeviceTransfers {
  readonly device: GPUDevice;
  /** `device.queue`, read through the binding once. */
  readonly queue: GPUQueue;
  /** True once {@link drain} ran (the device was unregistered): whoever kept this object asks for the current one. */
  released = false;
  #plan!: Readonly<TransferPlan>;
  /**
   * Uploads shorter than this take one writeBuffer at once: below the first size class whose next upload may stage
   * (its warm way is staging, or it has had no upload and its cold way is staging); see {@link directBelow}.
   */
  #directBelow = 0;
  readonly #reads: ReadRing;
  readonly #writes: WriteRing;
  readonly #inflight: Inflight;
  /** What a readback uses of this device, in one object. */
  readonly #env: ReadEnv;
  #lastUploadPath: UploadPath | null = null;
  /** The plan's upload classes that have had an upload on this device (their next one is warm). */
  #uploads: UploadHistory = { warm: 0 };
  #calibration: Calibration | null = null;
  #calibrating: Promise<void> | undefined;
  /** The adapter, as a key for figures measured once per adapter (null: unknown). */
  readonly #adapterKey: string | null;

  /** Transfers on `device` (named `name` in errors); `destroy` releases staging buffers no longer kept. */
  constructor(
    device: GPUDevice,
    name: string,
    destroy: (buffer: GPUBuffer) => void,
    plan: Readonly<TransferPlan> = DEFAULT_TRANSFER_PLAN,
    adapterKey: string | null = null,
  ) {
    this.device = device;
    this.queue = device.queue;
    this.#adapterKey = adapterKey;
    this.plan = plan;
    this.#reads = new ReadRing(device, destroy, plan.maxKeptReadBytes);
    this.#writes = new WriteRing(device, destroy, plan.maxKeptWriteBytes);
    this.#inflight = new Inflight(device, name);
    this.#env = { device, queue: this.queue, ring: this.#reads, inflight: this.#inflight };
    // A loss destroys the staging in use (its maps reject at once) even where no context follows this device.
    device.lost.then(
      (info) => this.lose(info?.reason ?? "unknown"),
      () => this.lose("unknown"),
    );
  }

  /** The plan in use: the adapter's defaults, then what {@link calibrate} measured. */
  get plan(): Readonly<TransferPlan> {
    return this.#plan;
  }

  set plan(plan: Readonly<TransferPlan>) {
    this.#plan = plan;
    this.#directBelow = directBelow(plan.write.classes, this.#uploads);
  }

  /**
   * Read `length` bytes at `offset` of `source` into `sink`, piece by piece, after all submitted work. When this
   * returns, the GPU work is queued: what the caller does then overlaps it.
   */
  read(source: GPUBuffer, offset: number, length: number, sink: ReadSink): Promise<void> {
    return readFrom(this.#env, this.#plan.read, bufferFacts(source), offset, length, sink);
  }

  /** {@link read} of a buffer whose size and usage are at hand (a pointer's entry). */
  readKnown(source: KnownBuffer, offset: number, length: number, sink: ReadSink): Promise<void> {
    return readFrom(this.#env, this.#plan.read, source, offset, length, sink);
  }

  /**
   * Read `length` bytes at `offset` of `source` into a new ArrayBuffer (one promise hop after the read's). Below
   * touchFreshMinBytes the array is made once the GPU work is queued, while it runs (not before the submit); from
   * it, made first and its pages touched while the GPU works.
   */
  readNew(source: GPUBuffer, offset: number, length: number): Promise<ArrayBuffer> {
    return this.readNewKnown(bufferFacts(source), offset, length);
  }

  /**
   * {@link readNew} of a buffer whose size and usage are at hand (a pointer's entry). The array is made, or its pages
   * touched, right after the read is queued — not in a callback the read makes: a callback that differs from call to
   * call made the optimized small readback (readOne) give up its machine code (V8: "wrong feedback cell"), and the
   * readbacks after that ran unoptimized (Node, SwiftShader; `node --trace-deopt`).
   */
  readNewKnown(known: KnownBuffer, offset: number, length: number): Promise<ArrayBuffer> {
    const small = length < this.#plan.touchFreshMinBytes;
    let out: Uint8Array | undefined;
    if (!small) {
      try {
        out = new Uint8Array(length);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const sink: ReadSink = (bytes, at) => out!.set(bytes, at);
    const read = readFrom(this.#env, this.#plan.read, known, offset, length, sink);
    if (small) out = new Uint8Array(length);
    else touchPages(out!);
    return read.then(() => out!.buffer as ArrayBuffer);
  }

  /**
   * {@link write} into a buffer whose size and usage are at hand (a pointer's entry). The common small upload —
   * below the plan's first size class, whole words, every check {@link writeRange} makes passed — is one
   * `queue.writeBuffer` right here, with no further call: a page's first uploads run this code unoptimized, with
   * cold CPU caches, where every call and every object touched costs (measured: bench/gpu/small-readback.mjs).
   * Anything else (and every refusal, with its typed error) goes through {@link write}.
   */
  upload(target: KnownBuffer, offset: number, bytes: Uint8Array): UploadPath {
    const length = bytes.byteLength;
    if (
      length < this.#directBelow &&
      length > 0 &&
      length % 4 === 0 &&
      offset % 4 === 0 &&
      offset + length <= target.size &&
      (target.usage & COPY_DST) !== 0 &&
      this.#inflight.lostError === undefined &&
      bytes.buffer instanceof ArrayBuffer // dawn.node refuses views on a SharedArrayBuffer: write() copies those
    ) {
      try {
        this.queue.writeBuffer(target.buffer, offset, bytes.buffer, bytes.byteOffset, length);
      } catch (err) {
        throw this.#inflight.failure(err, "upload");
      }
      this.#lastUploadPath = "writeBuffer";
      return "writeBuffer";
    }
    return this.write(target.buffer, offset, bytes);
  }

  /** Upload `bytes` into `target` at `offset` now (the bytes are taken before this returns). */
  write(target: GPUBuffer, offset: number, bytes: Uint8Array): UploadPath {
    this.#lastUploadPath = writeRange(
      this.device,
      this.#writes,
      this.#inflight,
      this.#plan.write,
      this.#uploads,
      target,
      offset,
      bytes,
    );
    this.#directBelow = directBelow(this.#plan.write.classes, this.#uploads);
    return this.#lastUploadPath;
  }

  /**
   * Measure which upload path wins at which size on this device, cold and warm, and make staging ready before
   * the first transfer (calibrate.ts); the plan takes the measured classes. Once per device; setup() awaits it.
   */
  calibrate(): Promise<void> {
    this.#calibrating ??= calibrate({
      device: this.device,
      writes: this.#writes,
      reads: this.#reads,
      inflight: this.#inflight,
      write: this.plan.write,
      read: this.plan.read,
      adapterKey: this.#adapterKey,
    }).then(
      (found) => {
        this.#calibration = found.calibration;
        this.plan = Object.freeze({
          ...this.plan,
          write: Object.freeze({ ...this.plan.write, ...found.write }),
          read: Object.freeze({ ...this.plan.read, ...found.read }),
          touchFreshMinBytes: found.touchFreshMinBytes,
        });
        this.#uploads = { warm: 0 }; // the classes are new: every one is cold on this device
        this.#directBelow = directBelow(this.plan.write.classes, this.#uploads);
      },
      () => undefined, // a device lost meanwhile: the defaults stay, the transfers report the loss
    );
    return this.#calibrating;
  }

  /** GPU → GPU copy, submitted now. */
  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, nbytes: number): void {
    if (this.#inflight.lostError !== undefined) throw this.#inflight.lostError;
    copyBytes(this.device, src, srcOffset, dst, dstOffset, nbytes);
  }

  /** Zero a byte range, submitted now. */
  clear(buffer: GPUBuffer, offset?: number, nbytes?: number): void {
    if (this.#inflight.lostError !== undefined) throw this.#inflight.lostError;
    clearBytes(this.device, buffer, offset, nbytes);
  }

  stats(): TransferStats {
    return {
      pending: this.#inflight.pending,
      read: this.#reads.stats(),
      write: this.#writes.stats(),
      lastUploadPath: this.#lastUploadPath,
      calibration: this.#calibration,
    };
  }

  /** Staging buffers kept (both rings). */
  get keptBuffers(): number {
    return this.#reads.stats().kept + this.#writes.stats().kept;
  }

  /** Bytes of the staging buffers kept (both rings). */
  get keptBytes(): number {
    return this.#reads.stats().keptBytes + this.#writes.stats().keptBytes;
  }

  /** Finish the staging work left for later now (read staging given back mapped is unmapped; write staging mapped again). */
  settleStaging(): Promise<void> {
    this.#reads.unmapNow();
    return this.#writes.settled();
  }

  /** Memory pressure: destroy the kept staging buffers (the rings stay open). */
  trim(): void {
    this.#reads.clear();
    this.#writes.clear();
  }

  /** The device is being unregistered: release kept staging (transfers in flight finish and release theirs). */
  drain(): void {
    this.released = true;
    this.#reads.drain();
    this.#writes.drain();
  }

  /** The device was lost: reject every pending transfer with DEVICE_LOST, destroy every staging buffer. */
  lose(reason: string): void {
    this.#inflight.lose(reason);
    this.#reads.lose();
    this.#writes.lose();
  }
}

/**
 * Where the direct writeBuffer path ends: the `fromBytes` of the first class whose next upload may stage — its warm way
 * is staging, or it has had no upload on the device (`history`) and its cold way is staging. A class whose ways are
 * writeBuffer once warm goes direct too, with no class lookup: measured on the H200 in Node, where a blip made the
 * 64 KiB class stage cold (a first writeBuffer timed at 2.2 ms) and every later 256 KiB upload then went through the
 * class path, 0.065 ms against writeBuffer's 0.051 (0.78×; 1.00× through the direct path in the run before).
 */
export function directBelow(classes: readonly UploadClass[], history: UploadHistory): number {
  for (let k = 0; k < classes.length; k++) {
    const c = classes[k]!;
    if (c.warm === "staging" || (c.cold === "staging" && (history.warm & (1 << k)) === 0)) return c.fromBytes;
  }
  return Number.POSITIVE_INFINITY;
}

/** Write one byte per 4 KiB page of `bytes` (fresh memory: the page faults happen now, while the GPU works). */
function touchPages(bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 0;
}
