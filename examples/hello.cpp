// hello: the README's example. Builds for the host backend, or for both with CUDA.
#include <cstdio>

#include <weft/weft.hpp>

WEFT_HOST_DEVICE weft::task<int> add(int a, int b) { co_return a + b; }

WEFT_HOST_DEVICE weft::task<int> root(int n) {
  int x = co_await add(1, 2);                          // await a child task (lazy)
  weft::join_handle<int> h = weft::spawn(add(3, n));  // run concurrently on any worker
  co_await weft::yield();                              // let others run
  int y = co_await std::move(h);                       // join
  co_return x + y;
}

int main() try {
  weft::runtime rt;  // WEFT_BACKEND=host|cuda forces a backend
  int r = rt.block_on([] WEFT_HOST_DEVICE (int n) { return root(n); }, 39);
  std::printf("%d via %s\n", r, rt.backend_name());
  return r == 45 ? 0 : 1;
} catch (const weft::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
