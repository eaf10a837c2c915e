/* The loader of the dispatch table (dispatch_gen.c): mcgo_dispatch_open
 * opens a libmcgo_native.so and takes every function of the C ABI from it
 * into t, checking its ABI version; mcgo_dispatch_install puts them in the
 * table every call goes through (internal/cabi decides when it may). Codes
 * of its own; err gets the reason. */
#ifndef MCGO_DISPATCH_LOAD_H
#define MCGO_DISPATCH_LOAD_H

#include <stddef.h>

#include "mcgo/store.h" /* the types; already included (renamed) by dispatch_gen.h */
#include "dispatch_table_gen.h"

#define MCGO_DISPATCH_NO_LIBRARY 1 /* dlopen failed */
#define MCGO_DISPATCH_NO_SYMBOL 2  /* a function of the ABI is missing */
#define MCGO_DISPATCH_ABI 3        /* another ABI version */

int mcgo_dispatch_open(const char *path, struct mcgo_fns *t, char *err, size_t errlen);
const char *mcgo_dispatch_upstream(const struct mcgo_fns *t);
void mcgo_dispatch_install(const struct mcgo_fns *t);

#endif
