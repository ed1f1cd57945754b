/**
 * Fake WebGPU objects for Node tests of the context: just enough of GPU,
 * GPUAdapter, GPUDevice and GPUBuffer for setup, error scopes, allocation and loss.
 */

/** A fake GPUBuffer that records destroy() and holds bytes (for copies and mapping). */
export class FakeBuffer {
  destroyed = 0;
  mapState: "unmapped" | "pending" | "mapped" = "unmapped";
  data: Uint8Array;
  constructor(
    readonly size: number,
    readonly usage: number,
    public label: string,
  ) {
    this.data = new Uint8Array(size);
  }
  destroy(): void {
    this.destroyed += 1;
  }
  /** When the GPU answers a map (default: after 1 ms; a test driving the GPU itself hands out its own promise). */
  mapAnswer: () => Promise<unknown> = () => new Promise((r) => setTimeout(r, 1));
  async mapAsync(_mode: number, offset = 0, size = this.size - offset): Promise<void> {
    if (this.destroyed > 0) throw new Error("OperationError: buffer destroyed");
    if (offset + size > this.size) throw new Error("OperationError: range outside the buffer");
    this.mapState = "pending";
    await this.mapAnswer();
    this.mapState = "mapped";
  }
  /** Ranges handed out by getMappedRange: their bytes land in `data` on unmap (as a write mapping's do). */
  #ranges: { offset: number; bytes: ArrayBuffer }[] = [];
  getMappedRange(offset = 0, size = this.size - offset): ArrayBuffer {
    if (this.mapState !== "mapped") throw new Error("OperationError: not mapped");
    const bytes = this.data.buffer.slice(offset, offset + size) as ArrayBuffer;
    this.#ranges.push({ offset, bytes });
    return bytes;
  }
  unmap(): void {
    for (const r of this.#ranges) this.data.set(new Uint8Array(r.bytes), r.offset);
    this.#ranges = [];
    this.mapState = "unmapped";
  }
}

/** A fake command encoder: records buffer copies and clears, run when submitted. */
export class FakeEncoder {
  readonly copies: (() => void)[] = [];
  copyBufferToBuffer(src: FakeBuffer, srcOffset: number, dst: FakeBuffer, dstOffset: number, size: number): void {
    if (srcOffset % 4 !== 0 || dstOffset % 4 !== 0 || size % 4 !== 0)
      throw new Error("copy offsets and size must be multiples of 4");
    this.copies.push(() => dst.data.set(src.data.subarray(srcOffset, srcOffset + size), dstOffset));
  }
  clearBuffer(buffer: FakeBuffer, offset = 0, size = buffer.size - offset): void {
    this.copies.push(() => buffer.data.fill(0, offset, offset + size));
  }
  finish(): { run: () => void } {
    return { run: () => this.copies.forEach((c) => c()) };
  }
}

/** A fake GPUQueue: runs submitted copies at once; onSubmittedWorkDone resolves in a macrotask. */
export class FakeQueue {
  submits = 0;
  workDoneCalls = 0;
  submit(buffers: { run: () => void }[]): void {
    this.submits += 1;
    for (const b of buffers) b.run();
  }
  onSubmittedWorkDone(): Promise<void> {
    this.workDoneCalls += 1;
    return new Promise((r) => setTimeout(r, 0));
  }
  /** As WebGPU's: `data` a view or an ArrayBuffer; `dataOffset` and `size` in elements of a typed array, else bytes. */
  writeBuffer(
    buffer: FakeBuffer,
    offset: number,
    data: ArrayBufferView | ArrayBuffer,
    dataOffset = 0,
    size?: number,
  ): void {
    const view = ArrayBuffer.isView(data) ? data : new Uint8Array(data);
    const unit = "BYTES_PER_ELEMENT" in view ? (view.BYTES_PER_ELEMENT as number) : 1;
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    const from = dataOffset * unit;
    buffer.data.set(bytes.subarray(from, size === undefined ? undefined : from + size * unit), offset);
  }
}

type ScopeFilter = "out-of-memory" | "validation" | "internal";

/** A fake GPUDevice with a real error-scope stack and a lost promise. */
export class FakeDevice {
  readonly features: Set<string>;
  readonly limits: Record<string, number>;
  readonly queue = new FakeQueue();
  readonly lost: Promise<{ reason: string; message: string }>;
  readonly created: FakeBuffer[] = [];
  /** The next createBuffer raises this error into the innermost scope with its filter. */
  failNext: { filter: ScopeFilter; message: string } | undefined;
  readonly scopes: { filter: ScopeFilter; error: { message: string } | null }[] = [];
  #resolveLost!: (info: { reason: string; message: string }) => void;

  constructor(features: string[] = [], limits: Record<string, number> = {}) {
    this.features = new Set(features);
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.lost = new Promise((resolve) => {
      this.#resolveLost = resolve;
    });
  }

  createBuffer(desc: { size: number; usage: number; label?: string; mappedAtCreation?: boolean }): FakeBuffer {
    const buffer = new FakeBuffer(desc.size, desc.usage, desc.label ?? "");
    if (desc.mappedAtCreation === true) buffer.mapState = "mapped";
    this.created.push(buffer);
    const fail = this.failNext;
    this.failNext = undefined;
    if (fail) {
      for (let i = this.scopes.length - 1; i >= 0; i--) {
        const scope = this.scopes[i]!;
        if (scope.filter === fail.filter) {
          scope.error ??= { message: fail.message };
          break;
        }
      }
    }
    return buffer;
  }

  createCommandEncoder(): FakeEncoder {
    return new FakeEncoder();
  }

  pushErrorScope(filter: ScopeFilter): void {
    this.scopes.push({ filter, error: null });
  }

  popErrorScope(): Promise<{ message: string } | null> {
    const scope = this.scopes.pop();
    if (!scope) return Promise.reject(new Error("OperationError: error scope stack is empty"));
    return Promise.resolve(scope.error);
  }

  /** Lose the device like GPUDevice.destroy() does. */
  destroy(): void {
    this.#resolveLost({ reason: "destroyed", message: "Device was destroyed." });
  }
}

/** Limits close to SwiftShader's. */
export const DEFAULT_LIMITS: Record<string, number> = {
  maxBufferSize: 1 << 20,
  maxStorageBufferBindingSize: 1 << 20,
  minStorageBufferOffsetAlignment: 256,
  maxStorageBuffersPerShaderStage: 8,
  maxComputeWorkgroupSizeX: 256,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupsPerDimension: 65535,
};

/** A fake GPUAdapter that counts requestDevice calls. */
export class FakeAdapter {
  requestDeviceCalls = 0;
  readonly devices: FakeDevice[] = [];
  readonly info = { vendor: "fake", architecture: "test", device: "", description: "fake adapter" };
  constructor(
    readonly features: Set<string> = new Set(["timestamp-query"]),
    readonly limits: Record<string, number> = { ...DEFAULT_LIMITS, maxComputeWorkgroupStorageSize: 32768 },
  ) {}

  lastDescriptor: { requiredFeatures?: string[]; requiredLimits?: Record<string, number> } | undefined;
  async requestDevice(
    desc: { requiredFeatures?: string[]; requiredLimits?: Record<string, number> } = {},
  ): Promise<FakeDevice> {
    this.requestDeviceCalls += 1;
    this.lastDescriptor = desc;
    await new Promise((r) => setTimeout(r, 5));
    const device = new FakeDevice(desc.requiredFeatures ?? [], { ...this.limits, ...(desc.requiredLimits ?? {}) });
    this.devices.push(device);
    return device;
  }
}

/** A fake navigator.gpu; `adapter = null` makes requestAdapter find none. */
export class FakeGPU {
  requestAdapterCalls = 0;
  constructor(public adapter: FakeAdapter | null = new FakeAdapter()) {}
  async requestAdapter(): Promise<FakeAdapter | null> {
    this.requestAdapterCalls += 1;
    await new Promise((r) => setTimeout(r, 5));
    return this.adapter;
  }
}

/** Cast a fake to the WebGPU type the API expects. */
export function asGPU<T>(fake: unknown): T {
  return fake as T;
}
