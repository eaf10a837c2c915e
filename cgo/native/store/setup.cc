// The native store's lifecycle (package mooncake's store.go): create,
// set up (alone or on a transfer engine), destroy, capabilities, health
// and hostname.

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "common/transfer_args.h"
#include "native/store/call.h"

using namespace mcgo::native::store;  // NOLINT: the store part's frame (call.h)

namespace {

int32_t SetupOn(mcgo_store *s, const mcgo_store_config *cfg, mcgo_te *te,
                char *errmsg, size_t errmsg_cap) {
  return SetupGuard(errmsg, errmsg_cap, [&](const auto &fail) -> int32_t {
    if (s == nullptr || cfg == nullptr) {
      return fail(MCGO_INVALID_PARAMS, "null store or config");
    }
    std::unique_lock<std::shared_mutex> lock(s->mu);
    if (s->ready) return fail(MCGO_INVALID_PARAMS, "store is already set up");
    if (!s->client) return fail(MCGO_INVALID_PARAMS, "store was torn down");
    auto str = [](const char *p) { return p ? std::string(p) : std::string(); };
    const std::string protocol = str(cfg->protocol);
    if (protocol != "tcp" && protocol != "rdma") {
      return fail(MCGO_INVALID_PARAMS,
                  "protocol \"" + protocol + "\": want \"tcp\" or \"rdma\"");
    }
    if (str(cfg->master_server_address).empty()) {
      return fail(MCGO_INVALID_PARAMS, "master_server_address is empty");
    }
    std::string host = str(cfg->local_hostname), meta = str(cfg->metadata_server);
    if (std::string why; te == nullptr || !meta.empty()) {
      switch (mcgo::args::CheckMetadata(meta, &why)) {
        case mcgo::args::MetadataCheck::kOk:
          break;
        case mcgo::args::MetadataCheck::kUnknown:
          return fail(MCGO_INVALID_PARAMS, why);
        case mcgo::args::MetadataCheck::kNotBuilt:
          return fail(MCGO_NOT_SUPPORTED, why);
      }
    }
    std::shared_ptr<mooncake::TransferEngine> engine;
    if (te != nullptr) {
      std::string name, metadata;
      if (!mcgo::native::AttachStore(te, &engine, &name, &metadata)) {
        return fail(MCGO_INVALID_PARAMS, "the transfer engine is not usable");
      }
      std::string why;
      if (!host.empty() && host != name) {
        why = "local_hostname \"" + host + "\" is not the engine's segment name \"" + name + "\"";
      } else if (!meta.empty() && meta != metadata) {
        why = "metadata_server \"" + meta + "\" is not the engine's \"" + metadata + "\"";
      } else if (engine->getTransport(protocol) == nullptr) {
        why = "the engine has no " + protocol + " transport installed";
      }
      if (!why.empty()) {
        mcgo::native::DetachStore(te);
        return fail(MCGO_INVALID_PARAMS, why);
      }
      host = name;  // upstream needs host:port equal to the engine's segment
      meta = metadata;
    }
    if (cfg->client_http_port < 0 || cfg->client_http_port > 65535) {
      mcgo::native::DetachStore(te);
      return fail(MCGO_INVALID_PARAMS, "client_http_port out of range");
    }
    const std::string tenant = str(cfg->tenant_id).empty() ? "default" : str(cfg->tenant_id);
    const int rc = s->client->setup_real(
        host, meta, static_cast<size_t>(cfg->global_segment_size),
        static_cast<size_t>(cfg->local_buffer_size), protocol,
        str(cfg->device_name), str(cfg->master_server_address), engine,
        /*ipc_socket_path=*/"", cfg->enable_ssd_offload != 0, str(cfg->ssd_offload_path), tenant,
        cfg->enable_client_http_server != 0,
        cfg->client_http_port != 0 ? cfg->client_http_port : mooncake::DEFAULT_CLIENT_HTTP_PORT);
    if (rc != 0) {
      mcgo::native::DetachStore(te);
      return fail(rc < 0 ? rc : MCGO_INTERNAL_ERROR,
                  "upstream setup_real failed (see the client's log on "
                  "stderr; is the master running and the metadata server "
                  "reachable?)");
    }
    s->engine = te;
    s->protocol = protocol;
    s->ready = true;
    return MCGO_OK;
  });
}

}  // namespace

extern "C" {

int32_t mcgo_store_create(mcgo_store **out) {
  return Guard32([&]() -> int32_t {
    if (out == nullptr) return MCGO_INVALID_PARAMS;
    *out = nullptr;
    auto s = std::make_unique<mcgo_store>();
    // Not RealClient::create(): that registers the client with upstream's
    // ResourceTracker, whose signal thread would fight the Go runtime over
    // SIGINT/SIGTERM. mcgo_store_destroy tears the client down explicitly.
    auto real = std::make_shared<mooncake::RealClient>();
    s->real = real.get();
    s->client = std::move(real);
    *out = s.release();
    return MCGO_OK;
  });
}

void mcgo_store_destroy(mcgo_store *s) {
  if (s == nullptr) return;
  try {
    std::unique_lock<std::shared_mutex> lock(s->mu);
    s->ready = false;
    if (s->real == nullptr && s->client) {
      TearDownDummy(std::move(s->client), s->pool.Take());
    } else if (s->client) {
      s->client->tearDownAll();
    }
    s->client.reset();
    s->real = nullptr;
  } catch (...) {
  }
  mcgo::native::DetachStore(s->engine);
  delete s;
}

int32_t mcgo_store_setup(mcgo_store *s, const mcgo_store_config *cfg, char *errmsg,
                   size_t errmsg_cap) {
  return SetupOn(s, cfg, nullptr, errmsg, errmsg_cap);
}

int32_t mcgo_store_setup_on_engine(mcgo_store *s, const mcgo_store_config *cfg,
                                   mcgo_te *engine, char *errmsg,
                                   size_t errmsg_cap) {
  if (engine == nullptr) {
    mcgo::args::WriteMessage(errmsg, errmsg_cap, "engine is NULL");
    return MCGO_INVALID_PARAMS;
  }
  return SetupOn(s, cfg, engine, errmsg, errmsg_cap);
}

uint32_t mcgo_store_capabilities(void) {
  // The setup options upstream's setup_real takes, and what this upstream
  // has of the rest (MCGO_HAVE_*: cgo/native/features.cmake).
  return MCGO_CAP_TENANTS | MCGO_CAP_SSD_OFFLOAD | MCGO_CAP_CLIENT_HTTP_SERVER |
         MCGO_CAP_NOF_REPLICAS | (MCGO_HAVE_DFS_REPLICAS ? MCGO_CAP_DFS_REPLICAS : 0u) |
         (MCGO_HAVE_SESSIONS ? MCGO_CAP_SESSIONS : 0u) |
         (MCGO_HAVE_MULTI_BUFFER_UPSERT ? MCGO_CAP_MULTI_BUFFER_UPSERT : 0u) |
         (MCGO_HAVE_SOFT_PIN_ACTIONS ? MCGO_CAP_SOFT_PIN_ACTIONS : 0u) |
         (MCGO_HAVE_DRAIN_LOCAL_DISK ? MCGO_CAP_UNMOUNT_LOCAL_DISK : 0u);
}

int32_t mcgo_store_health_check(mcgo_store *s) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr) return MCGO_INVALID_PARAMS;
    switch (call.client()->health_check()) {
      case mooncake::HC_HEALTHY:
        return MCGO_OK;
      case mooncake::HC_NOT_INITIALIZED:
        return MCGO_INVALID_PARAMS;
      default:
        return -900;  // RPC_FAIL: the master does not answer
    }
  });
}

int32_t mcgo_store_hostname(mcgo_store *s, char *buf, size_t buf_cap, size_t *len) {
  return Guard32([&]() -> int32_t {
    Call call(s);
    if (call.client() == nullptr || len == nullptr) return MCGO_INVALID_PARAMS;
    const std::string h = call.client()->get_hostname();
    *len = h.size();
    mcgo::args::WriteMessage(buf, buf_cap, h);
    return MCGO_OK;
  });
}

}  // extern "C"
