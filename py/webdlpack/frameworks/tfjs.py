"""TensorFlow.js from Python, on the page's shared WebGPU device.

::

    await webdlpack.frameworks.tfjs.use_shared_device(tf, WebGPUBackend)   # TF.js's 'webgpu' backend on it
    t = await webdlpack.frameworks.tfjs.to_tfjs(tf, x)      # a tf.Tensor over x's GPU buffer
    y = await webdlpack.frameworks.tfjs.from_tfjs(tf, tf.sigmoid(t))   # back: a webdlpack Tensor

``tf`` is ``@tensorflow/tfjs-core`` and ``WebGPUBackend`` the class of
``@tensorflow/tfjs-backend-webgpu``, as the page loaded them.
"""

from __future__ import annotations

from typing import Any

from ..api.js_tensors import from_js, to_js
from ..bridge.boot import js_half_function
from ..bridge.js import wait_async

__all__ = ["use_shared_device", "to_tfjs", "from_tfjs"]


async def use_shared_device(tf: Any, web_gpu_backend: Any) -> None:
    """Make TF.js's active ``'webgpu'`` backend run on webdlpack's device (replacing TF.js's own)."""
    await wait_async(js_half_function("tfjsUseContext")(tf, web_gpu_backend))


async def to_tfjs(tf: Any, x: Any) -> Any:
    """A ``tf.Tensor`` over ``x``'s bytes (a float32/int32 WebGPU tensor: the same GPUBuffer, no copy).

    TF.js keeps ``x``'s buffer alive until it releases the data; ``dispose()`` the result when done.
    """
    jt = to_js(x)
    try:
        return await wait_async(js_half_function("tfjsFromTensor")(tf, jt))
    finally:
        jt.dispose()


async def from_tfjs(tf: Any, t: Any) -> Any:
    """A ``webdlpack.Tensor`` over a TF.js tensor's data (WebGPU: TF.js's own buffer, read-only, no copy)."""
    jt = await wait_async(js_half_function("tfjsToTensor")(tf, t))
    try:
        return from_js(jt)
    finally:
        jt.dispose()
