// The native backend's store runs on an engine of its transfer part
// (mcgo_store_setup_on_engine): what the store part needs of mcgo_te.
#ifndef MCGO_NATIVE_TRANSFER_ENGINE_HANDLE_H_
#define MCGO_NATIVE_TRANSFER_ENGINE_HANDLE_H_

#include <memory>
#include <string>

#include "mcgo/transfer.h"

namespace mooncake {
class TransferEngine;
}

namespace mcgo::native {

// The engine of e, its segment name and metadata string; counts a store on
// it, which keeps mcgo_te_destroy from running under the store. False when
// e is not a usable engine.
bool AttachStore(mcgo_te *e, std::shared_ptr<mooncake::TransferEngine> *engine,
                 std::string *segment_name, std::string *metadata);
void DetachStore(mcgo_te *e) noexcept;

}  // namespace mcgo::native

#endif  // MCGO_NATIVE_TRANSFER_ENGINE_HANDLE_H_
