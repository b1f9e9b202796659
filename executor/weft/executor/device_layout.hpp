// weft/executor/device_layout.hpp - the memory the device executor shares with the host.
//
// These are plain structs: the host runtime (src/device_runtime.cpp, compiled as
// C++) allocates and initialises them, the persistent kernel (device_worker.hpp,
// compiled as CUDA in the user's translation unit) works on them. Nothing here has
// behaviour beyond index arithmetic.
//
// Where each part lives
//   device memory   device_sched, the worker array, the rings, the inject shards, the
//                   frame arena with its two side tables, the lane caches.
//   pinned memory   host_control (stop flag, fault word, the submission ring) and the
//                   completion records; the device reaches them through mapped
//                   pointers, always with system-scope atomics (toolchain trap 11:
//                   a plain load of pinned memory polled by the GPU can stay stale).
//
// Host -> device submissions (one producer, the host runtime under its mutex; one
// consumer, lane 0 of worker 0):
//   host   writes create/completion/home/payload of slot t % N, then stores seq = t + 1
//          (release, system scope);
//   device sees seq == t + 1 (acquire, system scope), copies the slot, then stores
//          seq = t + N (release): the slot is free for ticket t + N.
// Device -> host completions: the device writes value/error, then state = done
// (release, system scope); the host reads state with acquire and then the value.
#pragma once
#include <cstddef>
#include <cstdint>

#include "weft/detail/bulk_job.hpp"
#include "weft/detail/mailbox_layout.hpp"
#include "weft/detail/task_header.hpp"
#include "weft/executor/local_queue.hpp"

namespace weft::exec {

struct device_sched;

// How a root made by the host is created on the device: copies (fn, args) out of
// `payload` into a new task's frame and spawns it. Instantiated per (F, Args...) in
// the user's translation unit (device_program.hpp); the host learns its address.
// `home`: the worker the root is pinned to (runtime::spawn_pinned), or detail::no_home.
using root_create_fn = void (*)(device_sched* d, const void* payload, struct host_completion* c, std::uint32_t home);

inline constexpr std::size_t submission_payload_bytes = 192;
inline constexpr std::size_t completion_value_bytes = 256;

struct alignas(64) submission {
  std::uint64_t seq;          // the protocol word (see the file comment)
  root_create_fn create;      // device function that creates the root
  host_completion* completion;
  std::uint32_t home;         // the worker the root is pinned to, or detail::no_home
  alignas(16) unsigned char payload[submission_payload_bytes];
};

namespace completion_state {
inline constexpr std::uint32_t pending = 0;
inline constexpr std::uint32_t done = 1;
}  // namespace completion_state

// Where a root created by the host reports its outcome (pinned memory).
struct alignas(64) host_completion {
  std::uint32_t state;   // completion_state
  std::uint32_t error;   // an errc, 0 on success
  alignas(16) unsigned char value[completion_value_bytes];
};

inline constexpr std::uint32_t submission_ring_size = 64;

// The host's control block (pinned memory).
struct host_control {
  std::uint32_t stop;     // host -> device: leave the worker loops (system scope)
  submission ring[submission_ring_size];
};

// One bounded MPMC ring of the inject queue (Vyukov's sequence-numbered cells, with
// batch claims; the protocol is in device_queues.hpp).
// The cells hold untyped pointers: the same ring carries tasks (the inject queue) and
// the host_ops that wait for room in a reactor mailbox (basic_inject_ring<T>).
struct inject_cell {
  std::uint64_t seq;
  void* item;
};
struct alignas(128) inject_shard {
  std::uint64_t head;  // next ticket to consume
  std::uint64_t pad0[15];
  std::uint64_t tail;  // next ticket to produce
  std::uint64_t pad1[15];
  inject_cell* cells;
  std::uint64_t mask;
};

// Per-lane frame caches: lane-private stacks of blocks for the small classes, each
// block named by its 64-byte granule's index in the arena (device_frames.hpp). 64 deep:
// a full cache keeps 32 after a spill and an empty one takes up to a magazine, so a lane
// that spawns and joins 16 tasks at a time stays off the shared shards (on an H200,
// spawn_many +10 % against 16 deep with the reclaim, yield_many -3 to -4.5 %:
// docs/benchmarks.md, fourteenth session). 1,296 B per lane, beside the frame pool.
// What the caches hold goes back to the shards when the pool runs dry (reclaim,
// device_frames.hpp).
inline constexpr unsigned lane_cache_classes = 5;  // 64 B .. 1 KiB
inline constexpr unsigned lane_cache_depth = 64;
inline constexpr std::uint64_t max_frame_pool_bytes = (std::uint64_t{1} << 32) * 64 - 64;  // 32-bit granule indices
struct lane_cache {
  std::uint32_t slots[lane_cache_classes][lane_cache_depth];
  std::uint8_t count[lane_cache_classes];
  std::uint8_t destroying;  // the lane is inside device_destroy_frame (device_hooks.hpp)
  void* destroy_head;       // frames whose destruction was deferred meanwhile
};

// One shard of the device frame pool: a lock-free stack of magazines per class
// (device_frames.hpp). top = tag << 32 | (granule of the top magazine + 1); 0: empty.
inline constexpr unsigned frame_classes = 15;
struct alignas(128) frame_shard {
  std::uint64_t top[frame_classes];
};

// Counters a worker keeps for the host (each written by its own warp only).
struct worker_stats {
  std::uint64_t resumed;     // run_and_settle calls
  std::uint64_t batches;     // non-empty batches
  std::uint64_t lanes_used;  // sum of batch sizes (occupancy of batches)
  std::uint64_t stolen;      // tasks taken from other workers
  std::uint64_t injected;    // tasks taken from the inject queue
  std::uint64_t parks;       // times the warp parked
  std::uint64_t napped_ns;   // time parked, by %globaltimer (idle time; with the nap loop's looks)
  std::uint64_t spawned;     // roots submitted by this warp's lanes
  std::uint64_t destroyed;   // roots destroyed by this warp's lanes
  std::uint64_t inline_bulk;  // bulk jobs a lone task ran on its warp's idle lanes (device_bulk.hpp)
  std::uint64_t inline_shared;       // of those, jobs its blockmates ran (device_mbar_share.hpp)
  std::uint64_t inline_jobs_served;  // a blockmate's inline jobs this warp ran as a server
};

// 512: spawns may fill 448 of them (below), 28 for each of 16 lanes, or 14 for each of
// 32, in one batch: they stay in shared memory and leave the warp in aggregated ring
// pushes (flush_staging), not one inject push (and wake-up) per task; a spawn beyond that
// goes to an inject shard. The slots take 4 KiB per warp (the staging_area ~4.4 KiB,
// ~17.5 KiB per block of 4 warps). Spawns leave the last staging_reserve slots to
// wake-ups and to yields that find every queue full (all but the up to 31 that lanes
// spawning at once may take: enqueue_from_lane).
inline constexpr std::uint32_t staging_capacity = 512;
inline constexpr std::uint32_t staging_reserve = 64;
inline constexpr unsigned worker_warps_per_block = 4;  // worker kernel: blocks of 128 threads

// Inline bulk jobs (device_bulk.hpp). `lone` holds this key, not a flag, so that shared
// memory left by another kernel of the module cannot read as a lone batch by accident;
// a warp runs at most inline_jobs_per_trip of them (~1 ms of chained_bulk's 256-index
// steps on an H200; longer for a costly f) before it goes round its loop again, and that
// trip makes every look the loop otherwise makes every 4th to 16th trip (polls, the stop
// flag, its inbox and queues: worker_loop). With 64, a trip per budget (~4.3 us, its task
// re-staged behind a private job) cost chained_bulk 0.067 us a step; the looks due every
// 16th trip (the host, the stop flag, the inbox) came once per 1,024 steps then too, those
// due every 4th or 8th (the board, worker 0's mailboxes, timers) every 256 or 512: now
// once per 1,024 as well (docs/benchmarks.md, twenty-seventh session).
inline constexpr std::uint32_t lone_batch_key = 0x4c6f6e65u;  // "Lone"
inline constexpr std::uint32_t inline_jobs_per_trip = 1024;

// A lone task's inline jobs handed to the idle warps of its block through two mbarriers
// (device_mbar_share.hpp). Shared memory, one per block of the worker kernel.
struct block_share {
  unsigned long long go;        // mbarrier, 1 arrival per phase: the owner's publication of a job
  unsigned long long done;      // mbarrier, 3 arrivals per phase: each serving warp's report,
                                //   and the owner's for the blockmates not serving
  std::uint32_t owner;          // 1 + the block-local index of the owning warp; 0: none
  std::uint32_t state;          // (jobs published << 8) | busy | one bit per serving warp
  const detail::bulk_job* job;  // the current job (the owner's inline_desc)
};

// Tasks a warp's lanes woke or spawned during a batch (the LIFO slot, widened to a
// warp). Lives in shared memory (device_hooks.hpp): only the warp itself touches it.
struct staging_area {
  std::uint32_t count;
  std::uint32_t ring_empty;  // 1: the ring is surely empty (only the owner pushes, so
                             // emptiness seen by the owner lasts until its next push)
  std::uint32_t bulk_count;  // bulk jobs posted by this warp's lanes in this batch
  std::uint32_t batch_lanes;  // bit i: lane i runs a task in this batch (device_io.hpp: in place)
  std::uint32_t lone;         // lone_batch_key while this batch runs one task and the other 31
                              // lanes wait to run its inline bulk jobs (device_bulk.hpp); else 0
  std::uint32_t inline_left;  // inline bulk jobs this warp may still run in this trip round its loop
  const detail::bulk_job* inline_job;  // the lone task's job the lanes run now (inline_desc);
                                       // null: its run ended
  alignas(detail::bulk_job) unsigned char inline_desc[sizeof(detail::bulk_job)];
                                       // that job's descriptor, copied by the task's lane
                                       // (raw bytes: a __shared__ object has no initialiser)
  alignas(detail::bulk_inline_fn_align) unsigned char inline_fn[detail::bulk_inline_fn_bytes];
                                       // and its callable, when small and trivially copyable
  std::uint32_t in_place_delay;   // cycles before an in-place wait's first read (device_io.hpp)
  std::uint32_t claim_capacity;   // claim_box's req_capacity (so a hinted claim loads nothing)
  std::uint32_t ring_head_seen;   // the ring's head as this warp last loaded it with acquire
                                  // (warp_ring::push: it reloads only when this leaves no room)
  detail::mailbox* claim_box;     // a lone task's last claim here (weft/detail/mailbox.hpp:
  std::uint64_t claim_next;       //   claim_hint): the ticket after it, and the head
  std::uint64_t claim_head;       //   acquired then
  std::uint32_t reclaim_seen;     // the pool's reclaim_epoch when this warp last flushed its
                                  // lanes' frame caches (device_frames.hpp, reclaim)
  std::uint32_t bulk_seen;        // bulk_published as this warp's last look at the board
                                  // (help_bulk) read it
  detail::task_header* slots[staging_capacity];
  detail::bulk_job* bulk_jobs[WEFT_WARP_SIZE];  // one per lane at most: posting parks the task
  worker_stats stats;  // lane 0's running counts (shared memory, not registers)
  std::uint32_t share_mates;  // blockmates that may serve this warp's lone tasks (constant)
};

// One slot of the bulk board (device_bulk.hpp): a published bulk job that any warp
// may take chunks of. `claim` packs (chunks << 32 | next chunk); chunks == 0: closed.
inline constexpr std::uint32_t bulk_board_slots = 64;
struct alignas(64) bulk_slot {
  std::uint64_t claim;      // claimers fetch_add 1; the old value says which chunk they got
  std::uint32_t remaining;  // chunks not finished yet; the warp that ends the last wakes the waiter
  std::uint32_t busy;       // 1 from a poster's reservation until the last chunk finished
  detail::bulk_job job;     // the poster's descriptor, copied
};

struct timer_entry {
  std::uint64_t deadline;
  detail::task_header* task;
};

// A worker: one warp.
struct alignas(128) device_worker {
  local_queue ring;  // owner: this warp; thieves: others
  std::uint32_t rng;
  worker_stats stats;
  // Pinned tasks sent to this warp by others (device_hooks.hpp, send_home), and wake-ups
  // of this warp's lanes that found its staging area and every inject shard full
  // (enqueue_from_lane): a Treiber
  // stack of task_header* through `link`, as a 64-bit word (device scope). Any lane
  // pushes with a release CAS; lane 0 of this warp takes it whole with an acquire
  // exchange (take_inbox), which makes every pusher's `link` write visible (each CAS is
  // an RMW, so it continues the release sequences of those before it). Take-all has no
  // ABA: a push's CAS succeeds only if the head is still what its `link` names.
  std::uint64_t inbox;
  // What lane 0 of this warp took from the inbox and has not staged yet (take_inbox_lane0;
  // plain accesses, lane 0 only). Here rather than in the staging area: 8 more bytes of
  // shared memory per warp went with a slower spawn_many in one build (not measured apart).
  detail::task_header* inbox_rest;
  // Pinned roots whose home is this warp and that have not completed (device scope,
  // relaxed: a hint for the nap's length, it publishes nothing). A spawner adds one
  // before it publishes the task (device_submit_root); the home, the only warp that runs
  // the task, takes one off when it completes (device_pinned_root_completed). While it is
  // non-zero the warp naps at most home_park_max_ns (park_lane0; worker 0 keeps its own
  // cap, host_poll_max_ns), so a wake-up sent to its inbox while it is parked
  // waits about that long at most, not park_max_ns.
  std::uint32_t pinned_live;
};

// The whole device executor. Lives in device memory; the host keeps a mirror of
// the pointers it filled in. The constants come first; each group of words that changes
// while the kernel runs has a 128-byte line of its own: a line that takes atomics is not
// cached in L1 (a write or atomic from an SM drops it there), and the L2 serves a load
// of it behind the atomics queued on it. Every lane reads the constants (the queues, the
// pool, the mailboxes) on its hot paths, so no changing word shares their lines.
struct device_sched {
  // ---- constants, set by the host before the launch
  device_worker* workers;
  lane_cache* caches;  // workers * 32
  std::uint32_t num_workers;
  std::uint32_t max_searchers;
  inject_shard* inject;  // inject queue
  std::uint32_t num_inject;
  std::uint32_t park_max_ns;
  std::uint32_t block_share_off;  // 1: lone tasks' inline jobs never go to blockmates
                                  // (WEFT_BLOCK_SHARE=0; device_mbar_share.hpp)
  // frame pool: arena, magazine shards, side tables (one byte per 64-byte granule)
  char* arena;
  std::uint64_t arena_bytes;
  frame_shard* shards;
  std::uint32_t num_shards;
  std::uint32_t timer_capacity;
  std::uint8_t* block_class;  // class + 1 at each carved block's first granule
  std::uint8_t* block_live;   // 1 while the block holds a frame
  timer_entry* timers;        // device_timers.hpp: a min-heap under a spin lock
  host_control* control;      // host link (mapped pinned memory)
  bulk_slot* bulk_board;      // bulk board (device_bulk.hpp): bulk_board_slots slots
  // the mailboxes to the host reactor (weft/detail/mailbox.hpp)
  detail::io_link io;
  // ---- parking (device scope)
  alignas(128) std::uint32_t searching;
  alignas(128) std::uint32_t sleepers;
  std::uint32_t wake_tokens;
  alignas(128) std::uint32_t stop;  // mirror of host_control::stop, set by the poller
  std::uint32_t fault;              // the first contract violation's code (0: none)
  std::uint64_t submissions_seen;   // the host poller's next ticket (worker 0, lane 0)
  alignas(128) std::uint32_t bulk_active;  // occupied bulk board slots: warps skip the board while it is 0
  std::uint32_t bulk_published;            // board jobs published so far (wraps): a napping warp
                                           // leaves its nap when it moves (device_bulk.hpp)
  // ---- the frame pool's carve pointer
  alignas(128) std::uint64_t carved;
  // ---- the frame pool's reclaim requests (device_frames.hpp, reclaim)
  alignas(128) std::uint32_t reclaim_epoch;  // bumped by a lane that found the pool dry
  std::uint64_t reclaim_quiet_until[lane_cache_classes];  // per cached class, %globaltimer ns:
                                                          // a dry class fails at once before it
  // ---- timers
  alignas(128) std::uint32_t timer_count;
  std::uint32_t timer_lock;
  std::uint64_t timer_next;  // earliest deadline, ~0 when none
};

}  // namespace weft::exec
