// DependencyGraphReader (converters/dependency_graph.h): the graph file of
// `convert --dependencies`, read back line by line beside its trace.
#include <nlohmann/json.hpp>

#include "converters/dependency_graph.h"
#include "core/units.h"

namespace blkrr {

namespace {

constexpr std::string_view kMagic = "# blkrr dependencies ";
// seq issue complete tid op sector sectors kind think depth parents (slots: version 2)
constexpr size_t kFieldsV1 = 11, kFields = 12;

std::optional<DepKind> parse_kind(std::string_view s) {
  for (DepKind k : {DepKind::kIndependent, DepKind::kThread, DepKind::kCross, DepKind::kSibling,
                    DepKind::kSlot})
    if (s == dep_kind_name(k)) return k;
  return std::nullopt;
}

// The options JSON of the header; fields it lacks keep their defaults.
void read_options(std::string_view text, DependencyOptions& o) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return;
  auto get = [&j](const char* key, auto& out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_number_unsigned()) out = it->get<std::decay_t<decltype(out)>>();
  };
  get("thread_window_ns", o.thread_window_ns);
  get("cross_window_ns", o.cross_window_ns);
  get("skew_ns", o.skew_ns);
  get("sibling_ns", o.sibling_ns);
  get("max_fanin", o.max_fanin);
  get("max_tracked", o.max_tracked);
  get("think_quantile", o.think_quantile);
  // Graphs written before the tight rule cut every thread at its quantile.
  o.think_tight = 0;
  get("think_tight", o.think_tight);
  auto name = [&j](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  // A graph without these names (version 1) was inferred with the recorded
  // gaps and completion chains.
  o.think = name("think") == "work" ? DependencyOptions::Think::kWork
                                    : DependencyOptions::Think::kRecorded;
  o.async = name("async") == "slots" ? DependencyOptions::Async::kSlots
                                     : DependencyOptions::Async::kCompletion;
}

// "3,7,12" or "-": at most kMaxParents seqs, each below `seq`, growing.
bool parse_parents(std::string_view s, uint64_t seq, Dependency& d, std::string& why) {
  d.nparents = 0;
  if (s == "-") return true;
  std::string_view part[kMaxParents + 1];
  const size_t n = split_at(s, ',', part, kMaxParents);
  if (n > kMaxParents) {
    why = "more than " + std::to_string(kMaxParents) + " parents";
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t p = 0;
    if (!parse_u64_field(part[i], p)) {
      why = "parent '" + std::string(part[i]) + "' is not a request number";
      return false;
    }
    if (p >= seq || (i > 0 && p <= d.parents[i - 1])) {
      why = "parent " + std::to_string(p) +
            " is not an earlier request (parents are earlier seqs, oldest first)";
      return false;
    }
    d.parents[i] = p;
  }
  d.nparents = static_cast<uint8_t>(n);
  return true;
}

}  // namespace

Result<DependencyGraphReader> DependencyGraphReader::open(const std::string& path) {
  auto in = LineReader::open(path);
  if (!in) return in.error().context("opening the dependency graph " + path);
  DependencyGraphReader g(std::move(*in));
  BLKRR_TRY(g.read_header());
  return g;
}

Status DependencyGraphReader::read_header() {
  std::string_view l;
  auto got = in_.next(l);
  if (!got) return got.error();
  if (!*got || l.substr(0, kMagic.size()) != kMagic)
    return Error(ErrorKind::kBadInput, in_.where() +
                                           ": not a dependency graph (it starts with '# blkrr "
                                           "dependencies 2'; write one with blkrr convert TRACE "
                                           "--dependencies FILE)");
  const std::string_view v = l.substr(kMagic.size());
  if (v != "1" && v != "2")
    return Error(ErrorKind::kBadInput, in_.where() + ": dependency graph version '" +
                                           std::string(v) + "', this blkrr reads versions 1 and 2");
  version_ = v == "1" ? 1 : 2;
  for (;;) {
    got = in_.next(l);
    if (!got) return got.error();
    if (!*got) return {};
    if (l.substr(0, 10) == "# options ") read_options(l.substr(10), options_);
    if (!l.empty() && l[0] == '#') continue;
    pending_.assign(l);
    have_pending_ = true;
    return {};
  }
}

Result<bool> DependencyGraphReader::next_line(std::string_view& line) {
  if (have_pending_) {
    have_pending_ = false;
    line = pending_;
    return true;
  }
  for (;;) {
    auto got = in_.next(line);
    if (!got || !*got) return got;
    if (!line.empty() && line[0] != '#') return true;
  }
}

Status DependencyGraphReader::parse(std::string_view line, const Request& r, uint64_t seq,
                                    Dependency& d) const {
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kBadInput, in_.where() + ": " + why);
  };
  const size_t fields = version_ == 1 ? kFieldsV1 : kFields;
  std::string_view f[kFields + 1];
  if (split_at(line, '\t', f, fields) != fields)
    return bad("expected " + std::to_string(fields) + " tab-separated fields");
  uint64_t line_seq = 0, issue = 0, sector = 0, sectors = 0;
  if (!parse_u64_field(f[0], line_seq) || !parse_u64_field(f[1], issue) ||
      !parse_u64_field(f[5], sector) || !parse_u64_field(f[6], sectors) ||
      !parse_u64_field(f[8], d.think_ns))
    return bad("a number field (seq, issue_ns, sector, sectors or think_ns) is not a number");
  uint64_t depth = 0;
  if (!parse_u64_field(f[9], depth) || depth > UINT32_MAX) return bad("depth is not a number");
  d.depth = static_cast<uint32_t>(depth);
  const auto op = parse_op(trim(f[4]));
  if (line_seq != seq || issue != r.issue_ns || !op || *op != r.op || sector != r.sector ||
      sectors != r.sectors())
    return bad(strfmt(
        "request %llu of the trace (%c at sector %llu, issued at %llu ns) is not "
        "the one this line describes: the graph belongs to another trace (or to "
        "other --start/--repeat settings)",
        static_cast<unsigned long long>(seq), op_letter(r.op),
        static_cast<unsigned long long>(r.sector), static_cast<unsigned long long>(r.issue_ns)));
  const auto kind = parse_kind(trim(f[7]));
  if (!kind) return bad("unknown kind '" + std::string(f[7]) + "'");
  d.seq = seq;
  d.kind = *kind;
  std::string why;
  if (!parse_parents(trim(f[10]), seq, d, why)) return bad(why);
  uint64_t slots = 0;
  if (fields == kFields && (!parse_u64_field(f[11], slots) || slots > kMaxSlots))
    return bad("slots is not a number of at most " + std::to_string(kMaxSlots));
  d.slots = static_cast<uint32_t>(slots);
  const bool none = d.kind == DepKind::kIndependent || d.kind == DepKind::kSlot;
  if (none != (d.nparents == 0))
    return bad("kind '" + std::string(f[7]) +
               "' disagrees with the parents (independent and slot exactly when there are none)");
  if (d.slot() != (d.slots > 0))
    return bad("kind '" + std::string(f[7]) + "' disagrees with slots (above 0 exactly for slot)");
  if (d.independent()) d.think_ns = 0;
  return {};
}

Result<Dependency> DependencyGraphReader::next(const Request& r, uint64_t seq) {
  std::string_view line;
  auto got = next_line(line);
  if (!got) return got.error();
  if (!*got)
    return Error(ErrorKind::kBadInput, in_.path() + ": the graph ends after " +
                                           std::to_string(seq) +
                                           " requests, the trace has more: it belongs to another "
                                           "trace");
  Dependency d;
  BLKRR_TRY(parse(line, r, seq, d));
  count_kind(counters_, d.kind);
  if (!r.completed()) ++counters_.no_completion;
  return d;
}

Status DependencyGraphReader::finish() {
  std::string_view line;
  auto got = next_line(line);
  if (!got) return got.error();
  if (*got)
    return Error(ErrorKind::kBadInput, in_.where() +
                                           ": the trace ended but the graph goes on: it belongs "
                                           "to another trace");
  return {};
}

}  // namespace blkrr
