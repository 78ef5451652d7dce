// CSV and JSON-lines outputs: one request per line with every field the
// input carries (SinkOptions::fields). JSON lines are a blkrr.requests stream
// (docs/json.md): a header line, then records with the keys of
// core/request_json.h, written here without nlohmann for speed.
#include <cstring>

#include "converters/sink.h"
#include "converters/text_io.h"
#include "core/request_json.h"

namespace blkrr {

namespace {

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

class TextSink : public RequestSink {
 public:
  TextSink(OutFile out, uint32_t fields, bool json)
      : out_(std::move(out)), f_(fields), json_(json) {
    if (json_) {
      out_.append(json_line(requests_header("blkrr convert")) + "\n");
    } else {
      std::string h = "start,sector,sectors,bytes,op";
      if (f_ & kFieldLatency) h += ",latency_us";
      if (f_ & kFieldDiskTime) h += ",disk_time_us";
      if (f_ & kFieldProcess) h += ",pid,tgid,comm";
      if (f_ & kFieldDevice) h += ",dev,part";
      if (f_ & kFieldFlags) h += ",flags";
      if (f_ & kFieldCgroup) h += ",cgroup";
      if (f_ & kFieldError) h += ",error";
      if (f_ & kFieldRecord) h += ",issue_ns,complete_ns,record_flags";
      out_.append(h + "\n");
    }
  }
  bool expresses(Op) const override { return true; }

  Status write(const OutRecord& rec) override { return json_ ? write_json(rec) : write_csv(rec); }
  Status close(const Counters&) override { return out_.close(); }

 private:
  Status write_json(const OutRecord& rec);
  Status write_csv(const OutRecord& rec);

  OutFile out_;
  uint32_t f_;
  bool json_;
};

// A CSV cell: quoted when it holds a comma, quote or newline.
char* csv_str(char* p, std::string_view s) {
  bool quote = s.find_first_of(",\"\n") != std::string_view::npos;
  if (quote) *p++ = '"';
  for (char c : s) {
    if (c == '"') *p++ = '"';
    *p++ = c;
  }
  if (quote) *p++ = '"';
  return p;
}

// A JSON string (the input is valid UTF-8): quotes, backslashes and control
// characters escaped.
char* json_str(char* p, std::string_view s) {
  *p++ = '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *p++ = '\\';
      *p++ = c;
    } else if (u < 0x20) {
      static const char* hex = "0123456789abcdef";
      p = put(p, "\\u00");
      *p++ = hex[u >> 4];
      *p++ = hex[u & 15];
    } else {
      *p++ = c;
    }
  }
  *p++ = '"';
  return p;
}

Status TextSink::write_csv(const OutRecord& rec) {
  const Request& r = *rec.r;
  char* p = out_.reserve(512);
  p = fmt_sec9(p, rec.start_ns, 0);
  *p++ = ',';
  p = fmt_u64(p, r.sector);
  *p++ = ',';
  p = fmt_u64(p, (r.bytes + 511u) / 512u);
  *p++ = ',';
  p = fmt_u64(p, r.bytes);
  *p++ = ',';
  p = put(p, op_name(r.op));
  if (f_ & kFieldLatency) {
    *p++ = ',';
    if (r.completed()) p = fmt_usec3(p, r.latency_ns());
  }
  if (f_ & kFieldDiskTime) {
    *p++ = ',';
    p = fmt_usec3(p, r.disk_time_ns);
  }
  if (f_ & kFieldProcess) {
    *p++ = ',';
    p = fmt_u64(p, r.pid);
    *p++ = ',';
    p = fmt_u64(p, r.tgid);
    *p++ = ',';
    p = csv_str(p, r.comm_view());
  }
  if (f_ & kFieldDevice) {
    *p++ = ',';
    p = csv_str(p, dev_to_string(r.dev));
    *p++ = ',';
    p = csv_str(p, dev_to_string(r.part));
  }
  if (f_ & kFieldFlags) {
    *p++ = ',';
    p = csv_str(p, flags_to_string(r.flags));
  }
  if (f_ & kFieldCgroup) {
    *p++ = ',';
    p = fmt_u64(p, r.cgroup_id);
  }
  if (f_ & kFieldError) {
    *p++ = ',';
    p = fmt_i64(p, r.error);
  }
  if (f_ & kFieldRecord) {
    *p++ = ',';
    p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.issue_ns) + rec.shift_ns));
    *p++ = ',';
    if (r.completed())
      p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.complete_ns) + rec.shift_ns));
    *p++ = ',';
    p = csv_str(p, rec_flags_to_string(r.rec_flags));
  }
  *p++ = '\n';
  out_.commit(p);
  return out_.maybe_flush();
}

// The keys and types of core/request_json.h; fields the input does not carry
// are left out (SinkOptions::fields).
Status TextSink::write_json(const OutRecord& rec) {
  const Request& r = *rec.r;
  char* p = out_.reserve(640);
  auto key = [&](const char* name) {
    *p++ = ',';
    *p++ = '"';
    p = put(p, name);
    *p++ = '"';
    *p++ = ':';
  };
  const bool issued = !(r.rec_flags & kRecIssueNotSeen);
  p = put(p, "{\"type\":\"request\",\"start_ns\":");
  p = fmt_i64(p, rec.start_ns);
  if (f_ & kFieldRecord) {
    key("issue_ns");
    if (issued)
      p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.issue_ns) + rec.shift_ns));
    else
      p = put(p, "null");
    key("complete_ns");
    if (r.completed())
      p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.complete_ns) + rec.shift_ns));
    else
      p = put(p, "null");
  }
  if (f_ & kFieldLatency) {
    key("latency_ns");
    if (r.completed() && issued)
      p = fmt_u64(p, r.latency_ns());
    else
      p = put(p, "null");
  }
  if (f_ & kFieldDiskTime) {
    key("disk_time_ns");
    p = fmt_u64(p, r.disk_time_ns);
  }
  if (f_ & kFieldDevice) {
    key("dev");
    p = json_str(p, dev_to_string(r.dev));
    key("part");
    p = json_str(p, dev_to_string(r.part ? r.part : r.dev));
  }
  key("sector");
  p = fmt_u64(p, r.sector);
  key("bytes");
  p = fmt_u64(p, r.bytes);
  key("op");
  p = json_str(p, op_name(r.op));
  if (f_ & kFieldFlags) {
    key("flags");
    p = json_str(p, flags_to_string(r.flags));
  }
  if (f_ & kFieldProcess) {
    key("pid");
    p = fmt_u64(p, r.tgid);
    key("tid");
    p = fmt_u64(p, r.pid);
    key("comm");
    p = json_str(p, utf8_or_replace(r.comm_view()));  // JSON must be UTF-8
  }
  if (f_ & kFieldCgroup) {
    key("cgroup_id");
    *p++ = '"';
    p = fmt_u64(p, r.cgroup_id);
    *p++ = '"';
  }
  if (f_ & kFieldError) {
    key("error");
    p = fmt_i64(p, r.error);
  }
  if ((f_ & kFieldRecord) && r.rec_flags) {
    key("record_flags");
    p = json_str(p, rec_flags_to_string(r.rec_flags));
  }
  *p++ = '}';
  *p++ = '\n';
  out_.commit(p);
  return out_.maybe_flush();
}

}  // namespace

Result<std::unique_ptr<RequestSink>> open_text_sink(const std::string& path,
                                                    const SinkOptions& opts) {
  auto out = OutFile::create(path, opts.gz_level);
  if (!out) return out.error();
  std::unique_ptr<RequestSink> s =
      std::make_unique<TextSink>(std::move(*out), opts.fields, opts.format == OutputFormat::kJson);
  return s;
}

}  // namespace blkrr
