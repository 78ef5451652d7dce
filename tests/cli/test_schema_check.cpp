#include "tests/cli/test_schema_check.h"

#include <set>
#include <string_view>

namespace blkrr::testing {
namespace {

using nlohmann::json;

const std::set<std::string_view> kAnnotations = {"$schema",  "$id",   "title",   "description",
                                                 "$comment", "$defs", "examples"};
const std::set<std::string_view> kChecks = {
    "type",  "required", "properties", "additionalProperties", "items", "enum",
    "const", "minimum",  "$ref"};

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::null:
      return "null";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

bool has_type(const json& v, const std::string& want) {
  std::string t = type_of(v);
  return t == want || (want == "number" && t == "integer");
}

class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}
  std::vector<std::string> errors;

  void check(const json& s, const json& v, const std::string& path) {
    if (!s.is_object()) return fail(path, "schema is not an object");
    for (const auto& [k, _] : s.items())
      if (!kAnnotations.count(k) && !kChecks.count(k))
        fail(path, "schema keyword '" + k + "' is not supported by the test validator");
    if (s.contains("$ref")) return check(resolve(s["$ref"], path), v, path);
    check_type(s, v, path);
    if (s.contains("enum")) {
      bool found = false;
      for (const auto& e : s["enum"]) found = found || e == v;
      if (!found) fail(path, v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("const") && s["const"] != v)
      fail(path, v.dump() + " is not " + s["const"].dump());
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>())
      fail(path, v.dump() + " is below " + s["minimum"].dump());
    if (v.is_object()) check_object(s, v, path);
    if (v.is_array() && s.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "/" + std::to_string(i));
  }

 private:
  void fail(const std::string& path, const std::string& what) {
    errors.push_back((path.empty() ? "/" : path) + ": " + what);
  }

  const json& resolve(const json& ref, const std::string& path) {
    static const json kEmpty = json::object();
    const std::string prefix = "#/$defs/";
    if (!ref.is_string() || ref.get<std::string>().rfind(prefix, 0) != 0) {
      fail(path, "only local $ref \"#/$defs/NAME\" is supported");
      return kEmpty;
    }
    std::string name = ref.get<std::string>().substr(prefix.size());
    if (!root_.contains("$defs") || !root_["$defs"].contains(name)) {
      fail(path, "$ref to a missing definition " + name);
      return kEmpty;
    }
    return root_["$defs"][name];
  }

  void check_type(const json& s, const json& v, const std::string& path) {
    if (!s.contains("type")) return;
    std::vector<std::string> types;
    if (s["type"].is_array())
      for (const auto& t : s["type"]) types.push_back(t.get<std::string>());
    else
      types.push_back(s["type"].get<std::string>());
    for (const auto& t : types)
      if (has_type(v, t)) return;
    fail(path, "is " + type_of(v) + ", expected " + s["type"].dump());
  }

  void check_object(const json& s, const json& v, const std::string& path) {
    if (s.contains("required"))
      for (const auto& k : s["required"])
        if (!v.contains(k.get<std::string>()))
          fail(path, "lacks the required key " + k.get<std::string>());
    const json props = s.value("properties", json::object());
    for (const auto& [k, val] : v.items()) {
      std::string sub = path;
      sub.append("/").append(k);
      if (props.contains(k)) {
        check(props[k], val, sub);
      } else if (s.contains("additionalProperties")) {
        const json& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>())
          fail(path, "has the key " + k + " that the schema does not list");
        else if (ap.is_object())
          check(ap, val, sub);
      }
    }
  }

  const json& root_;
};

}  // namespace

std::vector<std::string> schema_violations(const json& schema, const json& doc) {
  Checker c(schema);
  c.check(schema, doc, "");
  return c.errors;
}

}  // namespace blkrr::testing
