/**
 * `ctx.setup()`: making device 0 once per page. Concurrent calls share one
 * request; a later call must not ask for what device 0 lacks; after device 0
 * is lost, the next call makes a new one (by default as the lost one was
 * asked for); a failed request may be retried. Setup ends once `prepare`
 * (the context's: measuring the device's transfers) has finished.
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import { unwrapDevice } from "./guard.js";
import type { AdapterInfoSummary, DeviceRecord } from "./registry.js";
import {
  acquireDevice,
  checkFeatures,
  checkLimits,
  checkSetupConfig,
  describeDevice,
  type DeviceInfo,
  type SetupConfig,
} from "./setup.js";

/** State of the shared setup() promise. */
interface SetupState {
  promise: Promise<DeviceInfo>;
  /** Set when the promise fulfilled. */
  record?: DeviceRecord;
  /** The config the device was made with (for later-call checks). */
  cfg: SetupConfig;
}

/** Registers a new device 0 (in the context's device registry) and returns its record. */
export type InstallDefaultDevice = (
  device: GPUDevice,
  adapterInfo: AdapterInfoSummary | null,
  config: SetupConfig,
) => DeviceRecord;

/** The setup() state of one context. */
export class DefaultDeviceSetup {
  #state: SetupState | undefined;
  readonly #install: InstallDefaultDevice;
  readonly #prepare: (device: GPUDevice, adapterInfo: AdapterInfoSummary | null) => Promise<void>;

  /** Setup that hands each new device 0 to `install`, then waits for `prepare` before it resolves. */
  constructor(
    install: InstallDefaultDevice,
    prepare: (device: GPUDevice, adapterInfo: AdapterInfoSummary | null) => Promise<void> = async () => {},
  ) {
    this.#install = install;
    this.#prepare = prepare;
  }

  /** `ctx.setup(cfg)`. */
  run(cfg?: SetupConfig): Promise<DeviceInfo> {
    let config: SetupConfig;
    try {
      config = checkSetupConfig(cfg);
      if (config.device !== undefined) config = { ...config, device: unwrapDevice(config.device) };
    } catch (err) {
      return Promise.reject(err);
    }
    const state = this.#state;
    if (state !== undefined) {
      if (state.record === undefined) return state.promise; // in flight: share it
      if (!state.record.lost) {
        try {
          checkLaterSetup(state.record, config);
        } catch (err) {
          return Promise.reject(err);
        }
        return state.promise;
      }
      // Device 0 was lost: make a new one, by default as the lost one was asked for.
      if (cfg === undefined) config = withoutDevice(state.cfg);
    }
    const fresh = { cfg: config } as SetupState;
    fresh.promise = acquireDevice(config).then(
      async ({ device, adapterInfo, requestedFeatures }) => {
        fresh.record = this.#install(device, adapterInfo, config);
        await this.#prepare(device, adapterInfo);
        return describeDevice(0, device, adapterInfo, requestedFeatures);
      },
      (err: unknown) => {
        // A failed setup may be retried; after a loss the lost state is kept so a
        // retry without cfg still uses the lost device's config.
        if (this.#state === fresh) this.#state = state;
        throw err;
      },
    );
    this.#state = fresh;
    return fresh.promise;
  }
}

/** A setup() call after success must not ask for something device 0 lacks. */
function checkLaterSetup(record: DeviceRecord, cfg: SetupConfig): void {
  if (cfg.device !== undefined && cfg.device !== record.device) {
    throw new WebDLPackError("INVALID_ARGUMENT", "setup() already made device 0 from another device", {
      field: "cfg.device",
      value: describeValue(cfg.device),
      expected: "no device, or the device 0 already in use",
    });
  }
  checkFeatures(cfg.requiredFeatures, record.device.features as ReadonlySet<string>, "existing device 0");
  checkLimits(cfg.requiredLimits, record.device.limits, "existing device 0");
}

/** A config for re-requesting after loss: same adapter options, minus the (lost) user device. */
function withoutDevice(cfg: SetupConfig): SetupConfig {
  const { device: _device, adapterInfo: _info, ...rest } = cfg;
  return rest;
}
