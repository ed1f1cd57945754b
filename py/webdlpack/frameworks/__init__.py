"""JS frameworks from Python: ONNX Runtime Web (:mod:`.ort`) and TensorFlow.js (:mod:`.tfjs`).

The page (or the notebook) loads the framework; Python gets its namespace with
``from pyscript.js_modules import ort`` or ``ort = await run_js("import('...')")``
and passes it in. webdlpack tensors go to the framework and come back over the
same GPU buffers, on the one device of the page's webdlpack context: no copy.
These helpers need the JS half the package loads itself (``import webdlpack``,
``await webdlpack.init()``).
"""

from . import ort, tfjs

__all__ = ["ort", "tfjs"]
