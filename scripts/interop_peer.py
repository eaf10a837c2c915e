#!/usr/bin/env python3
"""Python side of the Go <-> Python interoperability test (interop/).

It drives upstream Mooncake's own Python client (mooncake.store) the way
SGLang's HiCache Mooncake backend does, and answers a Go test over stdin /
stdout, one JSON object per line:

    -> {"op": "write", "prefix": P}    write the object set of prefix P
    -> {"op": "verify", "prefix": P}   read the set of P (written by Go), check every byte
    -> {"op": "exit"}
    <- {"ok": true, ...} or {"ok": false, "error": "..."}

The object set (identical in interop/objects.go; keep them in step):
  copy:   "{P}/copy-{i}" for sizes 1, 4096, 100000, 1 MiB   put / get (copying)
  zc:     "{P}/zc-{i}", 16 x 64 KiB                          batch_put_from / batch_get_into
  multi:  "{P}/mb-{i}", 8 keys x 10 buffers x 1000 B         batch_*_multi_buffers
  mla:    SGLang MLA layer_first pool (L=61, C=576, bf16, P=16), 4 pages,
          keys "{h}__k" (page hashes of the prefix's tokens), one multi-buffer object per page
  mha:    SGLang MHA page_first pool (L=32, H=8, D=128, bf16, P=16), 4 pages,
          keys "{h}_0_k" / "{h}_0_v", single-buffer objects
Every object's bytes are pattern(crc32(key), size).

Configuration comes from the environment that scripts/cluster sets
(MOONCAKE_MASTER, MOONCAKE_TE_META_DATA_SERVER, MC_TCP_BIND_ADDRESS).
"""
import hashlib
import json
import os
import struct
import sys
import zlib

from hostmem import Memory
from mooncake.store import MooncakeDistributedStore

PAGE = 16
MLA = dict(L=61, C=576, es=2)
MHA = dict(L=32, H=8, D=128, es=2)
PAGES = 4


def pattern(seed, n):
    return bytes((seed + o * 5 + o // 997) & 0xFF for o in range(n))


def obj(key, n):
    return pattern(zlib.crc32(key.encode()), n)


def page_hashes(prefix, npages):
    """SGLang's chained page hashes of token ids derived from the prefix."""
    prior = hashlib.sha256(prefix.encode()).hexdigest()
    tokens = [(zlib.crc32(prefix.encode()) + i * 7) & 0xFFFFFFFF for i in range(npages * PAGE)]
    out = []
    prev = bytes.fromhex(prior)
    for p in range(npages):
        h = hashlib.sha256()
        h.update(prev)
        for t in tokens[p * PAGE:(p + 1) * PAGE]:
            h.update(struct.pack("<I", t))
        prev = h.digest()
        out.append(h.hexdigest())
    return prior, tokens, out


class Peer:
    def __init__(self):
        self.store = MooncakeDistributedStore()
        rc = self.store.setup(
            "127.0.0.1",
            os.environ["MOONCAKE_TE_META_DATA_SERVER"],
            256 << 20,
            64 << 20,
            "tcp",
            "",
            os.environ["MOONCAKE_MASTER"],
        )
        if rc != 0:
            raise RuntimeError(f"setup returned {rc}")
        self.mem = Memory(96 << 20)
        rc = self.store.register_buffer(self.mem.addr, self.mem.size)
        if rc != 0:
            raise RuntimeError(f"register_buffer returned {rc}")
        # Regions of self.mem: zc | multi | mla pool | mha pool
        self.zc_off = 0
        self.mb_off = 16 * 65536
        self.mla_off = self.mb_off + 8 * 10 * 1000 + 4096
        mla_S = (PAGES + 1) * PAGE  # page_num = tokens/P + 1
        self.mla_S = mla_S
        self.mla_bytes = MLA["L"] * mla_S * MLA["C"] * MLA["es"]
        self.mha_off = self.mla_off + self.mla_bytes + 4096
        self.mha_S = (PAGES + 1) * PAGE
        self.mha_bytes = 2 * self.mha_S * MHA["L"] * MHA["H"] * MHA["D"] * MHA["es"]
        assert self.mha_off + self.mha_bytes <= self.mem.size

    # -- the object set ------------------------------------------------------

    def mla_page_ptrs(self, host_idx):
        """get_page_buffer_meta of MLA layer_first: one buffer per layer."""
        L, C, es, S = MLA["L"], MLA["C"], MLA["es"], self.mla_S
        base = self.mem.addr + self.mla_off
        ptrs = [base + host_idx * C * es + l * S * C * es for l in range(L)]
        return ptrs, [PAGE * C * es] * L

    def mha_page_ptrs(self, host_idx):
        """get_page_buffer_meta of MHA page_first: K then V."""
        L, H, D, es, S = MHA["L"], MHA["H"], MHA["D"], MHA["es"], self.mha_S
        base = self.mem.addr + self.mha_off
        k = base + host_idx * L * H * D * es
        v = k + L * S * H * D * es
        n = L * PAGE * H * D * es
        return [k, v], [n, n]

    def write(self, prefix):
        s = self.store
        for i, n in enumerate([1, 4096, 100000, 1 << 20]):
            k = f"{prefix}/copy-{i}"
            check(s.put(k, obj(k, n)) == 0, f"put {k}")
        keys, ptrs, sizes = [], [], []
        for i in range(16):
            k = f"{prefix}/zc-{i}"
            off = self.zc_off + i * 65536
            self.mem.write(off, obj(k, 65536))
            keys.append(k)
            ptrs.append(self.mem.addr + off)
            sizes.append(65536)
        check(s.batch_put_from(keys, ptrs, sizes) == [0] * 16, "batch_put_from")
        keys, aptrs, asizes = [], [], []
        for i in range(8):
            k = f"{prefix}/mb-{i}"
            data = obj(k, 10 * 1000)
            ps = []
            for b in range(10):
                off = self.mb_off + (b * 8 + i) * 1000  # interleaved, like layers
                self.mem.write(off, data[b * 1000:(b + 1) * 1000])
                ps.append(self.mem.addr + off)
            keys.append(k)
            aptrs.append(ps)
            asizes.append([1000] * 10)
        check(s.batch_put_from_multi_buffers(keys, aptrs, asizes) == [0] * 8,
              "batch_put_from_multi_buffers")
        _, _, hashes = page_hashes(prefix, PAGES)
        # MLA layer_first: page j at host slots (j+1)*P (slot 0..P-1 unused).
        keys, aptrs, asizes = [], [], []
        for j, h in enumerate(hashes):
            k = f"{h}__k"
            ptrs, sizes = self.mla_page_ptrs((j + 1) * PAGE)
            data = obj(k, sum(sizes))
            o = 0
            for p, n in zip(ptrs, sizes):
                self.mem.write(p - self.mem.addr, data[o:o + n])
                o += n
            keys.append(k)
            aptrs.append(ptrs)
            asizes.append(sizes)
        check(s.batch_put_from_multi_buffers(keys, aptrs, asizes) == [0] * PAGES,
              "MLA layer_first batch_put_from_multi_buffers")
        # MHA page_first: page j at host slots j*P.
        keys, ptrs, sizes = [], [], []
        for j, h in enumerate(hashes):
            kp, ks = self.mha_page_ptrs(j * PAGE)
            for suffix, p, n in zip(("k", "v"), kp, ks):
                k = f"{h}_0_{suffix}"
                self.mem.write(p - self.mem.addr, obj(k, n))
                keys.append(k)
                ptrs.append(p)
                sizes.append(n)
        check(s.batch_put_from(keys, ptrs, sizes) == [0] * (2 * PAGES), "MHA batch_put_from")
        return {"objects": 4 + 16 + 8 + PAGES + 2 * PAGES, "mla_keys": [f"{h}__k" for h in hashes]}

    def verify(self, prefix):
        s = self.store
        for i, n in enumerate([1, 4096, 100000, 1 << 20]):
            k = f"{prefix}/copy-{i}"
            check(s.get(k) == obj(k, n), f"get {k}")
        self.mem.write(0, bytes(self.mla_off))  # clear zc and multi regions
        keys = [f"{prefix}/zc-{i}" for i in range(16)]
        got = s.batch_get_into(keys, [self.mem.addr + i * 65536 for i in range(16)], [65536] * 16)
        check(list(got) == [65536] * 16, f"batch_get_into {list(got)}")
        for i, k in enumerate(keys):
            check(self.mem.read(i * 65536, 65536) == obj(k, 65536), f"bytes of {k}")
        keys = [f"{prefix}/mb-{i}" for i in range(8)]
        aptrs = [[self.mem.addr + self.mb_off + (b * 8 + i) * 1000 for b in range(10)] for i in range(8)]
        got = s.batch_get_into_multi_buffers(keys, aptrs, [[1000] * 10] * 8)
        check(list(got) == [10000] * 8, f"batch_get_into_multi_buffers {list(got)}")
        for i, k in enumerate(keys):
            data = b"".join(self.mem.read(p - self.mem.addr, 1000) for p in aptrs[i])
            check(data == obj(k, 10000), f"bytes of {k}")
        _, _, hashes = page_hashes(prefix, PAGES)
        # Read into other host slots than the writer used.
        self.mem.write(self.mla_off, bytes(self.mla_bytes))
        keys, aptrs, asizes = [], [], []
        for j, h in enumerate(hashes):
            ptrs, sizes = self.mla_page_ptrs((PAGES - j) * PAGE)
            keys.append(f"{h}__k")
            aptrs.append(ptrs)
            asizes.append(sizes)
        got = s.batch_get_into_multi_buffers(keys, aptrs, asizes)
        want = sum(asizes[0])
        check(list(got) == [want] * PAGES, f"MLA get {list(got)}")
        for k, ptrs, sizes in zip(keys, aptrs, asizes):
            data = b"".join(self.mem.read(p - self.mem.addr, n) for p, n in zip(ptrs, sizes))
            check(data == obj(k, want), f"bytes of MLA page {k}")
        self.mem.write(self.mha_off, bytes(self.mha_bytes))
        keys, ptrs, sizes = [], [], []
        for j, h in enumerate(hashes):
            kp, ks = self.mha_page_ptrs((PAGES - 1 - j) * PAGE)
            for suffix, p, n in zip(("k", "v"), kp, ks):
                keys.append(f"{h}_0_{suffix}")
                ptrs.append(p)
                sizes.append(n)
        got = s.batch_get_into(keys, ptrs, sizes)
        check(list(got) == sizes, f"MHA get {list(got)}")
        for k, p, n in zip(keys, ptrs, sizes):
            check(self.mem.read(p - self.mem.addr, n) == obj(k, n), f"bytes of MHA object {k}")
        return {"verified": 4 + 16 + 8 + PAGES + 2 * PAGES}

    def close(self):
        self.store.unregister_buffer(self.mem.addr)
        self.store.close()


def check(ok, what):
    if not ok:
        raise AssertionError(what)


def main():
    peer = Peer()
    print(json.dumps({"ok": True, "ready": True, "hostname": peer.store.get_hostname()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "exit":
                peer.close()
                print(json.dumps({"ok": True}), flush=True)
                return
            if req["op"] == "write":
                out = peer.write(req["prefix"])
            elif req["op"] == "verify":
                out = peer.verify(req["prefix"])
            else:
                raise ValueError(f"unknown op {req['op']}")
            print(json.dumps({"ok": True, **out}), flush=True)
        except Exception as e:  # report, keep serving
            print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    main()
