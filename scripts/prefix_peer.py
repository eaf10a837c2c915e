#!/usr/bin/env python3
"""Python side of the prefix index test (interop/prefix_test.go).

It stores and removes SGLang-shaped page keys with upstream Mooncake's own
Python client (mooncake.store), computing the page hashes and keys itself
the way SGLang does (get_hash_str: SHA-256 of the prior digest then each
token id as a little-endian uint32, chained; MHA keys
"{model}_{hash}_{tp}_k" / "_v" for every TP rank), so that the Go side
checks its own hashing and key expansion against them. One JSON object per
line on stdin / stdout:

    -> {"op": "put_pages", "tokens": [...], "page_size": P, "tp_size": T,
        "model": M, "pages": N, "size": S}
       put the keys of the first N full pages (S bytes each); answer their keys
    -> {"op": "remove", "keys": [...]}   remove each key (absent keys are fine)
    -> {"op": "exit"}
    <- {"ok": true, ...} or {"ok": false, "error": "..."}

The cluster comes from the environment (MOONCAKE_MASTER,
MOONCAKE_TE_META_DATA_SERVER); the client mounts no segment (only the local
buffer its copying put needs), so what it puts lands in the Go clients'
segments.
"""
import hashlib
import json
import os
import struct
import sys

from mooncake.store import MooncakeDistributedStore


def page_hashes(tokens, page_size):
    prev = None
    out = []
    for p in range(len(tokens) // page_size):
        h = hashlib.sha256()
        if prev is not None:
            h.update(prev)
        for t in tokens[p * page_size:(p + 1) * page_size]:
            h.update(struct.pack("<I", t))
        prev = h.digest()
        out.append(h.hexdigest())
    return out


def page_keys(h, tp_size, model):
    # SGLang's mooncake_store.py: the model name (with "/" replaced) is the
    # key prefix; MHA suffixes are _{tp_rank}_k and _{tp_rank}_v.
    pre = model.replace("/", "-") + "_" if model else ""
    keys = []
    for tp in range(tp_size):
        keys += [f"{pre}{h}_{tp}_k", f"{pre}{h}_{tp}_v"]
    return keys


def main():
    store = MooncakeDistributedStore()
    rc = store.setup("127.0.0.1", os.environ["MOONCAKE_TE_META_DATA_SERVER"], 0, 16 << 20, "tcp", "",
                     os.environ["MOONCAKE_MASTER"])
    if rc != 0:
        print(json.dumps({"ok": False, "error": f"setup returned {rc}"}), flush=True)
        return 1
    print(json.dumps({"ok": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "exit":
                break
            if req["op"] == "put_pages":
                hashes = page_hashes(req["tokens"], req["page_size"])[:req["pages"]]
                keys = [k for h in hashes for k in page_keys(h, req["tp_size"], req["model"])]
                value = b"p" * req["size"]
                for k in keys:
                    rc = store.put(k, value)
                    # -705 OBJECT_ALREADY_EXISTS: stored before, still there
                    if rc not in (0, -705):
                        raise RuntimeError(f"put {k}: {rc}")
                print(json.dumps({"ok": True, "keys": keys}), flush=True)
            elif req["op"] == "remove":
                for k in req["keys"]:
                    store.remove(k)
                print(json.dumps({"ok": True}), flush=True)
            else:
                raise ValueError(f"unknown op {req['op']!r}")
        except Exception as e:  # report, keep serving
            print(json.dumps({"ok": False, "error": str(e)}), flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
