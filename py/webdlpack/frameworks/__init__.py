"""JS frameworks from Python: ONNX Runtime Web (:mod:`.ort`) and TensorFlow.js (:mod:`.tfjs`).

The page (or the notebook) loads the framework; Python gets its namespace with
``from pyscript.js_modules import ort`` or ``ort = await run_js("import('...')")``
and passes it in. webdlpack tensors go to the framework and come back over the
same GPU buffers, on the one device of the page's webdlpack context: no copy.
These helpers need the JS half the package loads itself (``import webdlpack``,
``await webdlpack.init()``).
"""

from typing import Any

from ..bridge.boot import js_half_function
from . import ort, tfjs

__all__ = ["handoff", "ort", "tfjs"]


def handoff(framework_tensor: Any) -> dict[str, Any] | None:
    """How webdlpack made ``framework_tensor`` (e.g. :func:`tfjs.to_tfjs`'s result): shared bytes or a copy, and why.

    Returns
    -------
    dict or None
        ``{"zero_copy": bool, "reason": str | None}`` (the reason a copy was made), or None for a tensor webdlpack
        did not make.
    """
    info = js_half_function("handoffInfo")(framework_tensor)
    return None if info is None else {"zero_copy": bool(info[0]), "reason": None if info[1] is None else str(info[1])}
