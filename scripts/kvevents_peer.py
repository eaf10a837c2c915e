#!/usr/bin/env python3
"""Python side of the KV event tests (mooncake/kvevents, upstream_test.go).

Runs a list of store operations with upstream Mooncake's own Python client,
in order, and prints one JSON line with their return codes. The operations
come as a JSON list in argv[1]:

    [["put", key, value], ["upsert", key, value], ["put_batch", [keys], value],
     ["remove", key], ["batch_remove", [keys]], ["remove_by_regex", pattern]]

Configuration comes from the environment scripts/cluster sets
(MOONCAKE_MASTER, MOONCAKE_TE_META_DATA_SERVER, MC_TCP_BIND_ADDRESS).
"""
import json
import os
import sys

from mooncake.store import MooncakeDistributedStore


def main():
    ops = json.loads(sys.argv[1])
    store = MooncakeDistributedStore()
    rc = store.setup(
        "127.0.0.1",
        os.environ["MOONCAKE_TE_META_DATA_SERVER"],
        64 << 20,
        16 << 20,
        "tcp",
        "",
        os.environ["MOONCAKE_MASTER"],
    )
    if rc != 0:
        raise RuntimeError(f"setup returned {rc}")
    out = []
    for op in ops:
        name, args = op[0], op[1:]
        if name in ("put", "upsert"):
            out.append(getattr(store, name)(args[0], args[1].encode()))
        elif name == "put_batch":
            out.append(store.put_batch(args[0], [args[1].encode()] * len(args[0])))
        elif name == "remove":
            out.append(store.remove(args[0], True))
        elif name == "batch_remove":
            out.append(store.batch_remove(args[0], True))
        elif name == "remove_by_regex":
            out.append(store.remove_by_regex(args[0], True))
        else:
            raise ValueError(f"unknown operation {name}")
    print(json.dumps({"ok": True, "results": out}), flush=True)
    store.close()


if __name__ == "__main__":
    main()
