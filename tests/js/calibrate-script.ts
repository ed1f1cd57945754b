/**
 * Scripted WebGPU for the upload-decision tests (transfers-calibrate*.test.ts): fake devices whose writeBuffer and
 * staging copies take the times a script gives, on a virtual clock, so each scenario of the measurements
 * (bench/results-gpu-*.md) gives known figures and no load on the machine can change a decision.
 */
import { after, before } from "node:test";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { asGPU, DEFAULT_LIMITS, FakeAdapter, FakeBuffer, FakeDevice, FakeEncoder, FakeGPU } from "./context-fakes.js";

export const KiB = 1024;
export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
export const MAP_READ = 0x1;
export const MAP_WRITE = 0x2;
export const COPY_SRC = 0x4;
export const COPY_DST = 0x8;

/**
 * The clock the calibration reads (performance.now), made virtual: it moves only by the script's times, so every
 * figure is exactly what the script says and no load on the machine can change a decision.
 */
let clock = 0;
const realNow = performance.now.bind(performance);

/** Make the clock virtual for the test file that calls this (before its tests; the real one back after them). */
export function useVirtualClock(): void {
  before(() => {
    performance.now = () => clock;
  });
  after(() => {
    performance.now = realNow;
  });
}

/** Take `ms` of the virtual clock. */
export function spin(ms: number): void {
  clock += ms;
}

/** How long each call takes (ms), by bytes: writeBuffer (`first`: the first of its size on the device), staging. */
export interface Script {
  writeBuffer(bytes: number, first: boolean): number;
  /** A copy out of a MAP_WRITE staging buffer, `uses` copies out of that buffer before it. */
  staging(bytes: number, uses: number): number;
  /**
   * An upload of `bytes` staged in pieces of `pieceBytes` (several copies before the wait); by default one piece's
   * time + 1 ms (pieces lose where a scenario says nothing of them).
   */
  pieces?(bytes: number, pieceBytes: number): number;
  /** Freeing a destroyed staging buffer, paid at the queue's next submit (Dawn frees at its next tick). */
  freeMs?: number;
  /** Making a MAP_READ buffer, and the calibration's GPU-side copy buffer (its snapshot of 4 MiB or less). */
  newRead?: number;
  snapshot?: number;
}

/** Memory every scripted mapping is (the fake's own 16 MiB buffers would take memory and time for nothing). */
export const SCRATCH = new Uint8Array(16 * MiB);

/** A buffer whose mapped ranges are {@link SCRATCH} (no bytes kept: these tests time, they do not read back). */
export class ScriptedBuffer extends FakeBuffer {
  constructor(size: number, usage: number, label: string) {
    super(0, usage, label); // no bytes of its own: a fake of 16 MiB would allocate them
    Object.defineProperty(this, "size", { value: size });
  }
  override getMappedRange(_offset = 0, size = this.size): ArrayBuffer {
    if (this.mapState !== "mapped") throw new Error("OperationError: not mapped");
    return size <= SCRATCH.byteLength ? SCRATCH.buffer : new ArrayBuffer(size);
  }
}

/** The staged copies submitted since the last wait: their bytes, count, and the first one's buffer's earlier uses. */
export interface Pending {
  bytes: number;
  copies: number;
  pieceBytes: number;
  uses: number;
}

/**
 * An encoder whose copies move no bytes; those out of staging buffers take the script's time at the next wait
 * (an upload's pieces together: `pieces`, one copy: `staging`).
 */
export class ScriptedEncoder extends FakeEncoder {
  constructor(
    readonly uses: Map<FakeBuffer, number>,
    readonly pending: Pending,
  ) {
    super();
  }
  override copyBufferToBuffer(src: FakeBuffer, _so: number, _dst: FakeBuffer, _doff: number, size: number): void {
    if ((src.usage & MAP_WRITE) === 0) return;
    const uses = this.uses.get(src) ?? 0;
    this.uses.set(src, uses + 1);
    this.copies.push(() => {
      const p = this.pending;
      if (p.copies === 0) Object.assign(p, { uses, pieceBytes: size });
      p.bytes += size;
      p.copies += 1;
    });
  }
}

/** A device whose transfers take the script's times. */
export class ScriptedDevice extends FakeDevice {
  readonly uses = new Map<FakeBuffer, number>();
  readonly pending: Pending = { bytes: 0, copies: 0, pieceBytes: 0, uses: 0 };
  /** Every staged upload waited on: its bytes, copies and piece size. */
  readonly staged: Omit<Pending, "uses">[] = [];
  /** Frees owed since the last submit (ms). */
  toFree = 0;
  constructor(
    readonly script: Script,
    features: string[],
    limits: Record<string, number>,
  ) {
    super(features, limits);
    const submit = this.queue.submit.bind(this.queue);
    this.queue.submit = (buffers) => {
      spin(this.toFree);
      this.toFree = 0;
      submit(buffers);
    };
    const workDone = this.queue.onSubmittedWorkDone.bind(this.queue);
    this.queue.onSubmittedWorkDone = () => {
      const p = this.pending;
      if (p.copies > 0) this.staged.push({ bytes: p.bytes, copies: p.copies, pieceBytes: p.pieceBytes });
      if (p.copies === 1) spin(script.staging(p.bytes, p.uses));
      else if (p.copies > 1) spin(script.pieces?.(p.bytes, p.pieceBytes) ?? script.staging(p.bytes, p.uses) + 1);
      Object.assign(p, { bytes: 0, copies: 0 });
      return workDone();
    };
    const seen = new Set<number>();
    this.queue.writeBuffer = (_buffer, _offset, data, dataOffset = 0, size) => {
      const bytes = size ?? data.byteLength - dataOffset;
      spin(script.writeBuffer(bytes, !seen.has(bytes)));
      seen.add(bytes);
    };
  }
  override createBuffer(desc: { size: number; usage: number; label?: string; mappedAtCreation?: boolean }) {
    const buffer = new ScriptedBuffer(desc.size, desc.usage, desc.label ?? "");
    if ((desc.usage & MAP_WRITE) !== 0) {
      const destroy = buffer.destroy.bind(buffer);
      buffer.destroy = () => {
        this.toFree += this.script.freeMs ?? 0;
        destroy();
      };
    }
    if (desc.mappedAtCreation === true) buffer.mapState = "mapped";
    if ((desc.usage & MAP_READ) !== 0) spin(this.script.newRead ?? 0);
    if (desc.label === "webdlpack calibration" && desc.usage === (COPY_SRC | COPY_DST) && desc.size <= 4 * MiB)
      spin(this.script.snapshot ?? 0);
    this.created.push(buffer);
    return buffer;
  }
  override createCommandEncoder(): FakeEncoder {
    return new ScriptedEncoder(this.uses, this.pending);
  }
}

/** An adapter (of its own name: figures are kept per adapter) whose devices follow `script`. */
export class ScriptedAdapter extends FakeAdapter {
  override readonly info: { vendor: string; architecture: string; device: string; description: string };
  constructor(
    name: string,
    readonly script: Script,
  ) {
    super(undefined, { ...DEFAULT_LIMITS, maxBufferSize: GiB });
    this.info = { vendor: "fake", architecture: "scripted", device: "", description: name };
  }
  override async requestDevice(
    desc: { requiredFeatures?: string[]; requiredLimits?: Record<string, number> } = {},
  ): Promise<FakeDevice> {
    const device = new ScriptedDevice(this.script, desc.requiredFeatures ?? [], {
      ...this.limits,
      ...(desc.requiredLimits ?? {}),
    });
    this.devices.push(device);
    return device;
  }
}

/** A context set up on a scripted adapter; its calibration and upload plan, and the device. */
export async function setUp(name: string, script: Script) {
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  const adapter = new ScriptedAdapter(name, script);
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU(adapter)), requiredLimits: { maxBufferSize: GiB } });
  const calibration = ctx.transferStats().calibration!;
  const ways = Object.fromEntries(calibration.upload.map((u) => [u.bytes, `${u.cold}/${u.warm}`]));
  return { ctx, calibration, ways, device: adapter.devices.at(-1)! as ScriptedDevice };
}

/** ms by size for the five sizes setup measures (others: 0). */
export const bySize = (table: Record<number, number>) => (bytes: number) => table[bytes] ?? 0;

/** ms (virtual): 20 of them fit the calibration's time budget. */
export const SLOW = 8;

/** Calls cycling through `values`, starting at `start` (scripted noise: the same every run). */
export function cycling(values: readonly number[], start: number): () => number {
  let i = start;
  return () => values[i++ % values.length]!;
}

/** Equal within the virtual clock's rounding. */
export const near = (a: number, b: number): boolean => Math.abs(a - b) < 1e-6;
