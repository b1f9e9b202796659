// src/reactor_ops.cpp - the reactor's handlers for host functions, files and printing.
//
// Each handler completes its request exactly once (complete or fail), at once: file
// I/O on the reactor thread is synchronous. Data between files and task buffers moves
//   * inline, in the mailbox slots, when small (<= 184 bytes written, <= 104 read);
//   * directly, when the host can touch the task's buffer (host backend; managed or
//     mapped memory on the cuda backend);
//   * else through the thread's pinned staging buffer and its CUDA stream: reads in
//     1 MiB pieces, so that the next pread overlaps the copy of the last piece to the
//     GPU; writes 4 MiB at a time, copy then pwrite (not overlapped).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "reactor_thread.hpp"

namespace weft::rt {

namespace {

errc from_errno(int e) noexcept {
  switch (e) {
    case ENOENT:
    case ENOTDIR: return errc::not_found;
    case EBADF: return errc::bad_handle;
    case EINVAL: return errc::invalid_argument;
    default: return errc::io_error;
  }
}

// A file that pread and pwrite can serve (not a FIFO or a socket).
bool positional(const struct stat& st) noexcept { return !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode); }

// The text of a path or print request: inline when it fit, else read from the task.
errc request_text(reactor_thread& t, const detail::request& q, const unsigned char* data, unsigned a,
                  std::string* out) noexcept {
  const std::uint64_t n = q.args[a + 1];
  try {
    if (n <= detail::request_inline_bytes) {
      out->assign(reinterpret_cast<const char*>(data), n);
      return errc{};
    }
    out->resize(n);
    const void* src = reinterpret_cast<const void*>(q.args[a]);
    memory_ops& m = t.owner().mem();
    if (m.host_accessible(src)) std::memcpy(out->data(), src, n);
    else if (const errc e = m.from_task(t.index(), out->data(), src, n); e != errc{}) return e;
    return errc{};
  } catch (...) {
    return errc::out_of_memory;
  }
}

constexpr std::size_t staging_piece = 1u << 20;  // pipelined pread / copy pieces

}  // namespace

void reactor_thread::op_host_call(const detail::request& q, const unsigned char* data) noexcept {
  const auto id = static_cast<std::uint32_t>(q.args[0]);
  const auto argc = static_cast<std::uint32_t>(q.args[0] >> 32);
  if (argc > 6) return fail(q.token, errc::invalid_argument);
  std::uint64_t args[6] = {q.args[1], q.args[2], q.args[3], q.args[4], q.args[5], 0};
  if (argc == 6) {
    if (q.inline_bytes != 8) return fail(q.token, errc::invalid_argument);
    std::memcpy(&args[5], data, 8);
  }
  std::uint64_t v = 0;
  const errc e = r_.call_fn(id, std::span<const std::uint64_t>(args, argc), &v);
  complete(q.token, v, e);
}

void reactor_thread::op_open(const detail::request& q, const unsigned char* data) noexcept {
  if (q.args[3] >= detail::max_path_bytes) return fail(q.token, errc::too_large);
  std::string path;
  if (const errc e = request_text(*this, q, data, 2, &path); e != errc{}) return fail(q.token, e);
  if (path.empty() || path.find('\0') != std::string::npos) return fail(q.token, errc::invalid_argument);
  // Files are read and written at offsets (pread, pwrite): a FIFO or a socket would
  // give ESPIPE on every call, and a FIFO's open waits for its other end, which would
  // hold this thread and every request behind it, and shutdown. So the open is
  // non-blocking (a FIFO opened for writing with no reader, or a socket's path, fails
  // with ENXIO), what it opened is refused when fstat says FIFO or socket, and
  // O_NONBLOCK is then cleared unless it was asked for.
  struct stat st {};
  const int flags = static_cast<int>(q.args[0]);
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, static_cast<mode_t>(q.args[1]));
  if (fd < 0) return fail(q.token, errno == ENXIO ? errc::invalid_argument : from_errno(errno));
  const bool refused = ::fstat(fd, &st) != 0 || !positional(st);
  if (refused || ((flags & O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)) {
    ::close(fd);
    return fail(q.token, refused ? errc::invalid_argument : errc::io_error);
  }
  try {
    r_.add_file(fd);
  } catch (...) {
    ::close(fd);
    return fail(q.token, errc::out_of_memory);
  }
  complete(q.token, static_cast<std::uint64_t>(fd), errc{});
}

void reactor_thread::op_close(const detail::request& q) noexcept {
  int err = 0;
  if (!r_.close_file(static_cast<int>(q.args[0]), &err)) return fail(q.token, errc::bad_handle);
  complete(q.token, 0, err == 0 ? errc{} : from_errno(err));
}

void reactor_thread::op_read(const detail::request& q) noexcept {
  const int fd = static_cast<int>(q.args[0]);
  void* buf = reinterpret_cast<void*>(q.args[1]);
  const std::uint64_t n = q.args[2];
  const std::uint64_t off = q.args[3];
  bool known = false;
  const auto in_use = r_.use_file(fd, &known);  // held until the read returns (reactor.hpp)
  if (!known) return fail(q.token, errc::bad_handle);
  if (n <= detail::completion_inline_bytes) {  // small: the data rides in the completion
    unsigned char tmp[detail::completion_inline_bytes];
    const ssize_t got = ::pread(fd, tmp, n, static_cast<off_t>(off));
    if (got < 0) return fail(q.token, from_errno(errno));
    return complete(q.token, static_cast<std::uint64_t>(got), errc{}, tmp, static_cast<std::uint32_t>(got));
  }
  memory_ops& m = r_.mem();
  std::uint64_t done = 0;
  if (m.host_accessible(buf)) {  // straight into the buffer, until n or end of file
    while (done < n) {
      const ssize_t got = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(off + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && done == 0) return fail(q.token, from_errno(errno));
      if (got <= 0) break;  // an error after some bytes: a short read (the next read reports it)
      done += static_cast<std::uint64_t>(got);
    }
    return complete(q.token, done, errc{});
  }
  // Staged: pread piece k into one half of the staging buffer while the other half's
  // copy to the GPU runs on the thread's stream. (Staged recvs of this round give the
  // buffer back first.)
  settle_net_copies();  // (settled only: progress here could stage a recv into the buffer)
  auto* stage = static_cast<char*>(m.staging(index_, staging_bytes));
  if (stage == nullptr) return fail(q.token, errc::out_of_memory);
  unsigned half = 0;
  bool copying = false;
  while (done < n) {
    char* piece = stage + half * staging_piece;
    const std::uint64_t want = std::min<std::uint64_t>(staging_piece, n - done);
    ssize_t got = ::pread(fd, piece, want, static_cast<off_t>(off + done));
    while (got < 0 && errno == EINTR) got = ::pread(fd, piece, want, static_cast<off_t>(off + done));
    if (got < 0) {  // after some bytes, a short read (as above) once their copies ended
      const errc failed = from_errno(errno);
      const errc copied = copying ? m.wait(index_) : errc{};
      if (done == 0 || copied != errc{}) return fail(q.token, done == 0 ? failed : copied);
      return complete(q.token, done, errc{});
    }
    if (got == 0) break;
    if (copying) {  // the other half's copy must end before its half is read into again
      if (const errc e = m.wait(index_); e != errc{}) return fail(q.token, e);
    }
    if (const errc e = m.to_task_async(index_, static_cast<char*>(buf) + done, piece, static_cast<std::size_t>(got));
        e != errc{})
      return fail(q.token, e);
    copying = true;
    done += static_cast<std::uint64_t>(got);
    half ^= 1u;
    if (static_cast<std::uint64_t>(got) < want) break;  // end of file
  }
  if (copying) {
    if (const errc e = m.wait(index_); e != errc{}) return fail(q.token, e);
  }
  complete(q.token, done, errc{});
}

void reactor_thread::op_write(const detail::request& q, const unsigned char* data) noexcept {
  const int fd = static_cast<int>(q.args[0]);
  const void* buf = reinterpret_cast<const void*>(q.args[1]);
  const std::uint64_t n = q.args[2];
  const std::uint64_t off = q.args[3];
  bool known = false;
  const auto in_use = r_.use_file(fd, &known);  // held until the write returns (reactor.hpp)
  if (!known) return fail(q.token, errc::bad_handle);
  memory_ops& m = r_.mem();
  const char* src = nullptr;
  std::vector<char> copy;
  if (n <= detail::request_inline_bytes) {
    src = reinterpret_cast<const char*>(data);
  } else if (m.host_accessible(buf)) {
    src = static_cast<const char*>(buf);
  }
  std::uint64_t done = 0;
  while (done < n) {
    const char* piece = src ? src + done : nullptr;
    const std::uint64_t want = src ? n - done : std::min<std::uint64_t>(staging_bytes, n - done);
    if (piece == nullptr) {  // staged: the GPU buffer comes over in staging-sized pieces
      settle_net_copies();   // staged copies of this round give the buffer back first
      auto* stage = static_cast<char*>(m.staging(index_, staging_bytes));
      if (stage == nullptr) return fail(q.token, errc::out_of_memory);
      if (const errc e = m.from_task(index_, stage, static_cast<const char*>(buf) + done, want); e != errc{})
        return fail(q.token, e);
      piece = stage;
    }
    std::uint64_t put = 0;
    while (put < want) {
      const ssize_t w = ::pwrite(fd, piece + put, want - put, static_cast<off_t>(off + done + put));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && done + put == 0) return fail(q.token, from_errno(errno));
      if (w < 0) return complete(q.token, done + put, errc{});  // a short write: the next one reports the error
      put += static_cast<std::uint64_t>(w);
    }
    done += want;
  }
  complete(q.token, done, errc{});
}

void reactor_thread::op_print(const detail::request& q, const unsigned char* data) noexcept {
  if (q.args[1] > detail::max_print_bytes) return fail(q.token, errc::too_large);
  std::string text;
  if (const errc e = request_text(*this, q, data, 0, &text); e != errc{}) return fail(q.token, e);
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  complete(q.token, 0, ok ? errc{} : errc::io_error);
}

}  // namespace weft::rt
