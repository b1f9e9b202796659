// weft_test::run_in_child: runs a function in a forked child, for the checks that must
// stop the process (contract violations, exhausted address space). Host code only.
#pragma once
#include <catch2/catch.hpp>
#include <csignal>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace weft_test {

// Runs `fn` in a forked child with its stderr captured; returns the child's wait status
// and what it wrote to stderr. The child exits 0 when fn returns.
template <class Fn>
std::pair<int, std::string> run_in_child(Fn fn) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not Catch2's handler, which would report a failure here
    ::dup2(out[1], 2);
    ::close(out[0]);
    fn();
    ::_exit(0);
  }
  ::close(out[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {status, text};
}

}  // namespace weft_test
