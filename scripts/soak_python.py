#!/usr/bin/env python3
"""Upstream's Python client in the soak (make soak-native; interop/soak).

It writes, reads and checks the same values as the Go soak worker
(interop/soak/value.go, worker.go; keep them in step): a value is a 16-byte
header ("MCSK", version, crc32(key), size, little-endian u32s) and the body
sha256(key + "#" + version) repeated. Its own keys live under --prefix with
the Go worker's layout (s/<i> singles, b/<g>/<i> zero-copy batches,
m/<g>/<i> multi-buffer objects, p/<i> published objects), placed in its own
segment, and each read of them is checked against its model; it also reads
the long-lived Go client's published keys (--cross-prefix) and checks that
each is a whole value of its key. Published keys are only removed (without
force) and put again, never upserted: why is in interop/soak/worker.go.

Every two seconds, and once more on SIGTERM before it closes the store (or
on SIGUSR2, after which it waits for SIGTERM to close), it prints one JSON
line: {"stats": {...}} with the Go worker's Stats fields
(error codes as numbers, "op: -704"). SIGKILL ends it without a word.

Configuration comes from the environment (MOONCAKE_MASTER,
MOONCAKE_TE_META_DATA_SERVER, MC_TCP_BIND_ADDRESS).
"""
import argparse
import hashlib
import json
import os
import random
import signal
import struct
import sys
import time
import zlib

from hostmem import Memory
from mooncake.store import MooncakeDistributedStore, ReplicateConfig

SINGLE_KEYS, GROUPS = 48, 4
BATCH_KEYS, BATCH_VALUE = 16, 16 << 10
MULTI_KEYS, MULTI_BUFS, MULTI_BUF = 8, 4, 2 << 10
SINGLE_SIZES = [1 << 10, 4 << 10, 60 << 10, 250 << 10]
PUBLISHED_KEYS = 16
NOT_FOUND, HAS_LEASE = -704, -706
HEADER = 16


def value(key, ver, size):
    d = hashlib.sha256(f"{key}#{ver}".encode()).digest()
    body = (d * ((size - HEADER) // 32 + 1))[:size - HEADER]
    return b"MCSK" + struct.pack("<III", ver, zlib.crc32(key.encode()), size) + body


def check(b, key):
    """The version of b if it is a whole value of key, else None."""
    if len(b) < HEADER or b[:4] != b"MCSK":
        return None
    ver, crc, size = struct.unpack("<III", b[4:16])
    if crc != zlib.crc32(key.encode()) or size != len(b):
        return None
    return ver if value(key, ver, size) == b else None


# Notes of master failovers (SIGUSR1 from the soak), two per failover: its
# window opens at the kill and closes when the soak judges the clients settled
# (interop/soak/model.go, failovers).
FAILOVERS = [0]

HELD, ROLLED_BACK, DROPPED, ERASED, LOST = 0, 1, 2, 3, 4

# On an HA master with the oplog a put right after a remove of the same key
# may be acknowledged without storing anything (interop/soak/model.go,
# PutAfterRemoveMayDrop; docs/ha.md). --oplog sets it.
PUT_AFTER_REMOVE_MAY_DROP = [False]


class Entry:
    """The versions a key may hold (0: absent), as in interop/soak/model.go."""

    def __init__(self):
        self.vers = [0]
        self.written = False
        self.epoch = FAILOVERS[0]
        self.may_be_dropped = False
        self.removed = False
        self.erasable = False
        self.at = ""

    def next(self):
        return max(self.vers) + 1

    def certain(self):
        return self.vers[0] if len(self.vers) == 1 else None

    def acked(self, ver):
        self.vers = [ver]
        self.at = time.strftime("%H:%M:%S", time.gmtime())
        self.written = True
        self.epoch = FAILOVERS[0]
        self.may_be_dropped = False
        self.erasable = False

    def acked_remove(self):
        self.acked(0)
        self.removed = PUT_AFTER_REMOVE_MAY_DROP[0]

    def acked_put(self, ver):
        """As entry.ackedWrite: a write after an acknowledged remove may be dropped."""
        self.acked(ver)
        self.may_be_dropped = self.removed

    acked_upsert = acked_put

    def failed(self, ver):
        if ver not in self.vers:
            self.vers = (self.vers + [ver])[-4:]
        self.written = True

    def failed_upsert(self, ver):
        """As entry.failedUpsert: a failed upsert may also have erased the key."""
        self.failed(ver)
        if 0 not in self.vers:
            self.failed(0)
            self.erasable = True

    def exist_verdict(self, exists):
        """An existence check, judged as verdict judges a read (it learns no version)."""
        return self.judge(exists, 0, False)

    def verdict(self, found):
        return self.judge(found != 0, found, True)

    def judge(self, exists, found, exact):
        """As entry.judge in interop/soak/model.go."""
        def match(v):
            return v == found if exact else (v != 0) == exists

        def learn():
            if exact or not exists:
                self.acked(found)
            if exists:
                self.removed = False

        window = FAILOVERS[0] % 2 == 1
        hit = [v for v in self.vers if match(v)]
        if hit:
            was_erased = hit[0] == 0 and self.erasable
            if not window:
                learn()
            return ERASED if was_erased else HELD
        if not exists and self.may_be_dropped:
            self.acked(0)
            return DROPPED
        if window:
            if exact:
                self.failed(found)
            return ROLLED_BACK
        if self.written and self.epoch < FAILOVERS[0]:
            learn()
            return ROLLED_BACK
        learn()  # so one lost write counts once, not at every later read
        return LOST


class Soak:
    def __init__(self, prefix, cross_prefix, seed):
        self.prefix, self.cross_prefix = prefix, cross_prefix
        self.rand = random.Random(seed)
        # On an HA cluster no master may lead for a few seconds (a failover):
        # setup fails then, and a new client retries as a service would.
        deadline = time.monotonic() + 90
        while True:
            self.store = MooncakeDistributedStore()
            rc = self.store.setup("127.0.0.1", os.environ["MOONCAKE_TE_META_DATA_SERVER"],
                                  128 << 20, 16 << 20, "tcp", "", os.environ["MOONCAKE_MASTER"])
            if rc == 0:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"setup returned {rc}")
            time.sleep(1)
        self.cfg = ReplicateConfig()
        self.cfg.preferred_segments = [self.store.get_hostname()]
        self.batch_bytes = BATCH_KEYS * BATCH_VALUE
        self.multi_bytes = MULTI_KEYS * MULTI_BUFS * MULTI_BUF
        self.single_off = 2 * self.batch_bytes + 2 * self.multi_bytes
        self.mem = Memory(self.single_off + SINGLE_SIZES[-1])
        rc = self.store.register_buffer(self.mem.addr, self.mem.size)
        if rc != 0:
            raise SystemExit(f"register_buffer returned {rc}")
        self.model = {}
        self.singles = [self._key(f"s/{i}") for i in range(SINGLE_KEYS)]
        self.published = [self._key(f"p/{i}") for i in range(PUBLISHED_KEYS)]
        self.batches = [[self._key(f"b/{g}/{i}") for i in range(BATCH_KEYS)] for g in range(GROUPS)]
        self.multis = [[self._key(f"m/{g}/{i}") for i in range(MULTI_KEYS)] for g in range(GROUPS)]
        self.stats = {"ops": {}, "keys": {}, "bytes_verified": 0, "errors": {},
                      "corrupt": 0, "lost": 0, "leased": 0, "slowest_ms": 0, "rolled_back": 0, "dropped": 0, "erased": 0,
                      "corrupt_notes": [], "lost_notes": [], "rolled_notes": []}

    def _key(self, rest):
        k = f"{self.prefix}/{rest}"
        self.model[k] = Entry()
        return k

    # -- counters ---------------------------------------------------------

    def count(self, op, keys=1):
        s = self.stats
        s["ops"][op] = s["ops"].get(op, 0) + 1
        s["keys"][op] = s["keys"].get(op, 0) + keys

    def fail(self, op, rc):
        k = f"{op}: {rc}"
        self.stats["errors"][k] = self.stats["errors"].get(k, 0) + 1

    def corrupt(self, msg):
        self.stats["corrupt"] += 1
        if len(self.stats["corrupt_notes"]) < 10:
            self.stats["corrupt_notes"].append(msg)

    def lost(self, msg):
        self.stats["lost"] += 1
        if len(self.stats["lost_notes"]) < 10:
            self.stats["lost_notes"].append(msg)

    def rolled_back(self, msg):
        self.stats["rolled_back"] += 1
        if len(self.stats["rolled_notes"]) < 10:
            self.stats["rolled_notes"].append(msg)

    def found(self, op, key, b):
        """A read of key returned b (None: not found): check it."""
        ver = 0
        if b is not None:
            ver = check(b, key)
            if ver is None:
                self.corrupt(f"{op} {key!r}: {len(b)} bytes that are no value of it")
                return
            self.stats["bytes_verified"] += len(b)
        e = self.model.get(key)
        if e is None:
            return
        had, since = list(e.vers), e.at
        v = e.verdict(ver)
        at = time.strftime("%H:%M:%S", time.gmtime())
        if v == LOST:
            self.lost(f"{at} {op} {key!r}: read version {ver} (0: not found), the model has {had} since {since}")
        elif v == DROPPED:
            self.stats["dropped"] += 1
        elif v == ERASED:
            self.stats["erased"] += 1
        elif v == ROLLED_BACK:
            self.rolled_back(f"{at} {op} {key!r}: read version {ver} (0: not found) after a failover, the model had {had}")

    # -- operations -------------------------------------------------------

    def write(self, i):
        """Single object i, of the fixed size SINGLE_SIZES[i % 4] (as worker.go)."""
        self.put(self.singles[i], SINGLE_SIZES[i % len(SINGLE_SIZES)], "")

    def publish(self, i):
        """Published key i: removed without force (unless absent), then put."""
        key = self.published[i]
        if self.model[key].certain() != 0 and not self.remove(key):
            return
        self.put(key, SINGLE_SIZES[i % len(SINGLE_SIZES)], "publish_")

    def put(self, key, size, as_):
        e = self.model[key]
        ver = e.next()
        v = value(key, ver, size)
        op = as_ + ("put" if e.certain() == 0 else "upsert")
        self.count(op)
        rc = (self.store.put if op.endswith("put") else self.store.upsert)(key, v, self.cfg)
        if rc == 0 and op.endswith("put"):
            e.acked_put(ver)
        elif rc == 0:
            e.acked_upsert(ver)
        else:
            self.fail(op, rc)
            (e.failed if op.endswith("put") else e.failed_upsert)(ver)

    def get(self, key):
        self.count("get_into")
        n = self.store.get_into(key, self.mem.addr + self.single_off, SINGLE_SIZES[-1])
        if n >= 0:
            self.found("get_into", key, self.mem.read(self.single_off, n))
        elif n == NOT_FOUND:
            self.found("get_into", key, None)
        else:
            self.fail("get_into", n)

    def cross(self):
        key = f"{self.cross_prefix}/{self.rand.randrange(PUBLISHED_KEYS)}"
        self.count("cross_get")
        b = self.store.get(key)
        if b:  # upstream's get returns b"" for a missing key and for an error alike
            self.found("cross_get", key, bytes(b))

    def remove(self, key):
        """Without force: a reader's lease protects its read. True if gone."""
        self.count("remove")
        rc = self.store.remove(key, False)
        e = self.model[key]
        if rc == 0:
            e.acked_remove()
            return True
        if rc == NOT_FOUND:
            self.found("remove", key, None)
            return True
        if rc == HAS_LEASE:
            self.stats["leased"] += 1
        else:
            self.fail("remove", rc)
            e.failed(0)
        return False

    def exist(self):
        keys = self.batches[self.rand.randrange(GROUPS)]
        self.count("batch_is_exist", len(keys))
        for k, r in zip(keys, self.store.batch_is_exist(keys)):
            if r < 0:
                self.fail("batch_is_exist", r)
                continue
            e = self.model[k]
            had, since = list(e.vers), e.at
            v = e.exist_verdict(r == 1)
            at = time.strftime("%H:%M:%S", time.gmtime())
            if v == LOST:
                self.lost(f"{at} batch_is_exist {k!r}: {r}, the model has {had} since {since}")
            elif v == DROPPED:
                self.stats["dropped"] += 1
            elif v == ERASED:
                self.stats["erased"] += 1
            elif v == ROLLED_BACK:
                self.rolled_back(f"{at} batch_is_exist {k!r}: {r} after a failover, the model had {had}")

    def settle(self, op, keys, vers, res):
        for k, v, r in zip(keys, vers, res):
            if r >= 0 and "_put_" in op:
                self.model[k].acked_put(v)
            elif r >= 0:
                self.model[k].acked_upsert(v)
            else:
                (self.model[k].failed_upsert if "upsert" in op else self.model[k].failed)(v)
                self.fail(op, r)

    def batch(self, g):
        keys = self.batches[g]
        vers = [self.model[k].next() for k in keys]
        absent = all(self.model[k].certain() == 0 for k in keys)
        for i, (k, v) in enumerate(zip(keys, vers)):
            self.mem.write(i * BATCH_VALUE, value(k, v, BATCH_VALUE))
        src = [self.mem.addr + i * BATCH_VALUE for i in range(len(keys))]
        op = "batch_put_from" if absent else "batch_upsert_from"
        self.count(op, len(keys))
        fn = self.store.batch_put_from if absent else self.store.batch_upsert_from
        self.settle(op, keys, vers, fn(keys, src, [BATCH_VALUE] * len(keys), self.cfg))
        self.mem.clear(self.batch_bytes, self.batch_bytes)
        dst = [a + self.batch_bytes for a in src]
        self.count("batch_get_into", len(keys))
        res = self.store.batch_get_into(keys, dst, [BATCH_VALUE] * len(keys))
        for i, (k, r) in enumerate(zip(keys, res)):
            self.read_result("batch_get_into", k, r, lambda i=i: self.mem.read(self.batch_bytes + i * BATCH_VALUE, BATCH_VALUE), BATCH_VALUE)

    def multi(self, g):
        """Multi-buffer objects: the Python client has no multi-buffer upsert,
        so keys that may exist are removed first, then put."""
        keys = self.multis[g]
        base = 2 * self.batch_bytes
        src, dst = base, base + self.multi_bytes
        for k in keys:
            if self.model[k].certain() != 0:
                self.remove(k)
        keys = [k for k in keys if self.model[k].certain() == 0]
        if not keys:
            return
        vers = [self.model[k].next() for k in keys]
        ptrs, sizes = [], []
        for i, (k, v) in enumerate(zip(keys, vers)):
            val = value(k, v, MULTI_BUFS * MULTI_BUF)
            ps = []
            for b in range(MULTI_BUFS):
                off = src + (b * MULTI_KEYS + i) * MULTI_BUF
                self.mem.write(off, val[b * MULTI_BUF:(b + 1) * MULTI_BUF])
                ps.append(self.mem.addr + off)
            ptrs.append(ps)
            sizes.append([MULTI_BUF] * MULTI_BUFS)
        self.count("batch_put_from_multi_buffers", len(keys))
        self.settle("batch_put_from_multi_buffers", keys, vers,
                    self.store.batch_put_from_multi_buffers(keys, ptrs, sizes, self.cfg))
        self.mem.clear(dst, self.multi_bytes)
        dptrs = [[p + self.multi_bytes for p in ps] for ps in ptrs]
        self.count("batch_get_into_multi_buffers", len(keys))
        res = self.store.batch_get_into_multi_buffers(keys, dptrs, sizes)

        def gather(i):
            return b"".join(self.mem.read(dst + (b * MULTI_KEYS + i) * MULTI_BUF, MULTI_BUF) for b in range(MULTI_BUFS))
        for i, (k, r) in enumerate(zip(keys, res)):
            self.read_result("batch_get_into_multi_buffers", k, r, lambda i=i: gather(i), MULTI_BUFS * MULTI_BUF)

    def read_result(self, op, key, r, data, size):
        if r == size:
            self.found(op, key, data())
        elif r == NOT_FOUND:
            self.found(op, key, None)
        elif r < 0:
            self.fail(op, r)
        else:
            self.corrupt(f"{op} {key!r}: {r} bytes read into {size}")

    def step(self):
        n = self.rand.randrange(100)
        if n < 20:
            self.write(self.rand.randrange(SINGLE_KEYS))
        elif n < 40:
            self.get(self.rand.choice(self.singles))
        elif n < 55:
            self.batch(self.rand.randrange(GROUPS))
        elif n < 70:
            self.multi(self.rand.randrange(GROUPS))
        elif n < 73:
            self.remove(self.rand.choice(self.singles))
        elif n < 76:
            self.publish(self.rand.randrange(PUBLISHED_KEYS))
        elif n < 80:
            self.exist()
        elif self.cross_prefix:
            self.cross()

    def report(self, final=False):
        print(json.dumps({"stats": self.stats, "final": final}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--cross-prefix", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--oplog", action="store_true", help="an HA master group on etcd, with the oplog")
    args = ap.parse_args()
    PUT_AFTER_REMOVE_MAY_DROP[0] = args.oplog
    stopping, held = [], []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGUSR1, lambda *_: FAILOVERS.__setitem__(0, FAILOVERS[0] + 1))
    # SIGUSR2: check now, close later (on SIGTERM), so that no client's
    # segment leaves while another still checks keys it may hold.
    signal.signal(signal.SIGUSR2, lambda *_: held.append(1))
    s = Soak(args.prefix, args.cross_prefix, args.seed)
    print(json.dumps({"ready": s.store.get_hostname()}), flush=True)
    last = time.monotonic()
    while not stopping and not held:
        began = time.monotonic()
        s.step()
        s.stats["slowest_ms"] = max(s.stats["slowest_ms"], int((time.monotonic() - began) * 1000))
        if time.monotonic() - last >= 2:
            s.report()
            last = time.monotonic()
    for k in list(s.model):
        s.get(k)
    s.report(final=True)
    while held and not stopping:
        time.sleep(0.05)
    s.store.unregister_buffer(s.mem.addr)
    s.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
