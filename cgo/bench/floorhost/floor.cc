// The C floor, compiled into the Go host: its main becomes mcbench_c_main,
// and its spawn and tick hooks resolve to the host's exported functions.
#define MCBENCH_C_HOSTED 1
#include "../mcbench_c.cc"

extern "C" void mcbench_c_call(void *fn, void *arg) { reinterpret_cast<void (*)(void *)>(fn)(arg); }
