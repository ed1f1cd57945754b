/**
 * Getting the default WebGPU device: checking the setup config, requesting an
 * adapter and a device (or taking the user's device), and describing the result.
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import { checkCacheMode, type CacheMode } from "../options.js";
import { isGPUDevice, summarizeAdapterInfo, type AdapterInfoSummary } from "./registry.js";

/** Configuration of {@link WebDLPackContext.setup}. Every field is optional. */
export interface SetupConfig {
  /** Passed to `navigator.gpu.requestAdapter`. */
  powerPreference?: GPUPowerPreference;
  /** Features the device must have; one the adapter lacks → UNSUPPORTED naming it. */
  requiredFeatures?: readonly GPUFeatureName[];
  /** Limits the device must have (e.g. `{maxBufferSize: 2 ** 30}`); above the adapter's → UNSUPPORTED. */
  requiredLimits?: Record<string, number>;
  /** Use this device as device 0 instead of requesting one. */
  device?: GPUDevice;
  /** Adapter info of the user's `device` (used when `device.adapterInfo` is missing). */
  adapterInfo?: GPUAdapterInfo | Partial<AdapterInfoSummary>;
  /** The GPU object to use instead of `navigator.gpu` (a worker's, or Dawn for Node). */
  gpu?: GPU;
  /** Label of the requested device. */
  label?: string;
  /**
   * "adapter-max" (default): also ask for the adapter's own maxima of the
   * limits ML code runs into ({@link ML_LIMITS}), as ORT-web and TF.js do when
   * they make their own device — device 0 is shared with them. "default": only
   * `requiredLimits` (WebGPU's defaults otherwise, e.g. maxBufferSize 256 MiB).
   */
  limits?: "adapter-max" | "default";
  /**
   * "adapter-ml" (default): also ask for the {@link ML_FEATURES} the adapter
   * has (`shader-f16`, `subgroups`), as Transformers.js/ORT-web, LiteRT.js and
   * TVM do when they make their own device — without them, fp16 models fail on
   * the shared device. "required": only `requiredFeatures`.
   */
  features?: "adapter-ml" | "required";
  /** Cache mode of device 0 (default "bucket"; see `setCacheMode`). */
  cacheMode?: CacheMode;
  /**
   * GPU memory budget of device 0 in bytes, for every buffer on it — webdlpack's, the frameworks', the
   * page's (default: none). An allocation that would cross it makes room first (docs/memory.md), else
   * fails with OUT_OF_MEMORY. `ctx.setMemoryBudget` changes it later.
   */
  memoryBudget?: number | null;
  /**
   * Count device 0's buffers by owner (default true: its `createBuffer` is instrumented, see
   * docs/memory.md). false leaves the device untouched; `ctx.memory()` then counts nothing and no budget can be set.
   */
  memoryAccounting?: boolean;
}

/** Limits `setup()` raises to the adapter's maxima unless `cfg.limits` is "default". */
export const ML_LIMITS: readonly string[] = Object.freeze([
  "maxBufferSize",
  "maxStorageBufferBindingSize",
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  // ...and the rest of what ORT-web (1.23–1.30) asks for when it makes its own device (adapters/compat/ort-device.ts gives it this one).
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxBindGroups",
]);

/** Features `setup()` asks for when the adapter has them, unless `cfg.features` is "required". */
// Not timestamp-query, though ORT-web asks for it when the adapter has it: it serves only ORT's profiling, and ORT
// reads the features of the device it gets (adapters/compat/ort-device.ts lets ORT 1.23–1.29 do without it).
export const ML_FEATURES: readonly GPUFeatureName[] = Object.freeze(["shader-f16", "subgroups"] as GPUFeatureName[]);

/** Limits of a device that matter for tensors. */
export interface LimitsSummary {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  minStorageBufferOffsetAlignment: number;
  maxStorageBuffersPerShaderStage: number;
  maxComputeWorkgroupSizeX: number;
  maxComputeInvocationsPerWorkgroup: number;
  maxComputeWorkgroupsPerDimension: number;
}

/** What `setup()` returns: a plain, frozen description of device 0. */
export interface DeviceInfo {
  /** Always 0: the default device. */
  readonly id: number;
  /** Adapter facts, or null if unknown (a user device without adapter info). */
  readonly adapterInfo: AdapterInfoSummary | null;
  /** Device features, sorted. */
  readonly features: readonly string[];
  /**
   * The features `setup()` asked for, sorted: `requiredFeatures` plus the
   * adapter's {@link ML_FEATURES} (empty for a device given to `setup({device})`).
   */
  readonly requestedFeatures: readonly string[];
  /** Selected device limits. */
  readonly limits: Readonly<LimitsSummary>;
}

/** A device and what is known of its adapter. */
export interface AcquiredDevice {
  device: GPUDevice;
  adapterInfo: AdapterInfoSummary | null;
  /** The features asked for (sorted; empty for a given device). */
  requestedFeatures: readonly string[];
}

const POWER_PREFERENCES = ["low-power", "high-performance"];

/** Check `cfg` field by field. Throws INVALID_ARGUMENT naming the field. */
export function checkSetupConfig(cfg: unknown): SetupConfig {
  if (cfg === undefined) return {};
  const bad = (field: string, value: unknown, expected: string): WebDLPackError =>
    new WebDLPackError("INVALID_ARGUMENT", "bad setup() config", { field: `cfg.${field}`, value, expected });
  if (cfg === null || typeof cfg !== "object") throw bad("", describeValue(cfg), "an object or undefined");
  const c = cfg as SetupConfig;
  if (c.powerPreference !== undefined && !POWER_PREFERENCES.includes(c.powerPreference)) {
    throw bad("powerPreference", c.powerPreference, `one of ${POWER_PREFERENCES.join(", ")}`);
  }
  if (c.requiredFeatures !== undefined) {
    if (!Array.isArray(c.requiredFeatures))
      throw bad("requiredFeatures", describeValue(c.requiredFeatures), "an array of feature names");
    for (const f of c.requiredFeatures)
      if (typeof f !== "string") throw bad("requiredFeatures", describeValue(f), "feature names (strings)");
  }
  if (c.requiredLimits !== undefined) {
    if (c.requiredLimits === null || typeof c.requiredLimits !== "object") {
      throw bad("requiredLimits", describeValue(c.requiredLimits), "an object of limit name → number");
    }
    for (const [name, value] of Object.entries(c.requiredLimits)) {
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
        throw bad(`requiredLimits.${name}`, value, "a non-negative safe integer");
      }
    }
  }
  if (c.device !== undefined && !isGPUDevice(c.device)) throw bad("device", describeValue(c.device), "a GPUDevice");
  if (c.label !== undefined && typeof c.label !== "string") throw bad("label", describeValue(c.label), "a string");
  if (c.limits !== undefined && c.limits !== "adapter-max" && c.limits !== "default") {
    throw bad("limits", describeValue(c.limits), '"adapter-max" or "default"');
  }
  if (c.features !== undefined && c.features !== "adapter-ml" && c.features !== "required") {
    throw bad("features", describeValue(c.features), '"adapter-ml" or "required"');
  }
  if (c.cacheMode !== undefined) checkCacheMode(c.cacheMode, "cfg.cacheMode");
  if (c.memoryBudget !== undefined) checkMemoryBudget(c.memoryBudget, "cfg.memoryBudget");
  if (c.memoryAccounting !== undefined && typeof c.memoryAccounting !== "boolean")
    throw bad("memoryAccounting", describeValue(c.memoryAccounting), "true or false");
  if (c.memoryAccounting === false && c.memoryBudget !== undefined && c.memoryBudget !== null)
    throw bad(
      "memoryBudget",
      c.memoryBudget,
      "no budget when memoryAccounting is false (a budget needs the accounting)",
    );
  return c;
}

/** Check a memory budget: null (none) or a positive safe integer of bytes. Throws INVALID_ARGUMENT naming `field`. */
export function checkMemoryBudget(bytes: unknown, field: string): number | null {
  if (bytes === null) return null;
  if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad GPU memory budget", {
      field,
      value: describeValue(bytes),
      expected: "a positive safe integer of bytes, or null (no budget)",
    });
  }
  return bytes;
}

/** The `missing` features: throws UNSUPPORTED naming the first one. */
export function checkFeatures(
  required: readonly string[] | undefined,
  available: ReadonlySet<string>,
  owner: string,
): void {
  for (const feature of required ?? []) {
    if (!available.has(feature)) {
      throw new WebDLPackError("UNSUPPORTED", `the ${owner} does not support feature "${feature}"`, {
        field: "cfg.requiredFeatures",
        value: feature,
        expected: `one of the ${owner}'s features: [${[...available].sort().join(", ")}]`,
      });
    }
  }
}

/** Check requested limits against what `supported` allows: throws INVALID_ARGUMENT / UNSUPPORTED. */
export function checkLimits(
  required: Record<string, number> | undefined,
  supported: GPUSupportedLimits,
  owner: string,
): void {
  for (const [name, value] of Object.entries(required ?? {})) {
    const have = (supported as unknown as Record<string, unknown>)[name];
    if (typeof have !== "number") {
      throw new WebDLPackError("INVALID_ARGUMENT", `unknown WebGPU limit "${name}"`, {
        field: `cfg.requiredLimits.${name}`,
        value,
        expected: "a GPUSupportedLimits name such as maxBufferSize",
      });
    }
    // Alignment limits ("min…") are better when smaller; the others when larger.
    const ok = name.startsWith("min") ? value >= have : value <= have;
    if (!ok) {
      throw new WebDLPackError("UNSUPPORTED", `the ${owner} does not support ${name} = ${value}`, {
        field: `cfg.requiredLimits.${name}`,
        value,
        expected: `${name.startsWith("min") ? ">=" : "<="} ${have} (the ${owner}'s limit)`,
      });
    }
  }
}

/** Request adapter and device per `cfg`, or take `cfg.device`. */
export async function acquireDevice(cfg: SetupConfig): Promise<AcquiredDevice> {
  if (cfg.device !== undefined) {
    checkFeatures(cfg.requiredFeatures, cfg.device.features as ReadonlySet<string>, "given device");
    checkLimits(cfg.requiredLimits, cfg.device.limits, "given device");
    const info =
      summarizeAdapterInfo((cfg.device as { adapterInfo?: unknown }).adapterInfo) ??
      summarizeAdapterInfo(cfg.adapterInfo);
    return { device: cfg.device, adapterInfo: info, requestedFeatures: [] };
  }
  const gpu = cfg.gpu ?? (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) {
    throw new WebDLPackError(
      "NO_WEBGPU",
      "WebGPU is not available: navigator.gpu is undefined " +
        "(a browser without WebGPU, or a page that is not a secure context: serve it from https:// or http://127.0.0.1)",
      {
        field: "navigator.gpu",
        value: undefined,
        expected: "a GPU object",
      },
    );
  }
  let adapter: GPUAdapter | null;
  try {
    const options: GPURequestAdapterOptions = {};
    if (cfg.powerPreference !== undefined) options.powerPreference = cfg.powerPreference;
    adapter = await gpu.requestAdapter(options);
  } catch (err) {
    throw new WebDLPackError("NO_ADAPTER", `navigator.gpu.requestAdapter failed: ${String(err)}`, {
      field: "cfg.powerPreference",
      value: cfg.powerPreference,
      expected: "an adapter",
      cause: err,
    });
  }
  if (!adapter) {
    throw new WebDLPackError(
      "NO_ADAPTER",
      "navigator.gpu.requestAdapter returned no adapter (WebGPU disabled, blocklisted GPU, or no GPU)",
      {
        field: "cfg.powerPreference",
        value: cfg.powerPreference,
        expected: "an adapter",
      },
    );
  }
  checkFeatures(cfg.requiredFeatures, adapter.features as ReadonlySet<string>, "adapter");
  checkLimits(cfg.requiredLimits, adapter.limits, "adapter");
  const descriptor: GPUDeviceDescriptor = { label: cfg.label ?? "webdlpack device 0" };
  const features = new Set<string>(cfg.requiredFeatures ?? []);
  if (cfg.features !== "required") for (const f of ML_FEATURES) if (adapter.features.has(f)) features.add(f);
  const requestedFeatures = [...features].sort();
  if (requestedFeatures.length > 0) descriptor.requiredFeatures = requestedFeatures as GPUFeatureName[];
  const limits: Record<string, number> = {};
  if (cfg.limits !== "default") {
    const supported = adapter.limits as unknown as Record<string, unknown>;
    for (const name of ML_LIMITS) {
      const value = supported[name];
      if (typeof value === "number") limits[name] = value;
    }
  }
  Object.assign(limits, cfg.requiredLimits ?? {});
  if (Object.keys(limits).length > 0) descriptor.requiredLimits = limits;
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice(descriptor);
  } catch (err) {
    throw new WebDLPackError("GPU_ERROR", `adapter.requestDevice failed: ${String(err)}`, {
      field: "cfg",
      value: undefined,
      expected: "a device for the requested features and limits",
      cause: err,
    });
  }
  return { device, adapterInfo: summarizeAdapterInfo((adapter as { info?: unknown }).info), requestedFeatures };
}

/** Describe device 0 as a frozen plain object. */
export function describeDevice(
  id: number,
  device: GPUDevice,
  adapterInfo: AdapterInfoSummary | null,
  requestedFeatures: readonly string[] = [],
): DeviceInfo {
  const l = device.limits;
  const limits: LimitsSummary = Object.freeze({
    maxBufferSize: l.maxBufferSize,
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment,
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    maxComputeWorkgroupSizeX: l.maxComputeWorkgroupSizeX,
    maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
  });
  const features = Object.freeze([...(device.features as ReadonlySet<string>)].sort());
  return Object.freeze({
    id,
    adapterInfo: adapterInfo ? Object.freeze({ ...adapterInfo }) : null,
    features,
    requestedFeatures: Object.freeze([...requestedFeatures].sort()),
    limits,
  });
}
