/* webdlpack: NVTX profiler ranges; the web has no CUDA, so a range is a name that does nothing. */
#ifndef WEBDLPACK_TVM_SHIM_NVTX_H_
#define WEBDLPACK_TVM_SHIM_NVTX_H_
#include <string>

namespace tvm {
namespace support {

/*! \brief A profiler range over a scope; a no-op here. */
class NVTXScopedRange {
 public:
  explicit NVTXScopedRange(const char *) {}
  explicit NVTXScopedRange(const std::string &) {}
  NVTXScopedRange(const NVTXScopedRange &) = delete;
  NVTXScopedRange &operator=(const NVTXScopedRange &) = delete;
};

}  // namespace support
}  // namespace tvm
#endif
