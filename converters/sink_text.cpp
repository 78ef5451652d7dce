// CSV and JSON-lines outputs: one request per line with every field the
// input carries (SinkOptions::fields).
#include <cstring>

#include "converters/sink.h"
#include "converters/text_io.h"

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
    if (!json_) {
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

  Status write(const OutRecord& rec) override {
    char* p = out_.reserve(512);
    if (json_) p = put(p, "{\"start\":");
    p = put_request(p, rec);
    p = put_optional(p, *rec.r);
    if (f_ & kFieldRecord) p = put_record(p, rec);
    if (json_) *p++ = '}';
    *p++ = '\n';
    out_.commit(p);
    return out_.maybe_flush();
  }
  Status close(const Counters&) override { return out_.close(); }

 private:
  // JSON `,"name":` or CSV `,`
  char* key(char* p, std::string_view name) const {
    *p++ = ',';
    if (!json_) return p;
    *p++ = '"';
    p = put(p, name);
    *p++ = '"';
    *p++ = ':';
    return p;
  }

  // A string field: always quoted in JSON (with escapes), in CSV only when
  // it holds a comma, a quote or a newline (quotes doubled).
  char* str(char* p, std::string_view s) const {
    const bool quote = json_ || s.find_first_of(",\"\n") != std::string_view::npos;
    if (quote) *p++ = '"';
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (json_ && (c == '"' || c == '\\')) {
        *p++ = '\\';
        *p++ = c;
      } else if (json_ && u < 0x20) {
        static const char* hex = "0123456789abcdef";
        p = put(p, "\\u00");
        *p++ = hex[u >> 4];
        *p++ = hex[u & 15];
      } else if (!json_ && c == '"') {
        *p++ = '"';
        *p++ = '"';
      } else {
        *p++ = c;
      }
    }
    if (quote) *p++ = '"';
    return p;
  }

  // start, sector, sectors, bytes, op: every line has them.
  char* put_request(char* p, const OutRecord& rec) const {
    const Request& r = *rec.r;
    p = fmt_sec9(p, rec.start_ns, 0);
    p = fmt_u64(key(p, "sector"), r.sector);
    p = fmt_u64(key(p, "sectors"), (r.bytes + 511u) / 512u);
    p = fmt_u64(key(p, "bytes"), r.bytes);
    p = key(p, "op");
    if (json_) *p++ = '"';
    p = put(p, op_name(r.op));
    if (json_) *p++ = '"';
    return p;
  }

  // The fields the input carries (SinkOptions::fields), but the record's own.
  char* put_optional(char* p, const Request& r) const {
    if (f_ & kFieldLatency) {
      p = key(p, "latency_us");
      if (r.completed())
        p = fmt_usec3(p, r.latency_ns());
      else if (json_)
        p = put(p, "null");
    }
    if (f_ & kFieldDiskTime) p = fmt_usec3(key(p, "disk_time_us"), r.disk_time_ns);
    if (f_ & kFieldProcess) {
      p = fmt_u64(key(p, "pid"), r.pid);
      p = fmt_u64(key(p, "tgid"), r.tgid);
      p = key(p, "comm");
      if (json_)
        p = str(p, utf8_or_replace(r.comm_view()));  // JSON must be UTF-8
      else
        p = str(p, r.comm_view());
    }
    if (f_ & kFieldDevice) {
      p = str(key(p, "dev"), dev_to_string(r.dev));
      p = str(key(p, "part"), dev_to_string(r.part));
    }
    if (f_ & kFieldFlags) p = str(key(p, "flags"), flags_to_string(r.flags));
    if (f_ & kFieldCgroup) p = fmt_u64(key(p, "cgroup"), r.cgroup_id);
    if (f_ & kFieldError) p = fmt_i64(key(p, "error"), r.error);
    return p;
  }

  // issue_ns, complete_ns, record_flags of a native trace's record.
  char* put_record(char* p, const OutRecord& rec) const {
    const Request& r = *rec.r;
    p = key(p, "issue_ns");
    p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.issue_ns) + rec.shift_ns));
    p = key(p, "complete_ns");
    if (r.completed())
      p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.complete_ns) + rec.shift_ns));
    else if (json_)
      p = put(p, "null");
    return str(key(p, "record_flags"), rec_flags_to_string(r.rec_flags));
  }

  OutFile out_;
  uint32_t f_;
  bool json_;
};

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
