// Must not compile: a root task whose value is not trivially copyable (a std::string).
// The value crosses to the host as bytes (from the GPU: a completion record), so the
// runtime's static_assert refuses it in every build (tests/CMakeLists.txt checks the message).
#include <string>
#include <weft/weft.hpp>

int main() {
  weft::runtime rt;
  auto root = [](int n) -> weft::task<std::string> { co_return std::string(static_cast<std::size_t>(n), 'x'); };
  return static_cast<int>(rt.block_on(root, 3).size());
}
