// Must not compile: host_call with seven arguments (a request carries at most six words;
// tests/CMakeLists.txt checks the static_assert's message).
#include <weft/weft.hpp>

weft::task<int> calls_with_seven() {
  auto r = co_await weft::host_call(1, 1, 2, 3, 4, 5, 6, 7);
  co_return r ? static_cast<int>(*r) : -1;
}

int main() { return 0; }
