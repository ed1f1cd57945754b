/* webdlpack: the one string helper tvmjs's runtime uses from TVM's support utilities. */
#ifndef WEBDLPACK_TVM_SHIM_SUPPORT_UTILS_H_
#define WEBDLPACK_TVM_SHIM_SUPPORT_UTILS_H_
#include <string>

namespace tvm {
namespace support {

/*! \brief True when `text` begins with `prefix`. */
inline bool StartsWith(const std::string &text, const std::string &prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace support
}  // namespace tvm
#endif
