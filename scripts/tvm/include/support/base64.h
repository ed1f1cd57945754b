/* webdlpack: base64 streams over another stream (RFC 4648 alphabet, '=' padding), for a tensor's JSON form. */
#ifndef WEBDLPACK_TVM_SHIM_SUPPORT_BASE64_H_
#define WEBDLPACK_TVM_SHIM_SUPPORT_BASE64_H_
#include <tvm/ffi/error.h>
#include <tvm/support/io.h>

#include <cstddef>
#include <cstdint>

namespace tvm {
namespace support {

namespace base64_detail {
inline const char *Alphabet() { return "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; }
/*! \brief The 6-bit value of `c`, -1 for padding or a character outside the alphabet. */
inline int Value(int c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace base64_detail

/*! \brief Encodes what is written to it into `out`; call Finish() after the last write. */
class Base64OutStream : public Stream {
 public:
  using Stream::Read;
  using Stream::Write;

  explicit Base64OutStream(Stream *out) : out_(out) {}

  size_t Write(const void *ptr, size_t size) override {
    const uint8_t *bytes = static_cast<const uint8_t *>(ptr);
    for (size_t i = 0; i < size; ++i) {
      group_[held_++] = bytes[i];
      if (held_ == 3) Emit();
    }
    return size;
  }

  size_t Read(void *, size_t) override {
    TVM_FFI_THROW(InternalError) << "read from a base64 output stream";
    return 0;
  }

  /*! \brief Write the last partial group with '=' padding. */
  void Finish() {
    if (held_ != 0) Emit();
  }

 private:
  void Emit() {
    const char *abc = base64_detail::Alphabet();
    uint32_t v = (uint32_t{group_[0]} << 16) | (held_ > 1 ? uint32_t{group_[1]} << 8 : 0u) |
                 (held_ > 2 ? uint32_t{group_[2]} : 0u);
    char text[4] = {abc[(v >> 18) & 63], abc[(v >> 12) & 63], held_ > 1 ? abc[(v >> 6) & 63] : '=',
                    held_ > 2 ? abc[v & 63] : '='};
    out_->Write(text, 4);
    held_ = 0;
  }

  Stream *out_;
  uint8_t group_[3] = {0, 0, 0};
  size_t held_ = 0;
};

/*! \brief Decodes base64 text read from `in`; call InitPosition() before the first read. */
class Base64InStream : public Stream {
 public:
  using Stream::Read;
  using Stream::Write;

  explicit Base64InStream(Stream *in) : in_(in) {}

  /*! \brief Skip leading whitespace. */
  void InitPosition() {
    do {
      if (in_->Read(&pending_, 1) != 1) {
        pending_ = -1;
        return;
      }
    } while (pending_ == ' ' || pending_ == '\n' || pending_ == '\r' || pending_ == '\t');
    has_pending_ = true;
  }

  size_t Read(void *ptr, size_t size) override {
    uint8_t *out = static_cast<uint8_t *>(ptr);
    size_t done = 0;
    while (done < size) {
      if (ready_ == next_ && !Decode()) break;
      out[done++] = bytes_[next_++];
    }
    return done;
  }

  size_t Write(const void *, size_t) override {
    TVM_FFI_THROW(InternalError) << "write to a base64 input stream";
    return 0;
  }

 private:
  bool NextChar(char *c) {
    if (has_pending_) {
      has_pending_ = false;
      *c = pending_;
      return true;
    }
    return in_->Read(c, 1) == 1;
  }

  /*! \brief Decode the next 4 characters into up to 3 bytes; false at the end of the text. */
  bool Decode() {
    char text[4];
    for (char &c : text) {
      if (!NextChar(&c)) return false;
    }
    int v[4];
    for (int i = 0; i < 4; ++i) v[i] = base64_detail::Value(text[i]);
    TVM_FFI_ICHECK(v[0] >= 0 && v[1] >= 0) << "invalid base64 text";
    bytes_[0] = static_cast<uint8_t>((v[0] << 2) | (v[1] >> 4));
    ready_ = 1;
    if (v[2] >= 0) {
      bytes_[1] = static_cast<uint8_t>(((v[1] & 15) << 4) | (v[2] >> 2));
      ready_ = 2;
      if (v[3] >= 0) {
        bytes_[2] = static_cast<uint8_t>(((v[2] & 3) << 6) | v[3]);
        ready_ = 3;
      }
    }
    next_ = 0;
    return true;
  }

  Stream *in_;
  char pending_ = 0;
  bool has_pending_ = false;
  uint8_t bytes_[3] = {0, 0, 0};
  size_t ready_ = 0;
  size_t next_ = 0;
};

}  // namespace support
}  // namespace tvm
#endif
