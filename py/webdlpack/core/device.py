"""Devices: the :class:`Device` value type, ``"cpu"`` / ``"webgpu:0"`` strings and DLPack tuples."""

from __future__ import annotations

import dataclasses
from typing import Any

from .abi import DLDeviceType as D
from .errors import ErrorCode, WebDLPackValueError

__all__ = ["Device", "device", "CPU"]

_NAMES: dict[int, str] = {
    D.kDLCPU: "cpu",
    D.kDLCUDA: "cuda",
    D.kDLCUDAHost: "cuda_host",
    D.kDLOpenCL: "opencl",
    D.kDLVulkan: "vulkan",
    D.kDLMetal: "metal",
    D.kDLVPI: "vpi",
    D.kDLROCM: "rocm",
    D.kDLROCMHost: "rocm_host",
    D.kDLExtDev: "ext_dev",
    D.kDLCUDAManaged: "cuda_managed",
    D.kDLOneAPI: "oneapi",
    D.kDLWebGPU: "webgpu",
    D.kDLHexagon: "hexagon",
    D.kDLMAIA: "maia",
    D.kDLTrn: "trn",
}
_BY_NAME = {v: k for k, v in _NAMES.items()}


@dataclasses.dataclass(frozen=True)
class Device:
    """A DLPack device: a :class:`~webdlpack.core.abi.DLDeviceType` and an index.

    Parameters
    ----------
    type : int
        Device type, e.g. 1 (CPU) or 15 (WebGPU).
    id : int, default 0
        Index among devices of that type (0 for CPU; a webdlpack device id for WebGPU).

    Notes
    -----
    ``str(Device(1, 0)) == "cpu"`` and ``str(Device(15, 0)) == "webgpu:0"``.
    Build one from a string or a tuple with :func:`webdlpack.device`.
    """

    type: int
    id: int = 0

    def __post_init__(self) -> None:
        if self.type not in _NAMES:
            raise WebDLPackValueError(
                ErrorCode.BAD_DEVICE,
                "unknown device type",
                field="DLDevice.device_type",
                value=self.type,
                expected="a DLDeviceType value (1 = CPU, 15 = WebGPU, ...)",
            )
        if not 0 <= self.id < 2**31:
            raise WebDLPackValueError(
                ErrorCode.BAD_DEVICE,
                "device id out of range",
                field="DLDevice.device_id",
                value=self.id,
                expected="0 <= device_id < 2**31",
            )
        if self.type == D.kDLCPU and self.id != 0:
            raise WebDLPackValueError(
                ErrorCode.BAD_DEVICE, "the CPU device has id 0", field="DLDevice.device_id", value=self.id, expected="0"
            )

    @property
    def name(self) -> str:
        """The device type's short name: ``"cpu"``, ``"webgpu"``, ``"cuda"``, ..."""
        return _NAMES[self.type]

    @property
    def is_cpu(self) -> bool:
        """True for host memory (the wasm linear memory inside Pyodide)."""
        return self.type == D.kDLCPU

    def to_dlpack(self) -> tuple[D, int]:
        """``(DLDeviceType, id)``, the value ``__dlpack_device__`` returns."""
        return (D(self.type), self.id)

    def __str__(self) -> str:
        return "cpu" if self.is_cpu else f"{self.name}:{self.id}"

    def __repr__(self) -> str:
        return f"webdlpack.device({str(self)!r})"


#: The one CPU device.
CPU = Device(D.kDLCPU, 0)


def device(spec: Any) -> Device:
    """Make a :class:`Device` from ``"cpu"``, ``"webgpu:0"``, ``(type, id)`` or a Device.

    Parameters
    ----------
    spec : str or tuple or Device
        A name with an optional ``:index``, a DLPack ``(device_type, device_id)``
        tuple (as ``__dlpack_device__`` returns), or a Device.

    Returns
    -------
    Device

    Raises
    ------
    WebDLPackValueError
        Unknown names, malformed strings or tuples (code ``BAD_DEVICE``).
    """
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, str):
        name, sep, index = spec.partition(":")
        if name not in _BY_NAME or (sep and not index.isdigit()):
            raise WebDLPackValueError(
                ErrorCode.BAD_DEVICE,
                "device not understood",
                field="device",
                value=spec,
                expected="'cpu' or '<type>:<index>' such as 'webgpu:0'",
            )
        return Device(_BY_NAME[name], int(index) if sep else 0)
    if isinstance(spec, tuple) and len(spec) == 2:
        dev_type, dev_id = spec
        try:
            return Device(int(dev_type), int(dev_id))
        except (TypeError, ValueError) as err:
            if isinstance(err, WebDLPackValueError):
                raise
            raise WebDLPackValueError(
                ErrorCode.BAD_DEVICE,
                "device tuple must hold two integers",
                field="device",
                value=spec,
                expected="(device_type, device_id)",
            ) from None
    raise WebDLPackValueError(
        ErrorCode.BAD_DEVICE,
        "device not understood",
        field="device",
        value=spec,
        expected="a string like 'cpu' / 'webgpu:0', a (type, id) tuple or a Device",
    )
