"""Foreign-device producers on CPython (issue 12, item 9): a torch CUDA tensor, a CuPy array or a JAX GPU array —
simulated here by producers whose ``__dlpack_device__`` and struct say ``cuda:0`` / ``rocm:1`` — are refused by
``from_dlpack`` with a typed error naming the device before ``__dlpack__`` runs, unless ``device="cpu"`` asks the
producer for a CPU copy, which still works."""

from __future__ import annotations

import pytest
import webdlpack as w
from handmade import DLPackObject, Producer


class GPUArray:
    """What torch/CuPy/JAX GPU arrays do: say where the data is, and copy to the CPU when dl_device asks for it."""

    def __init__(self, device: tuple[int, int]):
        self.device = device
        self.on_device = Producer(shape=(3,), device=device)
        self.on_cpu = Producer(shape=(3,), flags=2)  # IS_COPIED: the copy the producer made
        self.calls: list[dict] = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if kwargs.get("dl_device") == (1, 0):
            return self.on_cpu.capsule()
        return self.on_device.capsule()


@pytest.mark.parametrize("device,name", [((2, 0), "cuda:0"), ((10, 1), "rocm:1"), ((13, 0), "cuda_managed:0")])
def test_foreign_device_is_refused_before_the_producer_runs(device, name):
    x = GPUArray(device)
    with pytest.raises(w.WebDLPackDeviceError) as err:
        w.from_dlpack(x)
    e = err.value
    assert isinstance(e, BufferError)
    assert e.code.name == "BAD_DEVICE" and e.field == "x.__dlpack_device__()"
    assert name.split(":")[0] in str(e.value) and "device='cpu'" in str(e)
    assert x.calls == []  # no capsule made, nothing to release


def test_device_cpu_asks_the_producer_for_a_cpu_copy():
    x = GPUArray((2, 0))
    t = w.from_dlpack(x, device="cpu")
    assert t.device == w.device("cpu") and t.flags.is_copied and t.shape == (3,)
    assert x.calls[0]["dl_device"] == (1, 0)
    t.dispose()
    assert x.on_cpu.deleted == 1 and x.on_device.deleted == 0


def test_producer_without_dlpack_device_giving_cuda_data_is_refused_and_released():
    p = Producer(shape=(3,), device=(2, 0))

    class NoDevice:
        def __dlpack__(self, **kwargs):
            return p.capsule()

    with pytest.raises(w.WebDLPackDeviceError) as err:
        w.from_dlpack(NoDevice())
    assert err.value.code.name == "BAD_DEVICE" and err.value.field == "DLTensor.device" and err.value.value == "cuda:0"
    assert p.deleted == 1  # taken, refused, released at once


def test_cpu_producers_are_unaffected():
    p = Producer(shape=(2, 2))
    t = w.from_dlpack(DLPackObject(p))
    assert t.data_ptr == p.struct.dl_tensor.data and not t.flags.is_copied
    t.dispose()
    assert p.deleted == 1
