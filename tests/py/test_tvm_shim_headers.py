"""The headers webdlpack writes for the tvmjs build (scripts/tvm/include/) do what TVM's runtime relies on.

Compiled natively with g++ (the bootstrap installs it) into a small program that writes its results; checked here:
float16 <-> float32 against NumPy (every float16, and float32 values around every float16 rounding boundary,
overflow, subnormals, NaN), the byte ring buffer against a Python deque, base64 against the standard library.
The TVM support headers these include are replaced by tiny stand-ins (the test needs no TVM).
"""

from __future__ import annotations

import base64
import random
import shutil
import subprocess
from collections import deque
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "scripts" / "tvm" / "include"

PROGRAM = r"""
#include <builtin_fp16.h>
#include <support/base64.h>
#include <support/bytes_io.h>
#include <support/ring_buffer.h>
#include <support/arena.h>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  FILE* out = std::fopen(argv[1], "wb");
  for (uint32_t h = 0; h < 65536; ++h) {  // every float16 -> float32
    float v = __gnu_h2f_ieee(static_cast<uint16_t>(h));
    std::fwrite(&v, 4, 1, out);
  }
  uint32_t n;
  std::fread(&n, 4, 1, stdin);
  for (uint32_t i = 0; i < n; ++i) {  // float32 -> float16
    float f;
    std::fread(&f, 4, 1, stdin);
    uint16_t h = __gnu_f2h_ieee(f);
    std::fwrite(&h, 2, 1, out);
  }
  // Ring buffer: a script of writes and reads from stdin, the bytes read out.
  tvm::support::RingBuffer ring;
  uint32_t ops;
  std::fread(&ops, 4, 1, stdin);
  std::string chunk;
  for (uint32_t i = 0; i < ops; ++i) {
    int32_t op;
    std::fread(&op, 4, 1, stdin);
    if (op > 0) {
      chunk.resize(op);
      std::fread(&chunk[0], 1, op, stdin);
      ring.Write(chunk.data(), chunk.size());
    } else if (op < 0) {
      chunk.resize(-op);
      ring.Read(&chunk[0], chunk.size());
      std::fwrite(chunk.data(), 1, chunk.size(), out);
    } else {  // send everything through the callback API
      while (ring.bytes_available() != 0) {
        ring.ReadWithCallback([&](const void* p, size_t k) { return std::fwrite(p, 1, k, out); },
                              ring.bytes_available());
      }
    }
  }
  // Base64 of 0..299, then decoded back.
  std::string text;
  {
    tvm::support::BytesOutStream sink(&text);
    tvm::support::Base64OutStream b64(&sink);
    for (int i = 0; i < 300; ++i) {
      unsigned char c = static_cast<unsigned char>(i * 7);
      b64.Write(&c, 1);
    }
    b64.Finish();
  }
  std::fwrite(text.data(), 1, text.size(), out);
  tvm::support::BytesInStream src(text);
  tvm::support::Base64InStream dec(&src);
  dec.InitPosition();
  unsigned char back[300];
  size_t got = dec.Read(back, sizeof(back));
  std::fwrite(back, 1, got, out);
  tvm::support::Arena arena;
  double* d = arena.allocate_<double>(1000);
  for (int i = 0; i < 1000; ++i) d[i] = i;
  char* c = arena.allocate_<char>(70000);
  std::memset(c, 1, 70000);
  std::printf("%d %d", static_cast<int>(reinterpret_cast<uintptr_t>(d) % alignof(double)), static_cast<int>(d[999]));
  arena.RecycleAll();
  std::fclose(out);
  return 0;
}
"""

# What the headers include from TVM and tvm-ffi, reduced to what they use.
STUB_IO = """#pragma once
#include <cstddef>
namespace tvm { namespace support {
class Stream { public:
  virtual size_t Read(void* ptr, size_t size) = 0;
  virtual size_t Write(const void* ptr, size_t size) = 0;
  virtual ~Stream() = default; };
}}
"""
STUB_BYTES_IO = """#pragma once
#include <tvm/support/io.h>
#include <algorithm>
#include <cstring>
#include <string>
namespace tvm { namespace support {
class BytesOutStream : public Stream { public:
  explicit BytesOutStream(std::string* s) : s_(s) {}
  size_t Write(const void* p, size_t n) override { s_->append(static_cast<const char*>(p), n); return n; }
  size_t Read(void*, size_t) override { return 0; }
  std::string* s_; };
class BytesInStream : public Stream { public:
  explicit BytesInStream(const std::string& s) : s_(s) {}
  size_t Read(void* p, size_t n) override { n = std::min(n, s_.size() - at_); std::memcpy(p, s_.data() + at_, n);
    at_ += n; return n; }
  size_t Write(const void*, size_t) override { return 0; }
  const std::string& s_; size_t at_ = 0; };
}}
"""
STUB_ERROR = """#pragma once
#include <cstdlib>
#include <sstream>
struct WdlFail { ~WdlFail() { std::abort(); } template <class T> WdlFail& operator<<(const T&) { return *this; } };
#define TVM_FFI_THROW(kind) WdlFail()
#define TVM_FFI_ICHECK(cond) if (!(cond)) WdlFail()
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gxx = shutil.which("g++")
    assert gxx is not None, "g++ is installed by scripts/bootstrap.sh"
    work = tmp_path_factory.mktemp("shim")
    for rel, text in {
        "tvm/support/io.h": STUB_IO,
        "tvm/support/bytes_io.h": STUB_BYTES_IO,
        "tvm/ffi/error.h": STUB_ERROR,
    }.items():
        (work / "stubs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "stubs" / rel).write_text(text)
    (work / "main.cc").write_text(PROGRAM)
    exe = work / "shim"
    flags = [
        "-std=c++17",
        "-O1",
        "-Wall",
        "-Werror",
        f"-I{work / 'stubs'}",
        f"-I{INCLUDE}",
        f"-I{INCLUDE / 'compiler-rt'}",
    ]  # support/bytes_io.h forwards to <tvm/support/bytes_io.h>: the stub
    subprocess.run([gxx, *flags, str(work / "main.cc"), "-o", str(exe)], check=True)
    return exe


def _run(program: Path, floats: np.ndarray, ring_script: list[tuple[int, bytes]], out: Path) -> tuple[bytes, str]:
    stdin = bytearray(np.uint32(len(floats)).tobytes() + floats.astype("<f4").tobytes())
    stdin += np.uint32(len(ring_script)).tobytes()
    for op, data in ring_script:
        stdin += np.int32(op).tobytes() + data
    done = subprocess.run([str(program), str(out)], input=bytes(stdin), capture_output=True, check=True)
    return out.read_bytes(), done.stdout.decode()


def test_shim_headers_match_numpy_deque_and_base64(program: Path, tmp_path: Path) -> None:
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    # float32 probes: every float16 value, the midpoints between neighbours (ties), a hair either side of each
    # midpoint, overflow, subnormals, NaN and infinities.
    finite = np.sort(halves[np.isfinite(halves)].astype(np.float32))
    mids = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    probes = np.concatenate(
        [
            finite,
            mids,
            np.nextafter(mids, np.float32(np.inf)),
            np.nextafter(mids, np.float32(-np.inf)),
            np.array(
                [65519.0, 65520.0, 1e6, -1e6, 1e-8, -1e-8, 2.0**-25, 2.0**-24, np.inf, -np.inf, np.nan],
                dtype=np.float32,
            ),
        ]
    )
    rng = random.Random(7)
    script: list[tuple[int, bytes]] = []
    model: deque[int] = deque()
    expected_ring = bytearray()
    for _ in range(400):
        if rng.random() < 0.55 or not model:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
            script.append((len(data), data))
            model.extend(data)
        elif rng.random() < 0.9:
            k = rng.randrange(1, len(model) + 1)
            script.append((-k, b""))
            expected_ring += bytes(model.popleft() for _ in range(k))
        else:
            script.append((0, b""))
            expected_ring += bytes(model)
            model.clear()
    raw, printed = _run(program, probes, script, tmp_path / "out.bin")
    h2f = np.frombuffer(raw[: 65536 * 4], dtype="<f4")
    want = halves.astype(np.float32)
    nan = np.isnan(want)
    # exact: float16 -> float32 widening is exact; the same bits as NumPy's conversion
    assert np.array_equal(h2f.view(np.uint32)[~nan], want.view(np.uint32)[~nan]) and np.isnan(h2f[nan]).all()
    at = 65536 * 4
    f2h = np.frombuffer(raw[at : at + 2 * len(probes)], dtype="<u2")
    with np.errstate(over="ignore"):  # the overflow probes become infinities, as they should
        ref = probes.astype(np.float16).view(np.uint16)
    nan = np.isnan(probes)
    # exact: round-to-nearest-even is defined bit by bit; NumPy's cast is the reference
    assert np.array_equal(f2h[~nan], ref[~nan]) and np.isnan(f2h[nan].view(np.float16)).all()
    at += 2 * len(probes)
    assert raw[at : at + len(expected_ring)] == bytes(expected_ring)
    at += len(expected_ring)
    payload = bytes((i * 7) % 256 for i in range(300))
    text = base64.b64encode(payload)
    assert raw[at : at + len(text)] == text
    assert raw[at + len(text) :] == payload
    assert printed == "0 999"
