"""Test hooks: counters that show every managed struct is freed exactly once."""

from __future__ import annotations

from ..bridge.gpu import gpu_stats as _gpu_stats
from ..exchange import export as _export
from ..exchange import owner as _owner

__all__ = ["live_exports", "export_stats", "live_imports", "import_stats", "gpu_stats"]


def live_exports() -> int:
    """Number of exported managed structs whose deleter has not run yet."""
    return _export.stats()["live"]


def export_stats() -> dict[str, int]:
    """``{"created", "deleted", "live", "unknown_deletes"}`` for exports since import.

    ``unknown_deletes`` counts deleter calls on addresses that are not live
    exports (a consumer calling a deleter twice); it must stay 0.
    """
    return _export.stats()


def live_imports() -> int:
    """Number of adopted managed structs whose producer deleter has not run yet."""
    return _owner.stats()["live"]


def import_stats() -> dict[str, int]:
    """``{"adopted", "released", "live"}`` for imported managed structs since import."""
    return _owner.stats()


def gpu_stats() -> dict[str, int]:
    """``{"allocated", "freed", "live", "free_errors"}`` for GPU pointers Python allocated since import."""
    return _gpu_stats()
