// weft/detail/mailbox_layout.hpp - the types of the task <-> reactor mailboxes.
//
// Plain data only (the executor's layout includes it); the protocol that moves them is
// in weft/detail/mailbox.hpp, and docs/mailbox.md draws it.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/config.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/errc.hpp"

namespace weft::exec {
struct inject_shard;  // weft/executor/device_layout.hpp
}

namespace weft::detail {

// What a request asks the reactor to do. The numbers are ABI between the two sides.
enum class opcode : std::uint32_t {
  nop = 0,        // completes at once with 0 (benchmarks, liveness)
  host_call = 1,  // args[0] = id | argc << 32, args[1..5] = arguments 1-5, a 6th as 8 inline bytes
  open = 2,       // args: flags, mode, path address, path length (inline when <= 184 bytes)
  read = 3,       // args: fd, buffer, bytes, offset
  write = 4,      // args: fd, buffer, bytes, offset (bytes <= inline: the data is inline)
  close = 5,      // args: fd
  print = 6,      // args: text address, length (inline when <= 184 bytes)
  sleep = 7,      // args: nanoseconds, on the host's steady clock
  listen = 8,     // args: port
  accept = 9,     // args: listener fd
  recv = 10,      // args: fd, buffer, bytes
  send = 11,      // args: fd, buffer, bytes (inline when small)
  net_close = 12, // args: fd
};

inline constexpr std::uint32_t request_args = 6;

// A request as the task builds it and the reactor reads it back (each side's own memory;
// the slot carries it as LL words, below).
struct request {
  opcode op;
  std::uint32_t inline_bytes;  // bytes of the slot's data in use
  std::uint64_t token;         // the host_op's address: returned in the completion
  std::uint64_t args[request_args];
};

// Requests and completions travel as LL words (NCCL's "low latency" protocol). Each
// 8-byte word carries 4 bytes of payload in its low half and, in its high half, the
// flag of the ticket (or completion index) it belongs to: ll_flag. An aligned 8-byte
// store and load are single-copy atomic on both sides of PCIe, so a word read with the
// right flag holds that ticket's payload whatever else the reader saw: a reader checks
// every word's flag, and a writer needs no fence between its payload and a "ready" word
// (on an H200 that fence cost a request ~0.5 us of its round trip:
// bench/results/2026-11-21-h200-session8/publish-variants/).
// ll_flag is never 0 (zeroed memory never passes for a word), and the flags of
// tickets t and t + N differ for every ring size N (a power of two below 2^32, never a
// multiple of 2^32 - 1): a word left from a slot's earlier lap never passes either.
WEFT_HOST_DEVICE inline std::uint32_t ll_flag(std::uint64_t index) noexcept {
  std::uint64_t s = (index & 0xffffffffu) + (index >> 32);  // index mod (2^32 - 1), folded twice
  s = (s & 0xffffffffu) + (s >> 32);
  const auto r = static_cast<std::uint32_t>(s == 0xffffffffu ? 0 : s);
  return r + 1u;
}
WEFT_HOST_DEVICE inline std::uint64_t ll_word(std::uint32_t payload, std::uint32_t flag) noexcept {
  return (static_cast<std::uint64_t>(flag) << 32) | payload;
}
// Inline bytes travel 4 per LL word, little-endian: ll_pack gives word k's payload of
// an n-byte run (bytes 4k..4k+3, those past n as 0), ll_unpack writes a word's payload
// back to bytes 4k.. of an n-byte run. Requests and completions both use them.
WEFT_HOST_DEVICE inline std::uint32_t ll_pack(const unsigned char* src, std::uint32_t n, std::uint32_t k) noexcept {
  std::uint32_t part = 0;
  for (std::uint32_t b = 0; b < 4 && k * 4 + b < n; ++b) part |= std::uint32_t(src[k * 4 + b]) << (8 * b);
  return part;
}
WEFT_HOST_DEVICE inline void ll_unpack(std::uint64_t word, unsigned char* dst, std::uint32_t n, std::uint32_t k) noexcept {
  for (std::uint32_t b = 0; b < 4 && k * 4 + b < n; ++b) dst[k * 4 + b] = static_cast<unsigned char>(word >> (8 * b));
}

// A request slot (ticket t at slot t % N): request_header_words LL words, word 0 being
// op | inline_bytes << 16, words 1-2 the token, words 3-14 args[0..5] (low half first),
// then the inline data, 4 bytes per word. The poster writes the header's words every
// time and the data words in use; the reactor clears the data words it read before it
// frees the slot (mailbox_take_request), so a data word holds either 0 or the payload
// of a ticket not yet taken. 184 inline bytes carry a 64-byte TCP message (or a path,
// or a short print) without the reactor's staging copy.
inline constexpr std::uint32_t request_header_words = 3 + 2 * request_args;
inline constexpr std::uint32_t request_inline_bytes = 184;
inline constexpr std::uint32_t request_data_words = request_inline_bytes / 4;
inline constexpr std::uint32_t completion_inline_bytes = 104;
// Longest print text and path a request may carry (longer: errc::too_large).
inline constexpr std::uint64_t max_print_bytes = 1u << 16;
inline constexpr std::uint64_t max_path_bytes = 4096;

struct alignas(128) request_slot {
  std::uint64_t words[64];  // request_header_words + request_data_words in use, 512 bytes
};
static_assert(request_header_words + request_data_words <= 64 && request_inline_bytes % 4 == 0);

// Whether the reactor reads or writes the task's memory for this request: a buffer, or
// a text or data not carried inline (a read of up to completion_inline_bytes comes back
// in the completion). Such a request needs a release at system scope when it is
// published (mailbox_publish); one whose payload is all in its slot does not, when its
// poster takes its own answer (the in-place wait: device_io.hpp).
WEFT_HOST_DEVICE inline bool request_touches_task_memory(const request& q) noexcept {
  switch (q.op) {
    case opcode::read:
    case opcode::recv: return q.args[2] > completion_inline_bytes;  // a small answer rides in the completion
    case opcode::write:
    case opcode::send: return q.inline_bytes != q.args[2];  // args: fd, buffer, bytes
    case opcode::open: return q.inline_bytes != q.args[3];  // args: flags, mode, path, length
    case opcode::print: return q.inline_bytes != q.args[1]; // args: text, length
    default: return false;                                  // values only
  }
}

// A completion as the reactor queues it (host memory, the reactor thread's own).
struct completion {
  std::uint64_t token;
  std::uint64_t value;
  std::uint32_t error;         // an errc, 0 on success
  std::uint32_t inline_bytes;  // bytes of `data` the drainer copies to the op's buffer
  unsigned char data[completion_inline_bytes];
};

// How a completion travels: as LL words (above), flag ll_flag(c). Completion c's header
// word j sits at comp_words[j * M + c % M] (the same word of consecutive completions is
// contiguous, so 32 lanes reading 32 completions read 256 bytes per word, and one lane's
// six words sit in six lines: a GPU lane's loads of one line from host memory are
// served one after the other, ~1 us each on an H200, and of distinct lines at once);
// its inline data at comp_data[(c % M) * completion_data_words ...]. The drainer reads
// the data words the header announces; a data word is not cleared after use, so one
// last written 2^32 - 1 laps of its slot earlier would pass its flag if the new one had
// not landed yet: a bound weft accepts ((2^32 - 1) x M completions on one mailbox).
inline constexpr std::uint32_t completion_header_words = 6;  // token (2), value (2), error, inline_bytes
// The payload of header word 5 (inline_bytes, never this large) once the drainer has
// handed completion c's slot back: ll_word(completion_handed_back, ll_flag(c))
// (mailbox.hpp: mailbox_hand_back).
inline constexpr std::uint32_t completion_handed_back = 0xffffffffu;
inline constexpr std::uint32_t completion_hand_back_word = 5;  // inline_bytes: the word that carries it
inline constexpr std::uint32_t completion_data_words = completion_inline_bytes / 4;
static_assert(completion_inline_bytes % 4 == 0);

// Each word the two sides share sits alone in a 128-byte line (the GPU's L2 line), so a
// word the GPU writes never shares a line with a word it polls. (This did not change the
// ~100 us answer latency measured on an H200: docs/benchmarks.md.)
struct mailbox_shared {
  alignas(128) std::uint64_t doorbell;
  alignas(128) std::uint64_t req_head;
  alignas(128) std::uint32_t req_capacity;  // power of two
  std::uint32_t comp_capacity;              // power of two
  request_slot* slots;                      // the same address on both sides (mapped)
  std::uint64_t* comp_words;                // completion_header_words * comp_capacity LL words
  std::uint64_t* comp_data;                 // completion_data_words * comp_capacity LL words
};

// One request in flight, inside the waiting task's frame (the awaiter owns it).
struct host_op {
  request req;
  const void* inline_src = nullptr;  // copied into the slot at publication (req.inline_bytes)
  void* inline_dst = nullptr;        // the completion's inline data goes here
  task_header* task = nullptr;       // woken by the completion
  host_op* next = nullptr;           // the mailbox's waiters stack
  std::uint64_t value = 0;
  errc error{};
};

// The words are grouped by who writes them, each group on its own 128-byte line: a
// line that takes atomics is not cached in L1 (a write or atomic from an SM drops the
// line there), and the L2 serves it behind the atomics queued on it. So the constants,
// read on every request's path, share no line with a word that changes.
struct mailbox {
  // Constants (make_mailbox). Copies of the shared block's constant fields: reading them
  // there would cost the GPU a PCIe round trip each time.
  mailbox_shared* shared;
  request_slot* slots;
  std::uint64_t* comp_words;
  std::uint64_t* comp_data;
  // The GPU only (null on the host backend): a bounded MPMC ring of host_op* (device
  // memory) where requests that found the request ring full wait, so the drainer
  // publishes them 32 at a time (one claim, one slot per lane). When it is full too,
  // the waiters stack below takes them.
  exec::inject_shard* overflow;
  std::uint32_t req_capacity;
  std::uint32_t comp_capacity;
  // The posters' words.
  alignas(128) std::uint64_t req_tail;
  std::uint64_t head_seen;
  std::uint64_t waiters;  // host_op* of the stack's top, 0 when empty
  alignas(128) std::uint32_t inflight;
  // The drainer's words. `drain`: bit 0 set while a drainer holds the duty (the GPU: one
  // drainer at a time), bits 1.. the next completion to deliver (mailbox.hpp: drain_word).
  alignas(128) std::uint64_t drain;
  host_op* backlog_head;  // the drainer's own FIFO of waiters not yet published
  host_op* backlog_tail;
};

inline mailbox make_mailbox(mailbox_shared* sh) noexcept {
  mailbox m{};
  m.shared = sh;
  m.slots = sh->slots;
  m.comp_words = sh->comp_words;
  m.comp_data = sh->comp_data;
  m.req_capacity = sh->req_capacity;
  m.comp_capacity = sh->comp_capacity;
  return m;
}

// The mailboxes of one runtime. Which one a request uses: mailbox_for().
struct io_link {
  mailbox* boxes = nullptr;
  std::uint32_t count = 0;
};

// Net requests all go to mailbox 0 (its reactor thread owns the sockets' epoll set);
// the others spread by worker so that reactor threads share the load.
WEFT_HOST_DEVICE inline std::uint32_t mailbox_for(const io_link& l, opcode op, std::uint32_t worker) noexcept {
  if (op >= opcode::listen) return 0;
  return worker % l.count;
}

}  // namespace weft::detail
