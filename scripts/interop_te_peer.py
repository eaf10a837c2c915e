#!/usr/bin/env python3
"""Python side of the Go <-> Python transfer-engine interoperability test
(interop/transfer_test.go).

It runs upstream Mooncake's own Python TransferEngine (mooncake.engine) on
one buffer it registers, and answers the Go test over stdin / stdout, one
JSON object per line:

    <- {"ok": true, "segment": S, "addr": A, "size": N}   after start-up
    -> {"op": "fill", "seed": K}                          fill the buffer with pattern(K)
    -> {"op": "check", "seed": K, "off": O, "len": L}     buffer[O:O+L] == pattern(K)[O:O+L]?
    -> {"op": "write", "peer": P, "addr": X, "off": O, "len": L}
                                                         write buffer[O:O+L] to X in segment P
    -> {"op": "read", "peer": P, "addr": X, "off": O, "len": L}
                                                         read L bytes at X in P into buffer[O:]
    -> {"op": "notifies"}                                the notifications received so far
    -> {"op": "exit"}
    <- {"ok": true, ...} or {"ok": false, "error": "..."}

Configuration comes from the environment scripts/cluster sets
(MOONCAKE_TE_META_DATA_SERVER, MC_TCP_BIND_ADDRESS) and MCGO_TE_PEER_NAME.
"""
import ctypes
import json
import mmap
import os
import sys

from mooncake.engine import TransferEngine

SIZE = 4 << 20


def pattern(seed, n):
    return bytes((seed * 31 + o * 7 + o // 251) & 0xFF for o in range(n))


def main():
    name = os.environ["MCGO_TE_PEER_NAME"]
    meta = os.environ["MOONCAKE_TE_META_DATA_SERVER"]
    buf = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    te = TransferEngine()
    rc = te.initialize(name, meta, "tcp", "")
    if rc != 0:
        print(json.dumps({"ok": False, "error": f"initialize: {rc}"}), flush=True)
        return 1
    rc = te.register_memory(addr, SIZE)
    if rc != 0:
        print(json.dumps({"ok": False, "error": f"register_memory: {rc}"}), flush=True)
        return 1
    print(json.dumps({"ok": True, "segment": name, "addr": addr, "size": SIZE}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        reply = {"ok": True}
        try:
            if op == "exit":
                break
            if op == "fill":
                buf[:] = pattern(req["seed"], SIZE)
            elif op == "check":
                o, n = req["off"], req["len"]
                if buf[o:o + n] != pattern(req["seed"], SIZE)[o:o + n]:
                    reply = {"ok": False, "error": "bytes differ"}
            elif op in ("write", "read"):
                o, n = req["off"], req["len"]
                f = te.transfer_sync_write if op == "write" else te.transfer_sync_read
                rc = f(req["peer"], addr + o, req["addr"], n)
                if rc != 0:
                    reply = {"ok": False, "error": f"transfer_sync_{op}: {rc}"}
            elif op == "notifies":
                reply["notifies"] = [{"name": x.name, "msg": x.msg} for x in te.get_notifies()]
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # the test reports it
            reply = {"ok": False, "error": repr(exc)}
        print(json.dumps(reply), flush=True)
    te.unregister_memory(addr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
