// Must not compile: a plain function pointer given to block_on. On the GPU it would be a
// host address called from device code (the kernel would fault); the runtime's
// static_assert says so in every build (tests/CMakeLists.txt checks the message).
#include <weft/weft.hpp>

weft::task<int> root(int n) { co_return n; }

int main() {
  weft::runtime rt;
  return rt.block_on(&root, 1);
}
