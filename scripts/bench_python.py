#!/usr/bin/env python3
"""The mcbench plan driven through upstream Mooncake's Python client.

It runs the plan that `mcbench -list` wrote (the cases and how to measure
them), and writes the same JSON as the Go command (cmd/mcbench), so
`mcbench compare` can put the two side by side: upstream store_kv_bench's
scenarios (verify_write, fill, write_perf, read_perf, mixed_rw; the copying
put/get/put_batch/get_batch and the zero-copy put_from/get_into/
batch_put_from/batch_get_into calls) and the HiCache workloads (a layer-first
DeepSeek-V3 MLA pool and a page-first Llama-3-8B MHA pool stored and loaded
the way SGLang's Mooncake backend does it in Python: page buffer meta, keys,
packing, batch_is_exist, then batch_put_from(_multi_buffers) /
batch_get_into(_multi_buffers)), the multi-buffer calls with prebuilt lists,
and a memmove of the same bytes. The plan's combining twins (cases with
"combining": true, NAME/combining) are the Go client's only: this client
answers them with no results.

Standard library plus the `mooncake.store` module only, which reading and
listing a plan do not need. Written for this project from upstream's
documented Python API; no upstream code is copied.

    go run ./cmd/mcbench -list -quick >plan.jsonl    # the plan flags are mcbench's (mcbench -h)
    MC_TCP_BIND_ADDRESS=127.0.0.1 python3 scripts/bench_python.py --plan plan.jsonl \\
        --master 127.0.0.1:50051 --metadata http://127.0.0.1:8080/metadata --json py.json

    python3 scripts/bench_python.py --plan plan.jsonl --list    # the plan as this script reads it
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import mmap
import os
import platform
import random
import re
import resource
import socket
import sys
import threading
import time
from array import array

SCHEMA = "mcbench/1"

SC_VERIFY, SC_FILL, SC_WRITE, SC_READ, SC_MIXED = "verify_write", "fill", "write_perf", "read_perf", "mixed_rw"
SC_HISET, SC_HIGET, SC_HIEXISTS = "hicache_set", "hicache_get", "hicache_exists"
SC_MPUT, SC_MGET, SC_MEMCPY = "multi_put", "multi_get", "memcpy"
SC_PREFIX = "prefix_lookup"
KV_SCENARIOS = [SC_VERIFY, SC_FILL, SC_WRITE, SC_READ, SC_MIXED]
HI_SCENARIOS = [SC_HISET, SC_HIGET, SC_HIEXISTS]
ALL_SCENARIOS = KV_SCENARIOS + HI_SCENARIOS + [SC_MPUT, SC_MGET, SC_MEMCPY, SC_PREFIX]
POOL_MLA, POOL_MHA = "mla_layer_first", "mha_page_first"
MLA_LAYERS, MLA_LATENT, BF16 = 61, 576, 2
MHA_LAYERS, MHA_HEADS, MHA_HEAD_DIM = 32, 8, 128
PATTERN_BYTES = (0x5A, 0xA5, 0x3C, 0xC3)
LARGE_OBJECT = 1 << 20  # from this object size on, cases also time a memcpy of the same bytes


# ---------------------------------------------------------------- the plan

PLAN_SCHEMA = "mcbench-plan/1"
CASE_KEYS = {"name": str, "scenario": str, "api": str, "value_size": int, "batch": int, "buffers": int,
             "buffer_size": int, "objects": int, "timed": bool}
CASE_OPTIONAL = {"phase": str, "pool": str, "page_size": int, "callers": int, "combining": bool}
SETTINGS_KEYS = {"duration_s": (int, float), "warmup_s": (int, float), "gen_bytes": int, "rwmixread": int, "seed": int,
                 "segment": int, "local_buffer": int, "populate": bool, "thp": bool, "memcpy_ref": bool, "prefault": str}


def load_plan(path):
    """Read a plan file of `mcbench -list`: a header line with the params and settings, then one case per line."""
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty plan file")
    header = json.loads(lines[0])
    if not isinstance(header, dict) or header.get("schema") != PLAN_SCHEMA:
        raise ValueError(f"{path}: not a plan file of schema {PLAN_SCHEMA} (write one with mcbench -list)")
    params, settings = header.get("params"), header.get("settings")
    if not isinstance(params, dict) or not isinstance(settings, dict):
        raise ValueError(f"{path}: the header lacks params or settings")
    for k, t in SETTINGS_KEYS.items():
        if not isinstance(settings.get(k), t) or (t is int and isinstance(settings.get(k), bool)):
            raise ValueError(f"{path}: setting {k!r} missing or of the wrong type")
    cases, seen = [], set()
    for n, line in enumerate(lines[1:], 2):
        c = json.loads(line)
        for k, t in CASE_KEYS.items():
            if not isinstance(c.get(k), t) or (t is int and isinstance(c.get(k), bool)):
                raise ValueError(f"{path}:{n}: case field {k!r} missing or of the wrong type")
        unknown = set(c) - set(CASE_KEYS) - set(CASE_OPTIONAL)
        if unknown:
            raise ValueError(f"{path}:{n}: unknown case fields {sorted(unknown)}")
        if c["scenario"] not in ALL_SCENARIOS:
            raise ValueError(f"{path}:{n}: unknown scenario {c['scenario']!r}")
        if c["name"] in seen:
            raise ValueError(f"{path}:{n}: repeated case {c['name']!r}")
        seen.add(c["name"])
        cases.append(c)
    return header, params, settings, cases


def keys_per_request(c):
    return 2 * c["batch"] if c.get("pool") == POOL_MHA else c["batch"]


# ---------------------------------------------------------------- measuring


def percentile(sorted_vals, p):
    n = len(sorted_vals)
    if n == 0:
        return 0.0
    rank = (n - 1) * p
    lo, hi = int(rank), min(int(rank) + (rank > int(rank)), n - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (rank - lo)


def proc_cpu_ns():
    """The process's CPU time so far, user plus system over all its threads (getrusage RUSAGE_SELF), as mcbench's."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


class Recorder:
    __slots__ = ("lat", "busy", "requests", "keys", "bytes", "errors", "start", "outside", "cpu", "window")

    def __init__(self):
        self.lat, self.busy, self.requests, self.keys, self.bytes, self.errors = [], 0, 0, 0, 0, 0
        self.start = time.perf_counter()
        self.outside = 0  # ns outside the store's calls (HiCache cases)
        self.cpu = 0  # ns of process CPU time over the measured window
        self.window = 0  # several callers: ns of the measured window, over which throughput is computed

    def merge(self, o):
        self.lat.extend(o.lat)
        self.busy += o.busy
        self.requests += o.requests
        self.keys += o.keys
        self.bytes += o.bytes
        self.errors += o.errors
        self.outside += o.outside

    def add(self, ns, keys, nbytes):
        self.lat.append(ns)
        self.busy += ns
        self.requests += 1
        self.keys += keys
        self.bytes += nbytes

    def result(self, c):
        r = dict(c)
        busy = (self.window or self.busy) / 1e9
        r.update(requests=self.requests, keys=self.keys, bytes=self.bytes, busy_s=busy,
                 wall_s=time.perf_counter() - self.start, errors=self.errors)
        if self.cpu > 0:
            r.update(cpu_s=self.cpu / 1e9, cpu_us_per_op=self.cpu / 1e3 / self.keys if self.keys else 0.0)
        r.update(
                 ops_per_s=self.keys / busy if busy else 0.0, req_per_s=self.requests / busy if busy else 0.0,
                 gbps=self.bytes / busy / 1e9 if busy else 0.0)
        lat = sorted(self.lat)
        if lat:
            r.update(mean_us=self.busy / len(lat) / 1e3, p50_us=percentile(lat, 0.5) / 1e3,
                     p99_us=percentile(lat, 0.99) / 1e3, p999_us=percentile(lat, 0.999) / 1e3)
            if self.outside > 0:
                r["outside_us"] = self.outside / len(lat) / 1e3
        else:
            r.update(mean_us=0.0, p50_us=0.0, p99_us=0.0, p999_us=0.0)
        return r


class Progress:
    def __init__(self, on, total):
        self.on, self.total, self.idx, self.name, self.last, self.drawn = on, total, 0, "", 0.0, False
        self.started = time.perf_counter()

    def begin(self, idx, name):
        if self.on:
            self.idx, self.name = idx, name
            self.draw(0.0, True)

    def fraction(self, f):
        if self.on:
            self.draw(f, False)

    def draw(self, f, force):
        now = time.perf_counter()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        n = int(min(max(f, 0.0), 1.0) * 24)
        w = len(str(self.total))
        sys.stderr.write(f"\r\033[K[{self.idx + 1:{w}d}/{self.total}] {self.name[:44]:<44} "
                         f"{'#' * n}{'.' * (24 - n)} {now - self.started:5.0f}s")
        sys.stderr.flush()
        self.drawn = True

    def stop(self):
        if self.on and self.drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.drawn = False


THP = [True]  # --thp: transparent huge pages for everything mapped here
_MADV_POPULATE_WRITE = 23  # Linux 5.14


class HostMemory:
    """Page-aligned anonymous mmap, like the Go side's AllocHostMemory: pre-faulted,
    and with --thp advised MADV_HUGEPAGE before it is populated."""

    def __init__(self, size, populate=True):
        thp = THP[0] and hasattr(mmap, "MADV_HUGEPAGE")
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        if populate and not thp and hasattr(mmap, "MAP_POPULATE"):
            flags |= mmap.MAP_POPULATE
        self.size = size
        self.mm = mmap.mmap(-1, size, flags=flags)
        self._anchor = ctypes.c_char.from_buffer(self.mm)
        self.addr = ctypes.addressof(self._anchor)
        if thp:
            try:
                self.mm.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass  # no THP on this kernel: advice refused, memory fine
            if populate and _madvise(self.addr, size, _MADV_POPULATE_WRITE) != 0:
                ctypes.memset(self.addr, 0, size)

    def fill(self, byte, size=None):
        ctypes.memset(self.addr, byte, self.size if size is None else size)

    def close(self):
        del self._anchor
        self.mm.close()


_libc = ctypes.CDLL(None)
_madvise = _libc.madvise
_madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_madvise.restype = ctypes.c_int
_memcmp = _libc.memcmp
_memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_memcmp.restype = ctypes.c_int


class CallerGroup:
    """Starts and stops the measured requests of a case's callers together (see mcbench's callerGroup)."""

    def __init__(self, n):
        self.warm = threading.Barrier(n)  # the callers' warm-ups start together
        self.ready = threading.Barrier(n + 1)  # the callers and the coordinator
        self.done = threading.Barrier(n + 1)
        self.start = threading.Event()  # set once t0 is
        self.t0 = 0.0

    def measure(self, limit_s, step):
        self.ready.wait()
        self.start.wait()
        rec = Recorder()
        t0 = self.t0
        while rec.requests == 0 or time.perf_counter() - t0 < limit_s:
            step(rec)
        self.done.wait()
        return rec


# Keys per batch_remove when a generation of fresh keys is removed (as
# mcbench's removeChunk).
REMOVE_CHUNK = 4096


class CaseRun:
    def __init__(self, bench, idx, c, run=None, group=None, callers=1):
        self.b, self.st, self.o, self.idx, self.c = bench, bench.store, bench.opts, idx, c
        self.rc = bench.rc  # ReplicateConfig passed to every put (--own-segment sets preferred_segments)
        self.gen, self.gen_bytes, self.next_id = 0, 0, 0
        self.gen_limit = max(bench.opts.gen_bytes // callers, 1)  # each caller's share of gen_bytes
        self.group, self.rec = group, None
        self.prefix = f"{run or bench.run}-{idx:03d}-"
        # Large pages: a plain copy of the request's bytes, timed after every
        # measured request into self.ref (see mcbench's refCopy).
        self.ref_copy, self.ref = None, None

    def key(self, ns, gen, i):
        return f"{self.prefix}{ns}{gen:04d}-{i:012d}"

    def remove_gen(self, page):
        """Removes the current generation as mcbench does (caseRun.removeGen):
        plain keys by their keys (remove_by_regex runs std::regex over every
        key in the master, which at 64 callers took most of the machine), page
        keys by their prefix (the HiCache backend stores a page under keys it
        derives from the page key)."""
        if page or not hasattr(self.st, "batch_remove"):
            rc = self.st.remove_by_regex(f"^{self.prefix}w{self.gen:04d}-", True)
            if rc < 0:
                raise RuntimeError(f"remove_by_regex: {rc}")
            return
        for lo in range(0, self.next_id, REMOVE_CHUNK):
            self.st.batch_remove([self.key("w", self.gen, i) for i in range(lo, min(lo + REMOVE_CHUNK, self.next_id))], True)

    def page_key(self, ns, gen, i):
        return f"{self.prefix}{ns}{gen:04d}-{i:045d}"

    def fresh(self, n, req_bytes, page=False):
        if self.gen_bytes > 0 and self.gen_bytes + req_bytes > self.gen_limit:
            self.remove_gen(page)
            self.gen += 1
            self.gen_bytes, self.next_id = 0, 0
        self.gen_bytes += req_bytes
        mk = self.page_key if page else self.key
        start = self.next_id
        self.next_id += n
        return [mk("w", self.gen, i) for i in range(start, start + n)]

    def drive(self, step):
        if self.group is not None:
            self.group.warm.wait()
        if self.o.warmup > 0:
            w = Recorder()
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < self.o.warmup:
                step(w)
        if self.group is not None:
            self.rec = self.group.measure(self.o.duration, step)
            return self.rec
        rec = Recorder()
        limit = int(self.o.duration * 1e9)
        wall_limit = 4 * self.o.duration + 1.0
        prog = self.b.progress
        cpu0 = proc_cpu_ns()
        while rec.requests == 0 or (rec.busy < limit and time.perf_counter() - rec.start < wall_limit):
            step(rec)
            prog.fraction(rec.busy / limit)
        rec.cpu = proc_cpu_ns() - cpu0
        ref_copy = self.ref_copy
        if ref_copy is not None:
            # In a block of its own after the requests, as mcbench does.
            ref = self.ref = Recorder()
            ref_copy()  # warm: the first pass over the region
            while ref.requests == 0 or ref.busy < limit // 2:
                t0 = time.perf_counter_ns()
                n = ref_copy()
                ref.add(time.perf_counter_ns() - t0, 0, n)
        return rec

    def new_ref_copy(self, bufs, get):
        """The memcpy reference against a rotating cold region (see mcbench's newRefCopy).

        bufs are the request's (address, size) buffers in order; the copy goes
        into the next request-sized window of the region, or out of it for gets."""
        req = sum(z for _, z in bufs)
        size = max(self.o.gen_bytes // req * req, 2 * req)
        cold = HostMemory(size, True)
        memmove = ctypes.memmove
        state = {"off": 0}
        plan = []
        o = 0
        for a, z in bufs:
            plan.append((a, o, z))
            o += z

        def ref_copy():
            off = state["off"]
            if off + req > size:
                off = 0
            base = cold.addr + off
            if get:
                for a, o, z in plan:
                    memmove(a, base + o, z)
            else:
                for a, o, z in plan:
                    memmove(base + o, a, z)
            state["off"] = off + req
            return req
        self.ref_copy = ref_copy
        return cold

    def result(self, rec):
        r = rec.result(self.c)
        if self.ref is not None and self.ref.busy > 0:
            r["memcpy_gbps"] = self.ref.bytes / (self.ref.busy / 1e9) / 1e9
        return r

    def count(self, n, warm, step):
        if warm is not None:
            w = Recorder()
            for _ in range(2):
                warm(w)
        rec = Recorder()
        prog = self.b.progress
        cpu0 = proc_cpu_ns()
        for i in range(n):
            step(rec)
            prog.fraction((i + 1) / n)
        rec.cpu = proc_cpu_ns() - cpu0
        return rec


# ------------------------------------------------------- store_kv_bench cases


class KVRig:
    def __init__(self, cr):
        c = cr.c
        self.size, self.batch = c["value_size"], c["batch"]
        span = self.batch * self.size
        self.mem = HostMemory(2 * span, cr.o.populate)
        rc = cr.st.register_buffer(self.mem.addr, self.mem.size)
        if rc != 0:
            self.mem.close()
            raise RuntimeError(f"register_buffer: {rc}")
        self.mem.fill(PATTERN_BYTES[0], span)
        self.w_addr = [self.mem.addr + i * self.size for i in range(self.batch)]
        self.r_addr = [self.mem.addr + span + i * self.size for i in range(self.batch)]
        self.sizes = [self.size] * self.batch
        self.payload = bytes([PATTERN_BYTES[0]]) * self.size
        self.patterns = [bytes([p]) * self.size for p in PATTERN_BYTES]
        self.pattern_bufs = [ctypes.create_string_buffer(p, self.size) for p in self.patterns]
        self.pattern_addrs = [ctypes.addressof(b) for b in self.pattern_bufs]

    def close(self, st):
        st.unregister_buffer(self.mem.addr)
        self.mem.close()


def kv_put(cr, r, keys, vals, rec):
    """Write keys with the case's API; vals (verify_write) gives each key's value."""
    c, st, n, size = cr.c, cr.st, len(keys), r.size
    failed = 0
    if c["api"] == "plain":
        if c["batch"] == 1:
            v = r.payload if vals is None else vals[0]
            t0 = time.perf_counter_ns()
            if st.put(keys[0], v, cr.rc) != 0:
                failed = 1
            d = time.perf_counter_ns() - t0
        else:
            values = [r.payload] * n if vals is None else vals
            t0 = time.perf_counter_ns()
            if st.put_batch(keys, values, cr.rc) != 0:
                failed = n
            d = time.perf_counter_ns() - t0
    else:
        if vals is not None:  # verify_write: values are in registered memory before the clock starts
            for i in range(n):
                ctypes.memmove(r.w_addr[i], vals[i], size)
        if c["batch"] == 1:
            t0 = time.perf_counter_ns()
            if st.put_from(keys[0], r.w_addr[0], size, cr.rc) != 0:
                failed = 1
            d = time.perf_counter_ns() - t0
        else:
            w_addr, sizes = (r.w_addr, r.sizes) if n == r.batch else (r.w_addr[:n], r.sizes[:n])
            t0 = time.perf_counter_ns()
            res = st.batch_put_from(keys, w_addr, sizes, cr.rc)
            if len(res) != n or res.count(0) != n:
                failed = n - res.count(0) if len(res) == n else n
            d = time.perf_counter_ns() - t0
    rec.add(d, n, (n - failed) * size)
    rec.errors += failed


def kv_get(cr, r, keys, want_ids, rec):
    """Read keys with the case's API; with want_ids, compare each key's bytes inside the clock."""
    c, st, n, size = cr.c, cr.st, len(keys), r.size
    failed = 0
    t0 = time.perf_counter_ns()
    if c["api"] == "plain":
        if c["batch"] == 1:
            v = st.get(keys[0])
            if len(v) != size or (want_ids is not None and v != r.patterns[want_ids[0] % 4]):
                failed = 1
        else:
            vals = st.get_batch(keys)
            if len(vals) != n:
                failed = n
            else:
                for i, v in enumerate(vals):
                    if len(v) != size or (want_ids is not None and v != r.patterns[want_ids[i] % 4]):
                        failed += 1
    else:
        if c["batch"] == 1:
            got = st.get_into(keys[0], r.r_addr[0], size)
            if got != size or (want_ids is not None and
                               _memcmp(r.r_addr[0], r.pattern_addrs[want_ids[0] % 4], size) != 0):
                failed = 1
        else:
            r_addr, sizes = (r.r_addr, r.sizes) if n == r.batch else (r.r_addr[:n], r.sizes[:n])
            res = st.batch_get_into(keys, r_addr, sizes)
            if len(res) != n:
                failed = n
            elif res.count(size) != n:
                failed = n - res.count(size)
            if want_ids is not None and len(res) == n:
                pa = r.pattern_addrs
                for i in range(n):
                    if _memcmp(r_addr[i], pa[want_ids[i] % 4], size) != 0:
                        failed += 1
    d = time.perf_counter_ns() - t0
    failed = min(failed, n)
    rec.add(d, n, (n - failed) * size)
    rec.errors += failed


def kv_prepare(cr, r, n):
    keys = [cr.key("d", 0, i) for i in range(n)]
    b = cr.c["batch"]
    for lo in range(0, n, b):
        hi = min(lo + b, n)
        res = cr.st.batch_put_from(keys[lo:hi], r.w_addr[: hi - lo], r.sizes[: hi - lo], cr.rc)
        if len(res) != hi - lo or res.count(0) != hi - lo:
            raise RuntimeError(f"preparing the dataset: puts failed: {res[:8]}")
    return keys


def run_kv(cr):
    c = cr.c
    r = KVRig(cr)
    try:
        b, size = c["batch"], c["value_size"]
        req_bytes = b * size

        def write_fresh(rec):
            kv_put(cr, r, cr.fresh(b, req_bytes), None, rec)

        sc = c["scenario"]
        if sc == SC_FILL:
            def warm(rec):
                keys = [cr.key("u", 0, cr.next_id + i) for i in range(b)]
                cr.next_id += b
                kv_put(cr, r, keys, None, rec)
            return [cr.count(c["objects"] // b, warm, write_fresh).result(c)]
        if sc == SC_WRITE:
            return [cr.drive(write_fresh).result(c)]
        if sc == SC_VERIFY:
            return verify_write(cr, r)
        data = kv_prepare(cr, r, c["objects"])
        if sc == SC_READ:
            state = {"cursor": 0}

            def read_seq(rec):
                cur = state["cursor"]
                state["cursor"] = (cur + b) % len(data)
                kv_get(cr, r, data[cur:cur + b], None, rec)
            return [cr.drive(read_seq).result(c)]
        rng = random.Random(cr.o.seed * 1000003 + cr.idx)
        nd = len(data)

        def mixed(rec):
            if rng.randrange(100) < cr.o.rwmixread:
                kv_get(cr, r, [data[rng.randrange(nd)] for _ in range(b)], None, rec)
            else:
                write_fresh(rec)
        return [cr.drive(mixed).result(c)]
    finally:
        r.close(cr.st)


def verify_write(cr, r):
    c = cr.c
    b, n = c["batch"], c["objects"]
    keys = [cr.key("w", 0, i) for i in range(n)]
    state = {"at": 0}

    def write(rec):
        at = state["at"]
        kv_put(cr, r, keys[at:at + b], [r.patterns[(at + i) % 4] for i in range(b)], rec)
        state["at"] = at + b
    wrec = cr.count(n // b, None, write)
    state["at"] = 0

    def read(rec):
        at = state["at"]
        kv_get(cr, r, keys[at:at + b], range(at, at + b), rec)
        state["at"] = at + b
    rrec = cr.count(n // b, None, read)
    rc = dict(c)
    rc["phase"] = "read"
    rc["name"] = "verify_write.read" + c["name"][len("verify_write.write"):]
    return [wrec.result(c), rrec.result(rc)]


# ------------------------------------------------------------ HiCache cases


class PyHostPool:
    """The address arithmetic of SGLang's MHA and MLA host pools (get_page_buffer_meta) over one mmap."""

    def __init__(self, kind, page_size, tokens, populate):
        self.kind, self.P = kind, page_size
        page_num = tokens // page_size + 1
        self.S = page_num * page_size
        if kind == POOL_MLA:
            self.L, self.tok = MLA_LAYERS, MLA_LATENT * BF16          # bytes per token per layer
            size = self.L * self.S * self.tok                          # kv_buffer [L, S, 1, C]
        else:
            self.L, self.tok = MHA_LAYERS, MHA_HEADS * MHA_HEAD_DIM * BF16
            self.v_off = self.L * self.S * self.tok                    # kv_buffer [2, S, L, H, D]
            size = 2 * self.v_off
        self.mem = HostMemory(size, populate)
        self.mem.fill(0x5A)
        self.base = self.mem.addr

    def buffers(self):
        """get_hybrid_pool_buffer(): MHA registers its K and V halves, MLA its kv_buffer."""
        if self.kind == POOL_MLA:
            return [(self.base, self.mem.size)]
        return [(self.base, self.v_off), (self.base + self.v_off, self.v_off)]

    def get_page_buffer_meta(self, indices):
        ptrs, sizes = [], []
        P, tok, L = self.P, self.tok, self.L
        if self.kind == POOL_MLA:  # layer_first: one entry per layer
            layer_stride, size = self.S * tok, P * tok
            for i in range(0, len(indices), P):
                first = self.base + indices[i] * tok
                ptrs.extend([first + l * layer_stride for l in range(L)])
            sizes = [size] * len(ptrs)
        else:  # page_first: K then V
            stride, size, v_off = L * tok, L * P * tok, self.v_off
            for i in range(0, len(indices), P):
                k = self.base + indices[i] * stride
                ptrs.append(k)
                ptrs.append(k + v_off)
            sizes = [size] * len(ptrs)
        return ptrs, sizes


class TimedStore:
    """The store as the backend sees it, with the time inside its batch calls added up (see mcbench's timedStore)."""

    def __init__(self, store, rc):
        self.store, self.rc, self.inside = store, rc, 0

    def register_buffer(self, ptr, size):
        return self.store.register_buffer(ptr, size)

    def unregister_buffer(self, ptr):
        return self.store.unregister_buffer(ptr)

    def _timed(self, call, *args):
        t0 = time.perf_counter_ns()
        r = call(*args)
        self.inside += time.perf_counter_ns() - t0
        return r

    def batch_is_exist(self, keys):
        return self._timed(self.store.batch_is_exist, keys)

    def batch_put_from(self, keys, ptrs, sizes):
        return self._timed(self.store.batch_put_from, keys, ptrs, sizes, self.rc)

    def batch_get_into(self, keys, ptrs, sizes):
        return self._timed(self.store.batch_get_into, keys, ptrs, sizes)

    def batch_put_from_multi_buffers(self, keys, ptrs, sizes):
        return self._timed(self.store.batch_put_from_multi_buffers, keys, ptrs, sizes, self.rc)

    def batch_get_into_multi_buffers(self, keys, ptrs, sizes):
        return self._timed(self.store.batch_get_into_multi_buffers, keys, ptrs, sizes)


class PyHiCacheBackend:
    """SGLang's MooncakeStore backend: batch_exists / batch_set_v1 / batch_get_v1, with its key suffixes and packing."""

    def __init__(self, store, pool):
        self.store, self.pool = store, pool
        self.mla = pool.kind == POOL_MLA
        self.multiplier = 1 if self.mla else 2
        self.registered = []
        for ptr, size in pool.buffers():
            rc = store.register_buffer(ptr, size)
            if rc != 0:
                raise RuntimeError(f"register_buffer: {rc}")
            self.registered.append(ptr)

    def close(self):
        for ptr in self.registered:
            self.store.unregister_buffer(ptr)
        self.registered = []

    def _keys(self, keys):
        if self.mla:
            return [f"{k}__k" for k in keys]
        out = []
        for k in keys:
            out.append(f"{k}_0_k")
            out.append(f"{k}_0_v")
        return out

    @staticmethod
    def _pack(keys, ptrs, sizes):
        n = len(keys)
        if len(ptrs) == n:
            return ptrs, sizes
        nbuf = len(ptrs) // n
        return ([ptrs[i * nbuf:(i + 1) * nbuf] for i in range(n)],
                [sizes[i * nbuf:(i + 1) * nbuf] for i in range(n)])

    def _preprocess(self, keys, host_indices):
        ptrs, sizes = self.pool.get_page_buffer_meta(host_indices)
        key_strs = self._keys(keys)
        if self.mla:
            ptrs, sizes = self._pack(key_strs, ptrs, sizes)
        return key_strs, ptrs, sizes

    def _postprocess(self, results, is_set):
        m = self.multiplier
        if is_set:
            return [all(r == 0 for r in results[i:i + m]) for i in range(0, len(results), m)]
        return [all(r > 0 for r in results[i:i + m]) for i in range(0, len(results), m)]

    def batch_exists(self, keys):
        res = self.store.batch_is_exist(self._keys(keys))
        for i, r in enumerate(res):
            if r != 1:
                return i // self.multiplier
        return len(res) // self.multiplier

    def batch_set_v1(self, keys, host_indices):
        key_strs, ptrs, sizes = self._preprocess(keys, host_indices)
        exist = self.store.batch_is_exist(key_strs)
        res = [0] * len(key_strs)
        missing = [i for i, e in enumerate(exist) if e != 1]
        if missing:
            if len(missing) == len(key_strs):
                mk, mp, ms = key_strs, ptrs, sizes
            else:
                mk = [key_strs[i] for i in missing]
                mp = [ptrs[i] for i in missing]
                ms = [sizes[i] for i in missing]
            if isinstance(mp[0], list):
                put = self.store.batch_put_from_multi_buffers(mk, mp, ms)
            else:
                put = self.store.batch_put_from(mk, mp, ms)
            for j, i in enumerate(missing):
                res[i] = put[j] if j < len(put) else -1
        return self._postprocess(res, True)

    def batch_get_v1(self, keys, host_indices):
        key_strs, ptrs, sizes = self._preprocess(keys, host_indices)
        if isinstance(ptrs[0], list):
            res = self.store.batch_get_into_multi_buffers(key_strs, ptrs, sizes)
        else:
            res = self.store.batch_get_into(key_strs, ptrs, sizes)
        return self._postprocess(res, False)


def run_hicache(cr):
    c = cr.c
    b, P = c["batch"], c["page_size"]
    pool = PyHostPool(c["pool"], P, 2 * b * P, cr.o.populate)
    be, ref_mem = None, None
    try:
        ts = TimedStore(cr.st, cr.rc)
        be = PyHiCacheBackend(ts, pool)
        set_idx = [p * P + t for p in range(b) for t in range(P)]
        get_idx = [p * P + t for p in range(b, 2 * b) for t in range(P)]
        if cr.o.memcpy_ref and c["value_size"] >= LARGE_OBJECT and c["scenario"] != SC_HIEXISTS:
            is_get = c["scenario"] == SC_HIGET
            addrs, sizes = pool.get_page_buffer_meta(get_idx if is_get else set_idx)
            ref_mem = cr.new_ref_copy(list(zip(addrs, sizes)), is_get)
        kpr = keys_per_request(c)
        page_bytes = (kpr // b) * c["value_size"]
        req_bytes = b * page_bytes

        def do_set(keys, rec):
            ts.inside = 0
            t0 = time.perf_counter_ns()
            ok = be.batch_set_v1(keys, set_idx)
            failed = b - ok.count(True)
            d = time.perf_counter_ns() - t0
            rec.add(d, kpr, (b - failed) * page_bytes)
            rec.outside += d - ts.inside
            rec.errors += failed

        if c["scenario"] == SC_HISET:
            return [cr.result(cr.drive(lambda rec: do_set(cr.fresh(b, req_bytes, page=True), rec)))]
        data = [cr.page_key("d", 0, i) for i in range(c["objects"])]
        prep = Recorder()
        for lo in range(0, len(data), b):
            do_set(data[lo:lo + b], prep)
        if prep.errors:
            raise RuntimeError(f"preparing the dataset: {prep.errors} pages failed")
        state = {"cursor": 0}
        nd = len(data)

        def nxt():
            cur = state["cursor"]
            state["cursor"] = (cur + b) % nd
            return data[cur:cur + b]

        if c["scenario"] == SC_HIGET:
            def step(rec):
                keys = nxt()
                ts.inside = 0
                t0 = time.perf_counter_ns()
                ok = be.batch_get_v1(keys, get_idx)
                failed = b - ok.count(True)
                d = time.perf_counter_ns() - t0
                rec.add(d, kpr, (b - failed) * page_bytes)
                rec.outside += d - ts.inside
                rec.errors += failed
        else:
            def step(rec):
                keys = nxt()
                ts.inside = 0
                t0 = time.perf_counter_ns()
                n = be.batch_exists(keys)
                d = time.perf_counter_ns() - t0
                rec.add(d, kpr, 0)
                rec.outside += d - ts.inside
                if n != b:
                    rec.errors += b
        return [cr.result(cr.drive(step))]
    finally:
        if be is not None:
            be.close()
        pool.mem.close()
        if ref_mem is not None:
            ref_mem.close()


def run_multi(cr):
    c = cr.c
    K, nbuf, size = c["batch"], c["buffers"], c["buffer_size"]
    span = K * nbuf * size
    mem = HostMemory(2 * span, cr.o.populate)
    registered, ref_mem = False, None
    try:
        ctypes.memmove(mem.addr, bytes((i * 7 + 1) & 0xFF for i in range(256)) * (span // 256), span // 256 * 256)
        if c["scenario"] != SC_MEMCPY:
            rc = cr.st.register_buffer(mem.addr, mem.size)
            if rc != 0:
                raise RuntimeError(f"register_buffer: {rc}")
            registered = True
        base = mem.addr
        src = [[base + (l * K + k) * size for l in range(nbuf)] for k in range(K)]
        dst = [[base + span + (l * K + k) * size for l in range(nbuf)] for k in range(K)]
        sizes = [[size] * nbuf for _ in range(K)]
        value = nbuf * size
        flat_src = [a for row in src for a in row]
        flat_dst = [a for row in dst for a in row]
        memmove = ctypes.memmove
        pairs = list(zip(flat_dst, flat_src))

        def memcpy():
            for d, s in pairs:
                memmove(d, s, size)
            return span
        if cr.o.memcpy_ref and value >= LARGE_OBJECT and c["scenario"] != SC_MEMCPY:
            is_get = c["scenario"] == SC_MGET
            flat = flat_dst if is_get else flat_src
            ref_mem = cr.new_ref_copy([(a, size) for a in flat], is_get)
        if c["scenario"] == SC_MEMCPY:
            def step(rec):
                t0 = time.perf_counter_ns()
                n = memcpy()
                rec.add(time.perf_counter_ns() - t0, K, n)
        elif c["scenario"] == SC_MPUT:
            def step(rec):
                keys = cr.fresh(K, span)
                t0 = time.perf_counter_ns()
                res = cr.st.batch_put_from_multi_buffers(keys, src, sizes, cr.rc)
                failed = K - res.count(0) if len(res) == K else K
                rec.add(time.perf_counter_ns() - t0, K, (K - failed) * value)
                rec.errors += failed
        else:
            data = [cr.key("d", 0, i) for i in range(c["objects"])]
            for lo in range(0, len(data), K):
                res = cr.st.batch_put_from_multi_buffers(data[lo:lo + K], src, sizes, cr.rc)
                if len(res) != K or res.count(0) != K:
                    raise RuntimeError(f"preparing the dataset: puts failed: {res[:8]}")
            state = {"cursor": 0}
            nd = len(data)

            def step(rec):
                cur = state["cursor"]
                state["cursor"] = (cur + K) % nd
                keys = data[cur:cur + K]
                t0 = time.perf_counter_ns()
                res = cr.st.batch_get_into_multi_buffers(keys, dst, sizes)
                failed = K - res.count(value) if len(res) == K else K
                rec.add(time.perf_counter_ns() - t0, K, (K - failed) * value)
                rec.errors += failed
        return [cr.result(cr.drive(step))]
    finally:
        if registered:
            cr.st.unregister_buffer(mem.addr)
        mem.close()
        if ref_mem is not None:
            ref_mem.close()


# ------------------------------------------------------------ prefix lookup


def prefix_lookup(st, tag, tokens, page_size):
    """A router's direct lookup written with the Python client: SGLang's page hashes with hashlib
    (sha256 of the previous digest and the page's ids as uint32 little-endian), the MHA keys of
    one TP rank, one batch_is_exist, and the leading pages whose K and V both exist.

    tokens is an array("I") (the fastest form for hashlib: each page is a slice of its bytes)."""
    mv = memoryview(tokens).cast("B")
    step = 4 * page_size
    keys, prev = [], b""
    for off in range(0, len(mv) // step * step, step):
        h = hashlib.sha256(prev)
        h.update(mv[off:off + step])
        prev = h.digest()
        x = prev.hex()
        keys.append(f"{tag}_{x}_0_k")
        keys.append(f"{tag}_{x}_0_v")
    res = st.batch_is_exist(keys)
    for i, r in enumerate(res):
        if r != 1:
            return i // 2
    return len(res) // 2


def run_prefix(cr):
    """prefix_lookup (see mcbench's prefixLookup): prompts whose every page is stored, looked up in turn."""
    c = cr.c
    P, b = c["page_size"], c["batch"]
    tag = cr.prefix + "p"  # keys "{run}-{case}-p_{hash}_0_k": in the case's namespace
    rnd = random.Random(cr.o.seed * 1000 + cr.idx)
    prompts = [array("I", (rnd.randrange(1 << 17) for _ in range(b * P))) for _ in range(max(c["objects"] // b, 1))]
    value = bytes(c["value_size"])
    for p in prompts:
        mv, step, keys, prev = memoryview(p).cast("B"), 4 * P, [], b""
        for off in range(0, len(mv), step):
            prev = hashlib.sha256(prev + mv[off:off + step]).digest()
            keys += [f"{tag}_{prev.hex()}_0_k", f"{tag}_{prev.hex()}_0_v"]
        rc = cr.st.put_batch(keys, [value] * len(keys), cr.rc)
        if rc != 0:
            raise RuntimeError(f"preparing the dataset: put_batch: {rc}")
    kpr = keys_per_request(c)
    state = {"i": 0}

    def step(rec):
        p = prompts[state["i"]]
        state["i"] = (state["i"] + 1) % len(prompts)
        t0 = time.perf_counter_ns()
        n = prefix_lookup(cr.st, tag, p, P)
        rec.add(time.perf_counter_ns() - t0, kpr, 0)
        if n != b:
            rec.errors += b - n

    return [cr.result(cr.drive(step))]


# ------------------------------------------------------------------ driver


class Bench:
    def __init__(self, store, opts, progress, rc):
        self.store, self.opts, self.progress, self.rc = store, opts, progress, rc
        self.run = os.urandom(4).hex()

    def run_case(self, idx, c):
        if c.get("combining"):
            # A combining twin is the Go client's (its store combines
            # concurrent single calls); upstream's Python client has no such
            # mode, so the report holds the twin against this client's run of
            # the same case without "/combining".
            return []
        if c.get("callers", 1) > 1:
            return self.run_callers(idx, c)
        return self.run_one(CaseRun(self, idx, c))

    def run_one(self, cr):
        c = cr.c
        try:
            sc = c["scenario"]
            if sc in KV_SCENARIOS:
                if sc == SC_VERIFY and c.get("phase") == "read":
                    return []
                return run_kv(cr)
            if sc in HI_SCENARIOS:
                return run_hicache(cr)
            if sc == SC_PREFIX:
                return run_prefix(cr)
            return run_multi(cr)
        finally:
            self.store.remove_by_regex("^" + cr.prefix, True)

    def run_callers(self, idx, c):
        """The case with c["callers"] threads, each a CaseRun of its own, started and stopped together.

        Threads are what a Python service would use: upstream's binding releases the GIL inside
        every store call (py::gil_scoped_release, docs/benchmarks.md), so calls of different
        threads overlap in the C++ client while Python code runs one thread at a time."""
        n = c["callers"]
        if n > 256 or not c["timed"]:
            raise ValueError(f"{c['name']}: {n} callers (at most 256, and only for time-based cases)")
        g = CallerGroup(n)
        runs = [CaseRun(self, idx, c, run=f"{self.run[:-2]}{k:02x}", group=g, callers=n) for k in range(n)]
        errors = []

        def caller(cr):
            try:
                self.run_one(cr)
            except threading.BrokenBarrierError:
                pass  # another caller failed: its error is reported
            except Exception as e:
                errors.append(e)
                g.warm.abort()
                g.ready.abort()
                g.done.abort()

        threads = [threading.Thread(target=caller, args=(cr,), daemon=True) for cr in runs]
        for t in threads:
            t.start()
        try:
            g.ready.wait()
            cpu0 = proc_cpu_ns()
            g.t0 = time.perf_counter()
            g.start.set()
            g.done.wait()
            window, cpu = time.perf_counter() - g.t0, proc_cpu_ns() - cpu0
        except threading.BrokenBarrierError:
            window = cpu = 0
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        rec = Recorder()
        rec.start = g.t0  # wall time counts from the common start
        for cr in runs:
            rec.merge(cr.rec)
        rec.window, rec.cpu = int(window * 1e9), cpu
        return [rec.result(c)]


def prefault_segment(store, run, segment, rc):
    """Write 32 MiB objects until 85% of the segment is used, then remove them (see mcbench -prefault)."""
    chunk = 32 << 20
    mem = HostMemory(chunk, True)
    try:
        if store.register_buffer(mem.addr, chunk) != 0:
            raise RuntimeError("register_buffer failed")
        n, i = 0, 0
        while n + chunk <= segment * 85 // 100:
            if store.put_from(f"{run}-pf-{i:06d}", mem.addr, chunk, rc) != 0:
                break
            n += chunk
            i += 1
        store.remove_by_regex(f"^{run}-pf-", True)
        store.unregister_buffer(mem.addr)
        return n
    finally:
        mem.close()


def build_parser():
    """The flags of this client. What to measure and how is the plan's (mcbench -list), not flags here."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    a = ap.add_argument
    a("--plan", "-plan", required=True, help="the plan file written by mcbench -list (the same flags as for the Go client)")
    a("--master", "-master", default=os.environ.get("MOONCAKE_MASTER", ""), help="master RPC address (default $MOONCAKE_MASTER; required to run)")
    a("--metadata", "-metadata", default=os.environ.get("MOONCAKE_TE_META_DATA_SERVER", ""),
      help="metadata server, e.g. http://127.0.0.1:8080/metadata (default $MOONCAKE_TE_META_DATA_SERVER)")
    a("--hostname", "-hostname", default="127.0.0.1", help="this client's local_hostname")
    a("--protocol", "-protocol", default="tcp", help="tcp or rdma")
    a("--device", "-device", default="", help="RDMA device list")
    a("--json", "-json", default="", help="write results as JSON to this file (- for stdout)")
    a("--cpuprofile", "-cpuprofile", default="", help="write cProfile stats of the run to this file")
    a("--progress", "-progress", action="store_true", help="progress bar even when stderr is not a terminal")
    a("--list", "-list", action="store_true", help="print the plan as read (a header line, then one JSON case per line) and exit")
    a("--serve", "-serve", action="store_true",
      help="run cases named on stdin, one per line, answering each with a JSON line (mcbench drive)")
    a("--own-segment", "-own-segment", action="store_true",
      help="put every object in this client's own segment (ReplicateConfig.preferred_segments)")
    return ap


def host_info():
    h = {"os": sys.platform, "arch": platform.machine(), "cpus": os.cpu_count(), "hostname": socket.gethostname()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    h["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            h["mem_bytes"] = int(f.readline().split()[1]) << 10
    except OSError:
        pass
    return h


def fmt_num(v):
    if v >= 10e6:
        return f"{v / 1e6:.0f}M"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 10e3:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.2f}k"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def print_table(results, out=sys.stdout):
    rows = [("case", "keys/s", "req/s", "GB/s", "p50 µs", "p99 µs", "p999 µs", "errors")]
    for r in results:
        rows.append((r["name"], fmt_num(r["ops_per_s"]), fmt_num(r["req_per_s"]), f"{r['gbps']:.3f}",
                     fmt_num(r["p50_us"]), fmt_num(r["p99_us"]), fmt_num(r["p999_us"]), str(r["errors"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.rjust(w) for cell, w in zip(row, widths)) + "\n")


def serve(bench, doc, plan):
    """The serve protocol of mcbench drive (see cmd/internal/benchdrive)."""
    by_name = {c["name"]: c for c in plan}
    head = dict(doc)
    head["results"] = []
    sys.stdout.write(json.dumps(head) + "\n")
    sys.stdout.flush()
    seq = 0
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        if name == "quit":
            break
        reply = {"results": []}
        c = by_name.get(name)
        if c is None:
            reply["error"] = f"no case {name!r} in the plan"
        else:
            try:
                reply["results"] = bench.run_case(seq, c)
            except Exception as e:  # reported to the driver, which stops
                reply["error"] = f"{name}: {e!r}"
        seq += 1
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        header, p, settings, plan = load_plan(args.plan)
    except (OSError, ValueError) as e:
        raise SystemExit(f"bench_python: {e}")
    if args.list:
        print(json.dumps(header, separators=(",", ":")))
        for c in plan:
            print(json.dumps(c, separators=(",", ":")))
        return 0
    if not plan:
        raise SystemExit("bench_python: the plan is empty (check the flags given to mcbench -list)")
    if not args.master or not args.metadata:
        raise SystemExit("bench_python: the Python client needs a live cluster: --master and --metadata")
    if os.environ.get("MC_TCP_BIND_ADDRESS") is None:
        print("bench_python: note: MC_TCP_BIND_ADDRESS is not set (loopback clusters need 127.0.0.1)", file=sys.stderr)

    # How to measure is the plan's, so both clients do it the same way.
    args.duration, args.warmup = float(settings["duration_s"]), float(settings["warmup_s"])
    segment, local_buffer = settings["segment"], settings["local_buffer"]
    args.gen_bytes, args.rwmixread, args.seed = settings["gen_bytes"], settings["rwmixread"], settings["seed"]
    args.populate, args.thp, args.memcpy_ref = settings["populate"], settings["thp"], settings["memcpy_ref"]
    args.prefault = settings["prefault"]
    THP[0] = args.thp

    try:  # only here: reading and listing a plan need no mooncake package
        import mooncake
        from mooncake.store import MooncakeDistributedStore, ReplicateConfig
    except ImportError as e:
        raise SystemExit(f"bench_python: cannot import mooncake.store ({e}); put upstream's built Python package "
                         "on PYTHONPATH (make bench-python MOONCAKE_PYTHONPATH=...)")

    store = MooncakeDistributedStore()
    rc = store.setup(args.hostname, args.metadata, segment, local_buffer, args.protocol, args.device, args.master)
    if rc != 0:
        raise SystemExit(f"bench_python: setup failed: {rc}")
    progress = Progress(not args.serve and (args.progress or sys.stderr.isatty()), len(plan))
    rc = ReplicateConfig()
    if args.own_segment:
        rc.preferred_segments = [store.get_hostname()]
    bench = Bench(store, args, progress, rc)
    if args.prefault != "off":
        t0 = time.perf_counter()
        n = prefault_segment(store, bench.run, segment, rc)
        print(f"bench_python: prefaulted the segment: wrote and removed {n >> 20} MiB in {time.perf_counter() - t0:.1f}s",
              file=sys.stderr)
    doc = dict(schema=SCHEMA, client="python", engine="upstream-python",
               version=f"python {platform.python_version()}, mooncake {os.path.dirname(mooncake.__file__)}",
               host=host_info(), started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               params=dict(p, duration_s=args.duration, warmup_s=args.warmup, gen_bytes=args.gen_bytes,
                           rwmixread=args.rwmixread, seed=args.seed, segment=segment, local_buffer=local_buffer,
                           protocol=args.protocol, master=args.master, thp=args.thp,
                           memcpy_ref="ctypes.memmove (libc), one call per buffer",
                           glibc_tunables=os.environ.get("GLIBC_TUNABLES", "")),
               results=[], failures=[])
    if args.serve:
        try:
            return serve(bench, doc, plan)
        finally:
            store.close()
    prof = None
    if args.cpuprofile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    try:
        for i, c in enumerate(plan):
            progress.begin(i, c["name"])
            for r in bench.run_case(i, c):
                if r["errors"]:
                    doc["failures"].append(f"{r['name']}: {r['errors']} failed keys")
                doc["results"].append(r)
    finally:
        progress.stop()
        if prof is not None:
            prof.disable()
            prof.dump_stats(args.cpuprofile)
        store.close()
    if args.json:
        data = json.dumps(doc, indent=1) + "\n"
        if args.json == "-":
            sys.stdout.write(data)
        else:
            with open(args.json, "w") as f:
                f.write(data)
    if args.json != "-":
        print(f"bench_python: client python {platform.python_version()}, master {args.master!r}")
        print_table(doc["results"])
    if doc["failures"]:
        print("bench_python: cases had failed keys: " + "; ".join(doc["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
