// Helpers shared by the reactor's test files (test_io.cpp, test_io_errors.cpp).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <span>
#include <string>

#include <weft/weft.hpp>

#include "shared_array.hpp"

namespace weft_test {

// Host functions the tests call: 1 sums its arguments, 2 throws.
inline void register_test_fns(weft::runtime& rt) {
  rt.register_host_fn(1, [](std::span<const std::uint64_t> a) {
    std::uint64_t s = 0;
    for (auto v : a) s += v;
    return s;
  });
  rt.register_host_fn(2, [](std::span<const std::uint64_t>) -> std::uint64_t { throw std::runtime_error("boom"); });
}

// Copies a host string into memory every backend's tasks can read.
struct shared_text {
  shared_array<char> mem;
  explicit shared_text(const std::string& s) : mem(s.size() + 1) { std::memcpy(mem.data(), s.c_str(), s.size() + 1); }
  const char* c_str() const { return mem.data(); }
};


// A temporary file holding `content`, removed at the end of the scope.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& content) {
    char tmpl[] = "/tmp/weft-io-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    const bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    ::close(fd);
    path = tmpl;
    if (!ok) throw std::runtime_error("write failed");
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() { ::unlink(path.c_str()); }
  std::string read_all() const {
    std::string out;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      char b[256];
      std::size_t n;
      while ((n = std::fread(b, 1, sizeof b, f)) > 0) out.append(b, n);
      std::fclose(f);
    }
    return out;
  }
};

inline const std::string twenty = "0123456789abcdefghij";  // the 20 bytes of the files below

}  // namespace weft_test
