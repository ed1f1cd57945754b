/**
 * Giving an adopted ONNX Runtime output back to ORT when its last webdlpack holder lets go.
 *
 * ORT takes an output's buffer back through a function of its wasm module (`ortTensor.dispose()` calls it).
 * Once the last session of ORT's WebGPU backend was released, that function is gone, and `dispose()` throws
 * ORT's raw `WebAssembly.RuntimeError` ("null function" in 1.30, "function signature mismatch" in 1.23; seen in
 * headless Chromium) while the buffer stays alive on the device with nobody left to free it. So webdlpack's
 * release never lets that error out of `Tensor.dispose()`: the holder that let go was the last one, and ORT can no
 * longer take the buffer, so webdlpack destroys it. Any other error from ORT's `dispose()` (ORT still running, the
 * buffer possibly still ORT's) leaves the buffer to ORT and is reported, typed, as an uncaught error
 * (`reportError`: an "error" event), never thrown from `dispose()`. docs/ownership.md, "Teardown".
 */
import { reportUncaught, WebDLPackError } from "../errors.js";
import type { OrtTensorLike } from "./framework-types.js";

/** Dispose `ortTensor` (an adopted output over `buffer`); see the file comment for what happens when ORT cannot. */
export function giveBackOrtOutput(ortTensor: OrtTensorLike, buffer: GPUBuffer | undefined, label: string): void {
  try {
    ortTensor.dispose();
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) {
      buffer?.destroy(); // ORT's backend is gone (its last session released): the buffer is freed here
      return;
    }
    reportUncaught(
      new WebDLPackError("INVALID_ARGUMENT", `ONNX Runtime refused to take back the buffer of ${label}: ${err}`, {
        field: "ortTensor.dispose()",
        value: err instanceof Error ? err.name : typeof err,
        expected: "an ORT output ORT can dispose (its session's backend alive), disposed by webdlpack only",
        cause: err,
      }),
      "ortTensor.dispose()",
    );
  }
}
