/**
 * Devices room: which GPUDevice each device id names, making device 0, device
 * loss, and the per-owner guards that let frameworks share one device.
 *
 *   registry.ts        device ids, registration, device loss
 *   setup.ts           adapter/device request and the setup config
 *   default-device.ts  setup(): device 0, made once, again after loss
 *   guard.ts           per-owner device guards (a framework's destroy() drops only its reference)
 *   devices.ts         the room's calls: setup, getWebGPUDevice, (un)registerWebGPUDevice, onDeviceLost
 */
export type { SetupConfig, DeviceInfo, LimitsSummary } from "./setup.js";
export { ML_LIMITS, ML_FEATURES } from "./setup.js";
export type { AdapterInfoSummary, DeviceLostEvent, DeviceLostListener } from "./registry.js";
export { unwrapDevice, DEVICE_GUARD_TARGET } from "./guard.js";
