/* The ABI headers must compile as C (C99) and be usable from C. */
#include "mcgo/store.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                              \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                 \
    }                                                             \
  } while (0)

int main(void) {
  mcgo_store *s = NULL;
  mcgo_store_config cfg;
  mcgo_replicate_config rc;
  char err[128];
  char out[16];
  uintptr_t held = 0;

  EXPECT(mcgo_abi_version() == MCGO_ABI_VERSION);
  EXPECT(strcmp(mcgo_backend_name(), "embedded") == 0);
  EXPECT(mcgo_store_create(&s) == MCGO_OK);

  memset(&cfg, 0, sizeof cfg);
  cfg.local_hostname = "127.0.0.1";
  cfg.metadata_server = "P2PHANDSHAKE";
  cfg.global_segment_size = (uint64_t)16 << 20; /* the 16 MiB minimum */
  cfg.local_buffer_size = 1 << 20;
  cfg.protocol = "tcp";
  cfg.device_name = "";
  cfg.master_server_address = "c-header-test:50051";
  EXPECT(mcgo_store_setup(s, &cfg, err, sizeof err) == MCGO_OK);

  memset(&rc, 0, sizeof rc);
  rc.replica_num = 1;
  EXPECT(mcgo_store_put(s, "key", 3, "value", 5, rc) == MCGO_OK);
  EXPECT(mcgo_store_get_begin(s, "key", 3, &held) == 5);
  EXPECT(held != 0);
  EXPECT(mcgo_store_get_finish(held, out, sizeof out) == MCGO_OK);
  EXPECT(memcmp(out, "value", 5) == 0);
  EXPECT(mcgo_store_get_begin(s, "nope", 4, &held) == MCGO_OBJECT_NOT_FOUND);
  EXPECT(held == 0);
  EXPECT(mcgo_store_remove(s, "key", 3, 1) == MCGO_OK);
  mcgo_store_destroy(s);

  fprintf(stderr, "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
