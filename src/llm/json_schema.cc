#include "llm/json_schema.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace kforge::llm {

using nlohmann::json;

namespace {

const std::set<std::string>& KnownKeywords() {
  static const std::set<std::string> k = {"type",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "enum",
                                          "const",
                                          "minimum",
                                          "maximum",
                                          "exclusiveMinimum",
                                          "exclusiveMaximum",
                                          "minItems",
                                          "maxItems",
                                          "minLength",
                                          "maxLength",
                                          "anyOf",
                                          "description",
                                          "title",
                                          "default",
                                          "examples",
                                          "$schema"};
  return k;
}

const std::set<std::string>& KnownTypes() {
  static const std::set<std::string> t = {"object",  "array",   "string", "number",
                                          "integer", "boolean", "null"};
  return t;
}

std::string Escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Status CheckAt(const json& schema, const std::string& where) {
  auto bad = [&](const std::string& what) {
    return Error::BadInput(
        fmt::format("JSON schema at '{}': {}", where.empty() ? "/" : where, what));
  };
  if (schema.is_boolean()) return {};
  if (!schema.is_object()) return bad("a schema must be an object");
  for (const auto& [key, value] : schema.items()) {
    if (!KnownKeywords().count(key)) return bad(fmt::format("unsupported keyword '{}'", key));
  }
  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<json> types = t->is_array() ? t->get<std::vector<json>>() : std::vector<json>{*t};
    if (types.empty()) return bad("'type' lists no type");
    for (const json& ty : types) {
      if (!ty.is_string() || !KnownTypes().count(ty.get<std::string>())) {
        return bad(fmt::format("unknown type {}", ty.dump()));
      }
    }
  }
  if (auto p = schema.find("properties"); p != schema.end()) {
    if (!p->is_object()) return bad("'properties' must be an object");
    for (const auto& [name, sub] : p->items()) {
      if (Status s = CheckAt(sub, where + "/properties/" + Escape(name)); !s) return s;
    }
  }
  if (auto r = schema.find("required"); r != schema.end()) {
    if (!r->is_array()) return bad("'required' must be an array of names");
    for (const json& name : *r) {
      if (!name.is_string()) return bad("'required' must be an array of names");
    }
  }
  if (auto a = schema.find("additionalProperties"); a != schema.end()) {
    if (Status s = CheckAt(*a, where + "/additionalProperties"); !s) return s;
  }
  if (auto i = schema.find("items"); i != schema.end()) {
    if (Status s = CheckAt(*i, where + "/items"); !s) return s;
  }
  if (auto e = schema.find("enum"); e != schema.end() && (!e->is_array() || e->empty())) {
    return bad("'enum' must be a non-empty array");
  }
  for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (auto n = schema.find(k); n != schema.end() && !n->is_number()) {
      return bad(fmt::format("'{}' must be a number", k));
    }
  }
  for (const char* k : {"minItems", "maxItems", "minLength", "maxLength"}) {
    if (auto n = schema.find(k);
        n != schema.end() && !(n->is_number_unsigned() || (n->is_number_integer() && *n >= 0))) {
      return bad(fmt::format("'{}' must be a non-negative integer", k));
    }
  }
  if (auto any = schema.find("anyOf"); any != schema.end()) {
    if (!any->is_array() || any->empty()) return bad("'anyOf' must be a non-empty array");
    for (size_t k = 0; k < any->size(); ++k) {
      if (Status s = CheckAt((*any)[k], fmt::format("{}/anyOf/{}", where, k)); !s) return s;
    }
  }
  return {};
}

bool HasType(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (value.is_number_float()) {
      double d = value.get<double>();
      return std::isfinite(d) && std::floor(d) == d;
    }
  }
  return false;
}

std::string TypeName(const json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

std::string Brief(const json& value) {
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// UTF-8 code points, as JSON Schema counts string length.
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

void ValidateAt(const json& value, const json& schema, const std::string& where,
                std::vector<std::string>& out) {
  auto fail = [&](const std::string& what) {
    out.push_back(fmt::format("{}: {}", where.empty() ? "/" : where, what));
  };
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) fail("no value is allowed here");
    return;
  }
  if (auto t = schema.find("type"); t != schema.end()) {
    std::vector<std::string> types;
    if (t->is_array()) {
      for (const json& ty : *t) types.push_back(ty.get<std::string>());
    } else {
      types.push_back(t->get<std::string>());
    }
    bool any = false;
    for (const std::string& ty : types) any = any || HasType(value, ty);
    if (!any) {
      std::string want = types.size() == 1 ? types[0] : json(types).dump();
      fail(fmt::format("expected {}, got {}", want, TypeName(value)));
      return;  // further rules would only repeat the mismatch
    }
  }
  if (auto e = schema.find("enum"); e != schema.end()) {
    bool found = false;
    for (const json& option : *e) found = found || option == value;
    if (!found) fail(fmt::format("{} is not one of {}", Brief(value), Brief(*e)));
  }
  if (auto c = schema.find("const"); c != schema.end() && *c != value) {
    fail(fmt::format("{} is not {}", Brief(value), Brief(*c)));
  }
  if (value.is_number()) {
    double v = value.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && v < m->get<double>()) {
      fail(fmt::format("{} is below the minimum {}", Brief(value), m->dump()));
    }
    if (auto m = schema.find("maximum"); m != schema.end() && v > m->get<double>()) {
      fail(fmt::format("{} is above the maximum {}", Brief(value), m->dump()));
    }
    if (auto m = schema.find("exclusiveMinimum"); m != schema.end() && v <= m->get<double>()) {
      fail(fmt::format("{} is not above {}", Brief(value), m->dump()));
    }
    if (auto m = schema.find("exclusiveMaximum"); m != schema.end() && v >= m->get<double>()) {
      fail(fmt::format("{} is not below {}", Brief(value), m->dump()));
    }
  }
  if (value.is_string()) {
    size_t len = CodePoints(value.get<std::string>());
    if (auto m = schema.find("minLength"); m != schema.end() && len < m->get<size_t>()) {
      fail(fmt::format("string of length {} is shorter than {}", len, m->get<size_t>()));
    }
    if (auto m = schema.find("maxLength"); m != schema.end() && len > m->get<size_t>()) {
      fail(fmt::format("string of length {} is longer than {}", len, m->get<size_t>()));
    }
  }
  if (value.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && value.size() < m->get<size_t>()) {
      fail(fmt::format("{} items, fewer than the minimum {}", value.size(), m->get<size_t>()));
    }
    if (auto m = schema.find("maxItems"); m != schema.end() && value.size() > m->get<size_t>()) {
      fail(fmt::format("{} items, more than the maximum {}", value.size(), m->get<size_t>()));
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < value.size(); ++i) {
        ValidateAt(value[i], *items, fmt::format("{}/{}", where, i), out);
      }
    }
  }
  if (value.is_object()) {
    const json empty = json::object();
    auto p = schema.find("properties");
    const json& props = p != schema.end() ? *p : empty;
    if (auto r = schema.find("required"); r != schema.end()) {
      for (const json& name : *r) {
        if (!value.contains(name.get<std::string>())) {
          fail(fmt::format("missing required property '{}'", name.get<std::string>()));
        }
      }
    }
    auto extra = schema.find("additionalProperties");
    for (const auto& [key, sub] : value.items()) {
      std::string path = where + "/" + Escape(key);
      if (auto ps = props.find(key); ps != props.end()) {
        ValidateAt(sub, *ps, path, out);
      } else if (extra != schema.end()) {
        if (extra->is_boolean() && !extra->get<bool>()) {
          fail(fmt::format("property '{}' is not allowed", key));
        } else {
          ValidateAt(sub, *extra, path, out);
        }
      }
    }
  }
  if (auto any = schema.find("anyOf"); any != schema.end()) {
    bool matched = false;
    for (const json& option : *any) {
      std::vector<std::string> sub;
      ValidateAt(value, option, where, sub);
      if (sub.empty()) {
        matched = true;
        break;
      }
    }
    if (!matched) fail("matches none of the anyOf alternatives");
  }
}

}  // namespace

Status CheckSchema(const json& schema) {
  return CheckAt(schema, "");
}

std::vector<std::string> ValidateAgainstSchema(const json& value, const json& schema) {
  std::vector<std::string> out;
  ValidateAt(value, schema, "", out);
  return out;
}

}  // namespace kforge::llm
