// What the cuda backend asks of a GPU when a runtime is made (src/gpu_facts.hpp): the
// check on plain facts, so that every refusal and its message is tested without a GPU.
#include <catch2/catch.hpp>
#include <string>

#include <weft/runtime.hpp>

#include "gpu_facts.hpp"

namespace {

// The message of the weft::error that check_gpu_facts throws, after checking its code.
std::string refusal_of(const weft::exec::gpu_facts& f) {
  try {
    weft::exec::check_gpu_facts(f);
  } catch (const weft::error& e) {
    CHECK(e.code() == weft::errc::backend_unavailable);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a GPU with everything the cuda backend needs and no kernel time limit is accepted", "[runtime]") {
  CHECK_NOTHROW(weft::exec::check_gpu_facts(weft::exec::gpu_facts{}));
}

TEST_CASE("a GPU without cooperative launch, unified addressing or mapped memory is refused, naming each lack",
          "[runtime]") {
  weft::exec::gpu_facts f;
  f.device = 3;
  f.cooperative_launch = false;
  std::string m = refusal_of(f);
  CHECK(m.find("GPU 3 lacks cooperative launch") != std::string::npos);
  f.cooperative_launch = true;
  f.unified_addressing = false;
  f.can_map_host_memory = false;
  m = refusal_of(f);
  CHECK(m.find("lacks unified addressing, mapped host memory") != std::string::npos);
  CHECK(m.find("cooperative") == std::string::npos);
}

TEST_CASE("a GPU whose kernels run under a time limit (a display watchdog) is refused, not faulted later",
          "[runtime]") {
  weft::exec::gpu_facts f;
  f.kernel_exec_timeout = true;
  const std::string m = refusal_of(f);
  CHECK(m.find("kernelExecTimeoutEnabled") != std::string::npos);
  CHECK(m.find("host backend") != std::string::npos);
}

TEST_CASE("a GPU below compute capability 9.0 is refused when the runtime is made, naming its capability",
          "[runtime]") {
  weft::exec::gpu_facts f;
  f.device = 1;
  f.compute_major = 8;  // an A100
  f.compute_minor = 0;
  const std::string m = refusal_of(f);
  CHECK(m.find("GPU 1 has compute capability 8.0") != std::string::npos);
  CHECK(m.find("9.0 or later") != std::string::npos);
  f.compute_major = 9;  // H100, H200
  CHECK_NOTHROW(weft::exec::check_gpu_facts(f));
  f.compute_major = 12;  // later GPUs are not refused here
  f.compute_minor = 1;
  CHECK_NOTHROW(weft::exec::check_gpu_facts(f));
}

TEST_CASE("backend::automatic runs on the host backend beside a GPU the cuda backend refuses, and on the GPU only "
          "when it fits",
          "[runtime]") {
  using weft::backend;
  using weft::exec::automatic_backend;
  using weft::exec::facts_fit;
  weft::exec::gpu_facts fits;
  REQUIRE(facts_fit(fits));
  CHECK(automatic_backend(1, facts_fit(fits)) == backend::cuda);
  CHECK(automatic_backend(0, true) == backend::host);  // no GPU present
  weft::exec::gpu_facts old = fits, watchdog = fits, no_coop = fits;
  old.compute_major = 8;
  old.compute_minor = 6;
  watchdog.kernel_exec_timeout = true;
  no_coop.cooperative_launch = false;
  for (const weft::exec::gpu_facts& f : {old, watchdog, no_coop}) {
    CHECK_FALSE(facts_fit(f));
    CHECK(automatic_backend(2, facts_fit(f)) == backend::host);
  }
}
