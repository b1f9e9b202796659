// Must not compile: a channel of a type whose move constructor may throw. An item moved
// into or out of the ring under the channel's spin lock that threw would leave the lock
// held for ever (session 39); the channel's static_assert says so (tests/CMakeLists.txt
// checks the message).
#include <weft/weft.hpp>

struct throwing_move {
  throwing_move() = default;
  throwing_move(throwing_move&&) noexcept(false) {}
};

int main() {
  weft::channel<throwing_move> ch(4);
  return 0;
}
