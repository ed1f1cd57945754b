"""The one crossing from Python into JavaScript: the ``webdlpack_js`` module, in four jobs.

- :mod:`.calls`: loading ``webdlpack_js`` and calling it (the only module that imports JavaScript);
- :mod:`.errors`: :func:`translate`, the only place a JS error becomes a Python one;
- :mod:`.waits`: blocking on a JS Promise (JSPI) or awaiting it;
- :mod:`.handover`: DLPack structs across (import, export, deleter calls).

On CPython, or in a Pyodide where the bridge was not loaded, every call here
raises a typed error: :class:`~webdlpack.WebDLPackDeviceError` (code
``NO_WEBGPU``) naming the device for GPU work, and
:class:`~webdlpack.WebDLPackBufferError` (``UNSUPPORTED``) for tensor hand-over.
"""

from .calls import (
    JsException,
    bridge_loaded,
    call,
    import_js_module,
    is_js_proxy,
    js_module,
    note_unavailable,
    pyodide_api,
)
from .errors import translate
from .handover import (
    deleter_caller,
    export_versioned,
    export_versioned_functions,
    import_versioned,
    is_js_tensor,
    managed_from_js,
)
from .waits import can_wait, require_wait, wait, wait_async

__all__ = [
    "bridge_loaded",
    "js_module",
    "translate",
    "call",
    "can_wait",
    "require_wait",
    "wait",
    "wait_async",
    "is_js_proxy",
    "is_js_tensor",
    "import_versioned",
    "managed_from_js",
    "export_versioned",
    "export_versioned_functions",
    "JsException",
    "deleter_caller",
    "import_js_module",
    "note_unavailable",
    "pyodide_api",
]
