/* webdlpack: the byte streams live in <tvm/support/bytes_io.h> (from the apache-tvm-tirx wheel). */
#ifndef WEBDLPACK_TVM_SHIM_SUPPORT_BYTES_IO_H_
#define WEBDLPACK_TVM_SHIM_SUPPORT_BYTES_IO_H_
#include <tvm/support/bytes_io.h>
#endif
