// key_pattern.h: the key patterns mcgo_store_remove_by_regex accepts, shared
// by both backends. Header-only, C++17.
//
// Mooncake's master matches a remove-by-regex pattern against every key
// with std::regex (ECMAScript, regex_search), a backtracking engine that
// recurses once per character and backtracks without bound: one
// 40,000-byte key makes "^k.*" crash the master (stack overflow), and
// "(a*)*b" over a 30-byte key spins it for good. The binding is not the way
// in: a pattern must be in the subset below, which
//   - has no quantified group (so no nested quantifier, the exponential
//     case), no back-reference, look-around or word boundary;
//   - has at most kMaxVariable repetitions that match a variable number of
//     times (?, *, +, {m,}, {m,n} with n > m), bounds of at most kMaxRepeat,
//     and at most kMaxAlternatives '|' in all;
//   - is at most kMaxPatternLen bytes;
// and keys are at most MCGO_MAX_KEY_LEN bytes (args.h), so that the
// master's recursion stays far below what crashes it.
//
// The subset: literal bytes; "." (any byte but \n and \r); classes [...],
// [^...] with ranges and escapes; \d \D \w \W \s \S \n \r \t \f \v and an
// escaped punctuation byte; groups (...) and (?:...) with alternation |;
// anchors ^ and $; quantifiers * + ? {m} {m,} {m,n}, greedy or lazy, on a
// single atom. Its meaning is ECMAScript's, and Search answers what
// std::regex_search would, in time linear in the key (a Pike VM over the
// compiled program), whatever the key's length.
//
// What the subset leaves to the master: a backtracking search still costs
// it a polynomial in the key's length per key (about n^3 for an unanchored
// pattern with two repetitions over an adversarial key), times at most
// 2^kMaxAlternatives for the alternatives: nothing for keys of the usual
// hundred bytes, seconds for a hostile 4 KiB key. The exponential case and
// the crash are what it removes.
#ifndef MCGO_COMMON_KEY_PATTERN_H_
#define MCGO_COMMON_KEY_PATTERN_H_

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mcgo::pattern {

inline constexpr size_t kMaxPatternLen = 1024;
inline constexpr int kMaxRepeat = 100;
inline constexpr int kMaxVariable = 2;
inline constexpr int kMaxAlternatives = 8;
inline constexpr size_t kMaxProgram = 1 << 15;

struct Inst {
  enum Op : uint8_t { kByte, kSplit, kJmp, kBegin, kEnd, kMatch } op;
  uint32_t x = 0, y = 0;   // kSplit: both targets; kJmp: x
  uint32_t set = 0;        // kByte: index into Program::sets
};

struct Program {
  std::vector<Inst> code;
  std::vector<std::bitset<256>> sets;
};

namespace detail {

using Set = std::bitset<256>;

inline Set Range(int lo, int hi) {
  Set s;
  for (int c = lo; c <= hi; ++c) s.set(static_cast<size_t>(c));
  return s;
}
inline Set Digit() { return Range('0', '9'); }
inline Set Word() { return Range('a', 'z') | Range('A', 'Z') | Digit() | Range('_', '_'); }
inline Set Space() {
  Set s;
  for (char c : std::string_view(" \t\n\v\f\r")) s.set(static_cast<unsigned char>(c));
  return s;
}

// A parsed piece: an atom (a byte set) with its repetition, an anchor, or a
// group holding alternatives of sequences.
struct Node {
  enum Kind { kAtom, kBegin, kEnd, kGroup } kind = kAtom;
  Set set;
  int min = 1, max = 1;  // max -1: unbounded
  std::vector<std::vector<Node>> alts;
};

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  bool Parse(std::vector<std::vector<Node>> *alts, std::string *err) {
    if (!Alternatives(alts)) {
      *err = err_;
      return false;
    }
    if (i_ != p_.size()) {
      *err = Where("unexpected ')'");
      return false;
    }
    return true;
  }

 private:
  std::string Where(const std::string &what) const {
    return what + " at offset " + std::to_string(i_);
  }
  bool Fail(const std::string &what) {
    if (err_.empty()) err_ = Where(what);
    return false;
  }
  bool More() const { return i_ < p_.size(); }
  char Peek() const { return p_[i_]; }

  bool Alternatives(std::vector<std::vector<Node>> *alts) {
    alts->emplace_back();
    while (More() && Peek() != ')') {
      if (Peek() == '|') {
        if (++alternatives_ > kMaxAlternatives) {
          return Fail("more than " + std::to_string(kMaxAlternatives) + " alternatives ('|')");
        }
        ++i_;
        alts->emplace_back();
        continue;
      }
      if (!Piece(&alts->back())) return false;
    }
    return true;
  }

  bool Piece(std::vector<Node> *seq) {
    Node n;
    const char c = Peek();
    if (c == '^' || c == '$') {
      ++i_;
      n.kind = c == '^' ? Node::kBegin : Node::kEnd;
      if (More() && IsQuantifier(Peek())) return Fail("quantifier after an anchor");
      seq->push_back(std::move(n));
      return true;
    }
    if (c == '(') {
      ++i_;
      if (p_.substr(i_, 2) == "?:") {
        i_ += 2;
      } else if (More() && Peek() == '?') {
        return Fail("look-around and named groups are not in the subset");
      }
      n.kind = Node::kGroup;
      if (!Alternatives(&n.alts)) return false;
      if (!More() || Peek() != ')') return Fail("unclosed group");
      ++i_;
      if (More() && IsQuantifier(Peek())) {
        return Fail("a quantified group is not in the subset (nested repetition backtracks exponentially)");
      }
      seq->push_back(std::move(n));
      return true;
    }
    if (!Atom(&n.set)) return false;
    if (More() && IsQuantifier(Peek()) && !Quantifier(&n)) return false;
    seq->push_back(std::move(n));
    return true;
  }

  static bool IsQuantifier(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  bool Quantifier(Node *n) {
    const char c = p_[i_++];
    if (c == '*') {
      n->min = 0, n->max = -1;
    } else if (c == '+') {
      n->min = 1, n->max = -1;
    } else if (c == '?') {
      n->min = 0, n->max = 1;
    } else {
      int m = 0, x = 0;
      if (!Number(&m)) return Fail("'{' must start a repetition {m}, {m,} or {m,n}");
      x = m;
      if (More() && Peek() == ',') {
        ++i_;
        x = -1;
        if (More() && Peek() != '}' && !Number(&x)) return Fail("bad repetition bound");
      }
      if (!More() || Peek() != '}') return Fail("unclosed repetition");
      ++i_;
      if (m > kMaxRepeat || x > kMaxRepeat) {
        return Fail("repetition bound above " + std::to_string(kMaxRepeat));
      }
      if (x != -1 && x < m) return Fail("repetition {m,n} with n < m");
      n->min = m, n->max = x;
    }
    if (More() && Peek() == '?') ++i_;  // lazy: the same answer for a search
    if (More() && IsQuantifier(Peek())) return Fail("a repeated repetition is not in the subset");
    if (n->max != n->min && ++variable_ > kMaxVariable) {
      return Fail("more than " + std::to_string(kMaxVariable) + " variable repetitions (? * + {m,} {m,n})");
    }
    return true;
  }

  bool Number(int *out) {
    size_t start = i_;
    long v = 0;
    while (More() && Peek() >= '0' && Peek() <= '9') {
      v = v * 10 + (Peek() - '0');
      if (v > 1000000) return false;
      ++i_;
    }
    *out = static_cast<int>(v);
    return i_ > start;
  }

  bool Atom(Set *s) {
    const unsigned char c = static_cast<unsigned char>(p_[i_]);
    switch (c) {
      case '.':
        ++i_;
        *s = ~Set();
        s->reset('\n');
        s->reset('\r');
        return true;
      case '[':
        return Class(s);
      case '\\':
        return Escape(s, false);
      case '*': case '+': case '?': case '{':
        return Fail("nothing to repeat");
      case ']': case '}': case ')': case '|':
        return Fail(std::string("unescaped '") + static_cast<char>(c) + "'");
      default:
        ++i_;
        s->reset();
        s->set(c);
        return true;
    }
  }

  // Escape reads \x at i_ (in a class when in_class).
  bool Escape(Set *s, bool in_class) {
    ++i_;
    if (!More()) return Fail("trailing backslash");
    const unsigned char c = static_cast<unsigned char>(p_[i_++]);
    s->reset();
    switch (c) {
      case 'd': *s = Digit(); return true;
      case 'D': *s = ~Digit(); return true;
      case 'w': *s = Word(); return true;
      case 'W': *s = ~Word(); return true;
      case 's': *s = Space(); return true;
      case 'S': *s = ~Space(); return true;
      case 'n': s->set('\n'); return true;
      case 'r': s->set('\r'); return true;
      case 't': s->set('\t'); return true;
      case 'f': s->set('\f'); return true;
      case 'v': s->set('\v'); return true;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80) {
      --i_;
      return Fail(std::string("escape \\") + static_cast<char>(c) +
                  (in_class ? " in a class" : "") + " is not in the subset");
    }
    s->set(c);  // an escaped punctuation byte is itself
    return true;
  }

  bool Class(Set *out) {
    ++i_;  // '['
    bool negate = false;
    if (More() && Peek() == '^') {
      negate = true;
      ++i_;
    }
    Set s;
    bool any = false;
    while (More() && Peek() != ']') {
      Set item;
      int lo = -1;
      if (Peek() == '\\') {
        if (!Escape(&item, true)) return false;
        if (item.count() == 1) lo = static_cast<int>(First(item));
      } else if (Peek() == '[') {
        return Fail("'[' in a class must be escaped");
      } else {
        lo = static_cast<unsigned char>(p_[i_++]);
        item.set(static_cast<size_t>(lo));
      }
      const bool range = i_ + 1 < p_.size() && Peek() == '-' && p_[i_ + 1] != ']';
      if (range && lo < 0) return Fail("a class range starts with a shorthand class");
      if (range) {
        ++i_;
        Set hi_item;
        int hi;
        if (Peek() == '\\') {
          if (!Escape(&hi_item, true)) return false;
          if (hi_item.count() != 1) return Fail("a class range ends in a shorthand class");
          hi = static_cast<int>(First(hi_item));
        } else {
          hi = static_cast<unsigned char>(p_[i_++]);
        }
        if (hi < lo) return Fail("class range out of order");
        item = Range(lo, hi);
      }
      s |= item;
      any = true;
    }
    if (!More()) return Fail("unclosed class");
    ++i_;  // ']'
    if (!any) return Fail("empty class");
    *out = negate ? ~s : s;
    return true;
  }

  static size_t First(const Set &s) {
    for (size_t c = 0; c < 256; ++c) {
      if (s.test(c)) return c;
    }
    return 0;
  }

  std::string_view p_;
  size_t i_ = 0;
  int variable_ = 0, alternatives_ = 0;
  std::string err_;
};

class Compiler {
 public:
  explicit Compiler(Program *p) : p_(p) {}

  bool Alts(const std::vector<std::vector<Node>> &alts) {
    // a|b|c: split a, (split b, c); every branch jumps to the end.
    std::vector<uint32_t> jumps;
    for (size_t k = 0; k < alts.size(); ++k) {
      const bool last = k + 1 == alts.size();
      uint32_t split = 0;
      if (!last) {
        split = Emit({Inst::kSplit});
        p_->code[split].x = Pc();
      }
      if (!Seq(alts[k])) return false;
      if (!last) {
        jumps.push_back(Emit({Inst::kJmp}));
        p_->code[split].y = Pc();
      }
    }
    for (uint32_t j : jumps) p_->code[j].x = Pc();
    return Ok();
  }

  bool Ok() const { return p_->code.size() <= kMaxProgram; }
  uint32_t Pc() const { return static_cast<uint32_t>(p_->code.size()); }
  uint32_t Emit(Inst in) {
    p_->code.push_back(in);
    return Pc() - 1;
  }

 private:
  bool Seq(const std::vector<Node> &seq) {
    for (const Node &n : seq) {
      switch (n.kind) {
        case Node::kBegin: Emit({Inst::kBegin}); break;
        case Node::kEnd: Emit({Inst::kEnd}); break;
        case Node::kGroup:
          if (!Alts(n.alts)) return false;
          break;
        case Node::kAtom:
          if (!Repeat(n)) return false;
          break;
      }
      if (!Ok()) return false;
    }
    return true;
  }

  uint32_t Set(const detail::Set &s) {
    p_->sets.push_back(s);
    return static_cast<uint32_t>(p_->sets.size() - 1);
  }

  void Byte(uint32_t set) {
    Inst in{Inst::kByte};
    in.set = set;
    Emit(in);
  }

  bool Repeat(const Node &n) {
    const uint32_t set = Set(n.set);
    for (int k = 0; k < n.min; ++k) Byte(set);
    if (n.max == -1) {
      // L: split body, out; body; jmp L
      const uint32_t split = Emit({Inst::kSplit});
      p_->code[split].x = Pc();
      Byte(set);
      Inst j{Inst::kJmp};
      j.x = split;
      Emit(j);
      p_->code[split].y = Pc();
      return Ok();
    }
    // (max - min) optional copies: split body, out for each.
    std::vector<uint32_t> outs;
    for (int k = n.min; k < n.max; ++k) {
      const uint32_t split = Emit({Inst::kSplit});
      p_->code[split].x = Pc();
      outs.push_back(split);
      Byte(set);
      if (!Ok()) return false;
    }
    for (uint32_t s : outs) p_->code[s].y = Pc();
    return Ok();
  }

  Program *p_;
};

}  // namespace detail

// Compile parses pattern; false (with the reason in *err) for a pattern
// outside the subset or malformed.
inline bool Compile(std::string_view pattern, Program *out, std::string *err) {
  out->code.clear();
  out->sets.clear();
  if (pattern.size() > kMaxPatternLen) {
    *err = "pattern longer than " + std::to_string(kMaxPatternLen) + " bytes";
    return false;
  }
  std::vector<std::vector<detail::Node>> alts;
  detail::Parser parser(pattern);
  if (!parser.Parse(&alts, err)) return false;
  detail::Compiler c(out);
  if (!c.Alts(alts)) {
    *err = "pattern compiles to more than " + std::to_string(kMaxProgram) + " instructions";
    return false;
  }
  c.Emit({Inst::kMatch});
  return true;
}

// Search reports whether pattern matches any part of key (regex_search), in
// O(len(key) x len(program)) time and O(len(program)) memory.
class Searcher {
 public:
  explicit Searcher(const Program &p) : p_(p), mark_(p.code.size(), 0) {
    cur_.reserve(p.code.size());
    next_.reserve(p.code.size());
  }

  bool Search(std::string_view key) {
    cur_.clear();
    for (size_t i = 0; i <= key.size(); ++i) {
      // A new thread starts at every position: the search is unanchored.
      ++gen_;
      next_.clear();
      for (uint32_t pc : cur_) {
        if (Add(&next_, pc, i, key.size())) return true;
      }
      if (Add(&next_, 0, i, key.size())) return true;
      if (i == key.size()) return false;
      // Step over key[i].
      const unsigned char c = static_cast<unsigned char>(key[i]);
      cur_.clear();
      for (uint32_t pc : next_) {
        const Inst &in = p_.code[pc];
        if (in.op == Inst::kByte && p_.sets[in.set].test(c)) cur_.push_back(pc + 1);
      }
    }
    return false;
  }

 private:
  // Add follows pc's epsilon closure at position i, appending the byte and
  // match instructions reached to list; true when kMatch is reached.
  bool Add(std::vector<uint32_t> *list, uint32_t pc, size_t i, size_t n) {
    stack_.clear();
    stack_.push_back(pc);
    while (!stack_.empty()) {
      const uint32_t at = stack_.back();
      stack_.pop_back();
      if (mark_[at] == gen_) continue;
      mark_[at] = gen_;
      const Inst &in = p_.code[at];
      switch (in.op) {
        case Inst::kMatch:
          return true;
        case Inst::kByte:
          list->push_back(at);
          break;
        case Inst::kJmp:
          stack_.push_back(in.x);
          break;
        case Inst::kSplit:
          stack_.push_back(in.y);
          stack_.push_back(in.x);
          break;
        case Inst::kBegin:
          if (i == 0) stack_.push_back(at + 1);
          break;
        case Inst::kEnd:
          if (i == n) stack_.push_back(at + 1);
          break;
      }
    }
    return false;
  }

  const Program &p_;
  std::vector<uint64_t> mark_;
  uint64_t gen_ = 0;
  std::vector<uint32_t> cur_, next_, stack_;
};

}  // namespace mcgo::pattern

#endif  // MCGO_COMMON_KEY_PATTERN_H_
