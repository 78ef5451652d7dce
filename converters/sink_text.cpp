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
    const Request& r = *rec.r;
    char* p = out_.reserve(512);
    // key(): JSON `,"name":` or CSV `,`
    auto key = [&](const char* name) {
      if (json_) {
        *p++ = ',';
        *p++ = '"';
        p = put(p, name);
        *p++ = '"';
        *p++ = ':';
      } else {
        *p++ = ',';
      }
    };
    auto str = [&](std::string_view s) {
      bool quote = json_ || s.find_first_of(",\"\n") != std::string_view::npos;
      if (quote) *p++ = '"';
      for (char c : s) {
        unsigned char u = static_cast<unsigned char>(c);
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
    };
    if (json_) p = put(p, "{\"start\":");
    p = fmt_sec9(p, rec.start_ns, 0);
    key("sector");
    p = fmt_u64(p, r.sector);
    key("sectors");
    p = fmt_u64(p, (r.bytes + 511u) / 512u);
    key("bytes");
    p = fmt_u64(p, r.bytes);
    key("op");
    if (json_) *p++ = '"';
    p = put(p, op_name(r.op));
    if (json_) *p++ = '"';
    if (f_ & kFieldLatency) {
      key("latency_us");
      if (r.completed())
        p = fmt_usec3(p, r.latency_ns());
      else if (json_)
        p = put(p, "null");
    }
    if (f_ & kFieldDiskTime) {
      key("disk_time_us");
      p = fmt_usec3(p, r.disk_time_ns);
    }
    if (f_ & kFieldProcess) {
      key("pid");
      p = fmt_u64(p, r.pid);
      key("tgid");
      p = fmt_u64(p, r.tgid);
      key("comm");
      if (json_)
        str(utf8_or_replace(r.comm_view()));  // JSON must be UTF-8
      else
        str(r.comm_view());
    }
    if (f_ & kFieldDevice) {
      key("dev");
      str(dev_to_string(r.dev));
      key("part");
      str(dev_to_string(r.part));
    }
    if (f_ & kFieldFlags) {
      key("flags");
      str(flags_to_string(r.flags));
    }
    if (f_ & kFieldCgroup) {
      key("cgroup");
      p = fmt_u64(p, r.cgroup_id);
    }
    if (f_ & kFieldError) {
      key("error");
      p = fmt_i64(p, r.error);
    }
    if (f_ & kFieldRecord) {
      key("issue_ns");
      p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.issue_ns) + rec.shift_ns));
      key("complete_ns");
      if (r.completed())
        p = fmt_u64(p, static_cast<uint64_t>(static_cast<int64_t>(r.complete_ns) + rec.shift_ns));
      else if (json_)
        p = put(p, "null");
      key("record_flags");
      str(rec_flags_to_string(r.rec_flags));
    }
    if (json_) *p++ = '}';
    *p++ = '\n';
    out_.commit(p);
    return out_.maybe_flush();
  }
  Status close(const Counters&) override { return out_.close(); }

 private:
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
