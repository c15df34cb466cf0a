// Parsing libtorch's printed schemas, and the registry over the generated list.
#include "ir/aten_schema.h"

#include <algorithm>
#include <array>
#include <unordered_map>

namespace autopar {
namespace {

// Every aten schema of the linked libtorch, sorted (generated at build time).
constexpr const char* kAtenSchemaTexts[] = {
#include "aten_schemas.inc"
};

// Positions of c outside brackets and quotes.
std::vector<size_t> top_level_positions(std::string_view text, char c) {
  std::vector<size_t> found;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '"') quoted = !quoted;
    if (quoted) continue;
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (ch == c && depth == 0) found.push_back(i);
  }
  return found;
}

// Splits at commas that are outside brackets and quotes.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t comma : top_level_positions(text, ',')) {
    parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  if (start < text.size()) parts.push_back(text.substr(start));
  return parts;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Position of c at bracket depth 0 outside quotes, or npos; the last one if `last`.
size_t find_top_level(std::string_view text, char c, bool last) {
  std::vector<size_t> found = top_level_positions(text, c);
  if (found.empty()) return std::string_view::npos;
  return last ? found.back() : found.front();
}

// "Tensor(a!)" -> "Tensor" (mutated), "Tensor(a -> *)[]" -> "Tensor[]".
std::string strip_alias(std::string_view type, bool& mutated) {
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    if (type[i] == '(') {
      size_t close = type.find(')', i);
      if (close == std::string_view::npos) close = type.size() - 1;
      if (type.substr(i, close - i).find('!') != std::string_view::npos) mutated = true;
      i = close;
      continue;
    }
    out += type[i];
  }
  return out;
}

bool is_list_of(std::string_view type, std::string_view element) {
  return type.starts_with(element) && type.size() > element.size() &&
         type[element.size()] == '[' && type.back() == ']';
}

void classify(AtenArg& arg) {
  std::string_view type = arg.type;
  if (type == "Tensor") arg.kind = AtenArgKind::kTensor;
  else if (type == "Tensor?") arg.kind = AtenArgKind::kOptionalTensor;
  else if (type == "Tensor[]") arg.kind = AtenArgKind::kTensorList;
  else if (type == "Tensor?[]") arg.kind = AtenArgKind::kOptionalTensorList;
  if (arg.is_tensor()) return;
  arg.optional = type.ends_with('?');
  if (arg.optional) type.remove_suffix(1);
  arg.kind = AtenArgKind::kAttr;
  if (type == "int" || type == "SymInt") arg.attr_type = AttrType::kInt;
  else if (type == "float" || type == "Scalar") arg.attr_type = AttrType::kScalar;
  else if (type == "bool") arg.attr_type = AttrType::kBool;
  else if (is_list_of(type, "int") || is_list_of(type, "SymInt") || is_list_of(type, "bool")) {
    arg.attr_type = AttrType::kInts;
  } else if (is_list_of(type, "float")) arg.attr_type = AttrType::kFloats;
  else if (type == "str") arg.attr_type = AttrType::kString;
  else if (type == "ScalarType") arg.attr_type = AttrType::kDType;
  else arg.kind = AtenArgKind::kUnsupported;
}

Expected<AtenArg> parse_arg(std::string_view text, bool keyword_only) {
  AtenArg arg;
  arg.keyword_only = keyword_only;
  text = trim(text);
  if (size_t eq = find_top_level(text, '=', /*last=*/false); eq != std::string_view::npos) {
    arg.has_default = true;
    text = trim(text.substr(0, eq));
  }
  size_t space = find_top_level(text, ' ', /*last=*/true);
  if (space == std::string_view::npos) return make_error("argument '{}' has no name", text);
  arg.name = std::string(text.substr(space + 1));
  arg.type = strip_alias(trim(text.substr(0, space)), arg.mutated);
  classify(arg);
  return arg;
}

Status parse_returns(std::string_view text, AtenSchema& schema) {
  text = trim(text);
  if (text.starts_with('(') && text.ends_with(')')) text = text.substr(1, text.size() - 2);
  std::vector<std::string_view> parts = split_top_level(text);
  for (std::string_view part : parts) {
    part = trim(part);
    size_t space = find_top_level(part, ' ', /*last=*/false);
    bool ignored = false;
    std::string type = strip_alias(space == std::string_view::npos ? part : part.substr(0, space),
                                   ignored);
    if (type == "Tensor") ++schema.num_returns;
    else if (type == "Tensor[]" && parts.size() == 1) schema.returns_list = true;
    else schema.returns_non_tensor = true;
  }
  return ok_status();
}

// "aten::add.Tensor" -> "aten.add.Tensor"; "aten::triu" -> "aten.triu.default".
std::string dotted_name(std::string_view qualified) {
  std::string out(qualified);
  if (size_t colons = out.find("::"); colons != std::string::npos) out.replace(colons, 2, ".");
  if (std::count(out.begin(), out.end(), '.') < 2) out += ".default";
  return out;
}

}  // namespace

bool AtenSchema::mutates() const {
  return std::any_of(args.begin(), args.end(), [](const AtenArg& a) { return a.mutated; });
}

int AtenSchema::num_tensor_args() const {
  return static_cast<int>(
      std::count_if(args.begin(), args.end(), [](const AtenArg& a) { return a.is_tensor(); }));
}

Expected<AtenSchema> parse_aten_schema(std::string_view text) {
  AtenSchema schema;
  schema.text = std::string(text);
  size_t open = text.find('(');
  size_t arrow = text.rfind(") -> ");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open) {
    return make_error("schema '{}' is not 'name(args) -> returns'", text);
  }
  schema.name = dotted_name(text.substr(0, open));
  bool keyword_only = false;
  for (std::string_view part : split_top_level(text.substr(open + 1, arrow - open - 1))) {
    if (trim(part) == "*") {
      keyword_only = true;
      continue;
    }
    Expected<AtenArg> arg = parse_arg(part, keyword_only);
    if (!arg) return make_error_like(arg.error(), "schema '{}': {}", text, arg.error().message);
    schema.args.push_back(std::move(*arg));
  }
  if (Status s = parse_returns(text.substr(arrow + 5), schema); !s) return s.error();
  return schema;
}

const AtenSchema* find_aten_schema(std::string_view name) {
  // Parsed once; a text the parser rejects is left out (then that op is unknown).
  static const auto* registry = [] {
    auto* map = new std::unordered_map<std::string, AtenSchema>();
    for (const char* text : kAtenSchemaTexts) {
      if (Expected<AtenSchema> schema = parse_aten_schema(text)) {
        std::string key = schema->name;
        map->emplace(std::move(key), std::move(*schema));
      }
    }
    return map;
  }();
  auto it = registry->find(std::string(name));
  return it == registry->end() ? nullptr : &it->second;
}

size_t aten_schema_count() { return std::size(kAtenSchemaTexts); }

}  // namespace autopar
