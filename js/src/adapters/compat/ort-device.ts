/**
 * Which way ONNX Runtime Web gets webdlpack's shared GPUDevice, by ORT version.
 *
 * - 1.30 and later: the device goes in the session options (`executionProviders: [{name: "webgpu", device}]`).
 * - 1.23–1.29: a device given there is imported into a WebGPU instance made without timed waits, and the first
 *   `run` fails with "Failed to wait for the operation:3". ORT's own device works: it makes its own instance
 *   (with timed waits) and requests an adapter and a device through `navigator.gpu`. So the options name no
 *   device, and {@link provideDeviceToOrt} answers ORT's own request with the shared device: from the moment
 *   the session options are made (`binding.sessionOptions()`, right before `InferenceSession.create`) until
 *   the first `requestDevice`, `navigator.gpu.requestAdapter` gives adapters whose `requestDevice` resolves
 *   to ORT's guard of the shared device (when it has every feature and limit ORT asks for; the context's
 *   `setup()` asks for them, setup.ts ML_LIMITS/ML_FEATURES; timestamp-query, for its profiling, it does without). Another framework that makes its own device
 *   inside that window would get ORT's guard: create the ORT session first.
 *   These ORT versions destroy their device when their last session is released (on the guard: only ORT's hold
 *   goes) and request a new one with the next session. So the route is armed again by the next session options
 *   made after that: ORT's guard is then a new one ({@link provideDeviceToOrt} is given the guard of the moment,
 *   and arms once per guard), and the next session runs on the shared device again, not on one of ORT's own.
 * - Before 1.23 (JSEP builds): not supported (the adapter refuses them, UNSUPPORTED naming the version).
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import { atLeastVersion, checkFrameworkVersion } from "./versions.js";
import type { OrtLike } from "../framework-types.js";

/** The first version that takes a device in the session options. */
const ORT_DEVICE_OPTION = "1.30.0";

/** How ORT gets the shared device. */
export type OrtDeviceRoute = "session-options" | "own-request";

function versionOf(ort: OrtLike): string | undefined {
  const versions = (ort?.env as { versions?: { web?: unknown; common?: unknown } } | undefined)?.versions;
  const v = versions?.web ?? versions?.common;
  return typeof v === "string" ? v : undefined;
}

/**
 * The route for this ORT, or UNSUPPORTED (field `ort.env.versions.web`) naming its version and the
 * supported range. An ORT that does not say its version is taken as current (the device in the options).
 */
export function ortDeviceRoute(ort: OrtLike): OrtDeviceRoute {
  const version = versionOf(ort);
  if (version === undefined) return "session-options";
  const why = " (its WebGPU build cannot run on a device it did not make)";
  checkFrameworkVersion("onnxruntime-web", version, "ort.env.versions.web", why);
  return atLeastVersion(version, ORT_DEVICE_OPTION) ? "session-options" : "own-request";
}

/** Hooks installed per GPU object (one at a time), and the guard each ORT environment was last given. */
const hooked = new WeakSet<object>();
const provided = new WeakMap<object, GPUDevice>();

/**
 * Features ORT asks for when the adapter has them but runs without: it reads the features of the device it
 * gets (ORT 1.23 ran the adapter specs on a device without timestamp-query, which serves only its profiling).
 */
const ORT_OPTIONAL_FEATURES: ReadonlySet<string> = new Set(["timestamp-query"]);

/** Throw UNSUPPORTED unless `device` has what ORT asked for in `descriptor` (but {@link ORT_OPTIONAL_FEATURES}). */
function checkRequest(descriptor: GPUDeviceDescriptor | undefined, device: GPUDevice): void {
  for (const feature of descriptor?.requiredFeatures ?? []) {
    if (!device.features.has(feature) && !ORT_OPTIONAL_FEATURES.has(feature)) {
      throw new WebDLPackError("UNSUPPORTED", `ONNX Runtime asks for the WebGPU feature ${feature}`, {
        field: "requestDevice.requiredFeatures",
        value: feature,
        expected: `a feature of the shared device (${[...device.features].join(", ")})`,
      });
    }
  }
  for (const [name, value] of Object.entries(descriptor?.requiredLimits ?? {})) {
    const have = (device.limits as unknown as Record<string, number>)[name];
    if (typeof value !== "number" || have === undefined) continue;
    if (name.startsWith("min") ? value < have : value > have) {
      throw new WebDLPackError("UNSUPPORTED", `ONNX Runtime asks for ${name} = ${value}`, {
        field: `requestDevice.requiredLimits.${name}`,
        value,
        expected: `what the shared device has (${have})`,
      });
    }
  }
}

/**
 * Answer `navigator.gpu.requestAdapter` with the real adapter whose `requestDevice` resolves to `device`
 * (ORT's guard), until that first `requestDevice` (ORT's, in its next session's creation). Once per guard:
 * ORT holds a guard until it destroys it (its last session released), and the guard of the moment is then
 * a new one, which arms the route again. For the "own-request" route.
 */
export function provideDeviceToOrt(ort: OrtLike, device: GPUDevice): void {
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (gpu === undefined || hooked.has(gpu) || provided.get(ort.env) === device) return;
  provided.set(ort.env, device);
  const own = Object.getOwnPropertyDescriptor(gpu, "requestAdapter");
  const original = gpu.requestAdapter;
  const unhook = (): void => {
    if (own !== undefined) Object.defineProperty(gpu, "requestAdapter", own);
    else delete (gpu as { requestAdapter?: unknown }).requestAdapter;
    hooked.delete(gpu);
  };
  hooked.add(gpu);
  Object.defineProperty(gpu, "requestAdapter", {
    configurable: true,
    writable: true,
    value: async (options?: GPURequestAdapterOptions): Promise<GPUAdapter | null> => {
      const adapter = await original.call(gpu, options);
      if (adapter === null) return null;
      // ORT's JS asks for an adapter only to check one exists; its wasm side then asks again and requests the device.
      const requestDevice = async (descriptor?: GPUDeviceDescriptor): Promise<GPUDevice> => {
        if (!hooked.has(gpu)) return adapter.requestDevice(descriptor);
        unhook();
        checkRequest(descriptor, device);
        return device;
      };
      return new Proxy(adapter, {
        get(target, key) {
          if (key === "requestDevice") return requestDevice;
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
  });
  if (typeof original !== "function") {
    unhook();
    throw new WebDLPackError("NO_WEBGPU", "navigator.gpu.requestAdapter is not a function", {
      field: "navigator.gpu.requestAdapter",
      value: describeValue(original),
      expected: "a WebGPU implementation",
    });
  }
}
