/* mcgo.h must compile as C (C99) and be usable from C. */
#include "mcgo.h"

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
  mcgo_config cfg;
  mcgo_replicate_config rc;
  char err[128];
  char out[16];
  uint64_t osize = 0;

  EXPECT(mcgo_abi_version() == MCGO_ABI_VERSION);
  EXPECT(strcmp(mcgo_engine_name(), "embedded") == 0);
  EXPECT(mcgo_create(&s) == MCGO_OK);

  memset(&cfg, 0, sizeof cfg);
  cfg.local_hostname = "127.0.0.1";
  cfg.metadata_server = "P2PHANDSHAKE";
  cfg.global_segment_size = (uint64_t)16 << 20; /* the 16 MiB minimum */
  cfg.local_buffer_size = 1 << 20;
  cfg.protocol = "tcp";
  cfg.device_name = "";
  cfg.master_server_address = "c-header-test:50051";
  EXPECT(mcgo_setup(s, &cfg, err, sizeof err) == MCGO_OK);

  memset(&rc, 0, sizeof rc);
  rc.replica_num = 1;
  EXPECT(mcgo_put(s, "key", 3, "value", 5, rc) == MCGO_OK);
  EXPECT(mcgo_get(s, "key", 3, out, sizeof out, &osize) == 5);
  EXPECT(osize == 5 && memcmp(out, "value", 5) == 0);
  EXPECT(mcgo_get(s, "nope", 4, out, sizeof out, &osize) == MCGO_OBJECT_NOT_FOUND);
  EXPECT(mcgo_remove(s, "key", 3, 1) == MCGO_OK);
  mcgo_destroy(s);

  fprintf(stderr, "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
