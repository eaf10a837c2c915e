#!/usr/bin/env python3
"""Writes hashes.json: golden page hashes for hostcache/prefix.

Our own computation with hashlib (no SGLang code), from the rules read in
SGLang's mem_cache/cpp_utils/hash_binding.cpp:

  page digest = sha256(prior ‖ words), prior omitted for the first page
                when there is none, else the previous page's 32 bytes;
  plain words  = each token id as uint32 little-endian;
  bigram words = for each unit (t[i], t[i+1]) of the page, both as uint32 LE;
                 a page of P units reads P+1 tokens;
  wide pages   = (only with wide ids allowed) a page holding an id >= 2**32:
                 b"\\xff" then the same words as uint64 LE.

Only full pages are listed (HiCache stores page-aligned keys). Refusals:
ids < 0, ids > 2**32-1 (> 2**63-1 when wide ids are allowed).

Run: python3 testdata/prefix/gen_hashes.py > testdata/prefix/hashes.json
"""
import hashlib
import json
import struct

U32 = 2**32 - 1
I64 = 2**63 - 1


def units(tokens, bigram):
    if bigram:
        return [(tokens[i], tokens[i + 1]) for i in range(len(tokens) - 1)]
    return [(t,) for t in tokens]


def page_hashes(tokens, page_size, bigram=False, wide=False, prior=None):
    limit = I64 if wide else U32
    for i, t in enumerate(tokens):
        if t < 0 or t > limit:
            return {"refused_index": i}
    us = units(tokens, bigram)
    full = len(us) // page_size
    out = []
    prev = bytes.fromhex(prior) if prior else None
    for p in range(full):
        page = us[p * page_size:(p + 1) * page_size]
        flat = [x for u in page for x in u]
        h = hashlib.sha256()
        if prev is not None:
            h.update(prev)
        if any(x > U32 for x in flat):
            h.update(b"\xff")
            h.update(struct.pack("<%dQ" % len(flat), *flat))
        else:
            h.update(struct.pack("<%dI" % len(flat), *flat))
        prev = h.digest()
        out.append(h.hexdigest())
    return {"hashes": out}


PRIOR = hashlib.sha256(struct.pack("<3I", 7, 8, 9)).hexdigest()
SCRAMBLED = [(i * 2654435761) & 0x00FFFFFF for i in range(258)]

cases = [
    # name, mode, wide, page size, prior, tokens
    ("plain: 1..10, P=4 (two pages, a partial one dropped)", "plain", False, 4, "", list(range(1, 11))),
    ("plain: empty", "plain", False, 4, "", []),
    ("plain: shorter than a page", "plain", False, 16, "", [1, 2, 3, 4, 5]),
    ("plain: P=1 with prior", "plain", False, 1, PRIOR, [11, 22, 33]),
    ("plain: 1..256, P=64 with prior", "plain", False, 64, PRIOR, list(range(1, 257))),
    ("plain: id extremes", "plain", False, 2, "", [0, U32, U32, 0]),
    ("bigram: 10..14, P=2", "bigram", False, 2, "", [10, 11, 12, 13, 14]),
    ("bigram: 11,22,33,44,55, P=1 with prior", "bigram", False, 1, PRIOR, [11, 22, 33, 44, 55]),
    ("bigram: 258 scrambled ids, P=64 with prior", "bigram", False, 64, PRIOR, SCRAMBLED),
    ("bigram: exactly one page (P+1 tokens)", "bigram", False, 4, "", [5, 6, 7, 8, 9]),
    ("bigram: P tokens make no page", "bigram", False, 4, "", [5, 6, 7, 8]),
    ("bigram: one token", "bigram", False, 1, "", [5]),
    ("plain: id 2**32 refused", "plain", False, 2, "", [1, 2, 2**32, 3]),
    ("plain: negative id refused", "plain", False, 2, "", [1, -1]),
    ("plain: a bad id in the partial page is refused too", "plain", False, 2, "", [1, 2, 3, 2**32]),
    ("bigram: id 2**32 refused", "bigram", False, 2, "", [1, 2, 3, 2**32]),
    ("wide: narrow page then wide page", "plain", True, 2, "", [1, 2, 2**32, 3]),
    ("wide: narrow pages hash as plain", "plain", True, 4, "", list(range(1, 11))),
    ("wide: largest id, with prior", "plain", True, 1, PRIOR, [I64, 0]),
    ("wide: bigram page with a wide id", "bigram", True, 2, "", [10, 2**40, 12, 13, 14]),
    ("wide: negative id refused", "plain", True, 1, "", [3, -5]),
]

out = {
    "comment": "Page hashes computed by testdata/prefix/gen_hashes.py with hashlib (rules in its docstring); "
    "hashes are hex; refused_index is the first id SGLang refuses",
    "cases": [],
}
for name, mode, wide, ps, prior, toks in cases:
    c = {"name": name, "mode": mode, "wide": wide, "page_size": ps, "prior": prior, "tokens": toks}
    c.update(page_hashes(toks, ps, bigram=(mode == "bigram"), wide=wide, prior=prior))
    out["cases"].append(c)

priors = [
    ("", "none"),
    (PRIOR, "ok"),
    (PRIOR.upper(), "ok"),
    (" ".join(PRIOR[i:i + 2] for i in range(0, 64, 2)), "ok"),
    (PRIOR[:62], "refused"),
    (PRIOR + "00", "refused"),
    (PRIOR[:63] + "g", "refused"),
    (PRIOR[:63], "refused"),
]
out["priors"] = []
for s, want in priors:
    # What SGLang does: bytes.fromhex, then the helper's 32-byte check.
    try:
        raw = bytes.fromhex(s) if s else None
        verdict = "none" if raw is None else ("ok" if len(raw) == 32 else "refused")
    except ValueError:
        verdict = "refused"
    assert verdict == want, (s, verdict, want)
    out["priors"].append({"input": s, "verdict": verdict, "hex": raw.hex() if verdict == "ok" else ""})

print(json.dumps(out, indent=1))
