#include "formats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "errors.hpp"
#include "parallel.hpp"

namespace radix_sort {

namespace {

constexpr std::string_view npy_magic = "\x93NUMPY";
constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

/// `text` without a UTF-8 byte order mark at its start (some editors on Windows write one).
std::string_view without_bom(std::string_view text) {
  return text.substr(0, utf8_bom.size()) == utf8_bom ? text.substr(utf8_bom.size()) : text;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// `text` quoted from an input, made safe for a one-line message: bytes outside printable ASCII (newlines among
/// them) become \xNN.
std::string printable(std::string_view text) {
  std::string result;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      result.push_back(c);
    } else {
      result += fmt::format("\\x{:02X}", byte);
    }
  }
  return result;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool is_text_char(char c) {
  if (is_digit(c) || is_blank(c) || c == '\n') return true;
  switch (c) {
    case '+':
    case '-':
    case '.':
    case 'e':
    case 'E':
    case 'n':
    case 'N':
    case 'a':
    case 'A':
    case 'i':
    case 'I':
    case 'f':
    case 'F':
    case 't':
    case 'T':
    case 'y':
    case 'Y':
      return true;
    default:
      return false;
  }
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// The dtype string numpy writes for a type ('|i1', '<i4', '<f8', ...).
std::string npy_descr(KeyType type) {
  return visit_key_type(type, [](auto tag) {
    using K = typename decltype(tag)::type;
    const char kind = std::is_floating_point_v<K> ? 'f' : std::is_signed_v<K> ? 'i' : 'u';
    return fmt::format("{}{}{}", sizeof(K) == 1 ? '|' : '<', kind, sizeof(K));
  });
}

KeyType npy_type_from_descr(std::string_view descr, std::string_view name) {
  if (!descr.empty() && descr.front() == '>' && descr.size() > 2 && descr.substr(2) != "1") {
    throw AppError(fmt::format("{}: big-endian npy data ('{}') is not supported; convert it with a.astype('<{}')", name,
                               printable(descr), printable(descr.substr(1))));
  }
  for (KeyType type : all_key_types) {
    const std::string expected = npy_descr(type);
    // One-byte types have no byte order, and numpy spells that '|' though '<', '>' and '=' mean the same.
    if (descr == expected || (descr.size() == 3 && expected.front() == '|' && descr.substr(1) == expected.substr(1)) ||
        (descr.size() == 3 && descr.front() == '=' && descr.substr(1) == expected.substr(1))) {
      return type;
    }
  }
  throw AppError(
      fmt::format("{}: unsupported npy dtype '{}' (supported: integers of 1 to 8 bytes, f4, f8)", name,
                  printable(descr)));
}

[[noreturn]] void throw_not_whole_elements(size_t bytes, KeyType type, std::string_view name) {
  throw AppError(
      fmt::format("{}: {} bytes is not a whole number of {} values ({} bytes each); is the file truncated "
                  "or the --type wrong?",
                  name, bytes, key_type_name(type), key_type_size(type)));
}

/// A value of the Python literal that an npy header holds, as numpy's reader (ast.literal_eval) sees it.
struct PyValue {
  enum Kind { String, Int, Name, Tuple, List, Dict } kind = Name;
  std::string_view text;          // the value as written: for messages, and a string's or int's content
  std::vector<PyValue> items;     // of a tuple or list; of a dict, key and value alternately
};

/// Parses the Python literal of an npy header: a dict of strings, ints, names, tuples and lists, the subset numpy
/// writes and ast.literal_eval reads (no escapes, no expressions). Throws AppError saying what is malformed.
class PyLiteralParser {
 public:
  PyLiteralParser(std::string_view text, bool long_ints, std::string_view name)
      : text_(text), long_ints_(long_ints), name_(name) {}

  /// The whole text: one value, then only whitespace.
  PyValue parse() {
    PyValue value = parse_value(0);
    skip_space();
    if (at_ < text_.size()) fail("text after the dictionary");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    // The header is quoted (its padding left off, at most 200 characters) so the mistake can be seen.
    std::string_view quoted = text_;
    while (!quoted.empty() && (is_blank(quoted.back()) || quoted.back() == '\n')) quoted.remove_suffix(1);
    const bool cut = quoted.size() > 200;
    throw AppError(fmt::format("{}: malformed npy header ({} at byte {}): {}{}", name_, what, at_,
                               printable(quoted.substr(0, 200)), cut ? "..." : ""));
  }
  void skip_space() {
    while (at_ < text_.size() && (is_blank(text_[at_]) || text_[at_] == '\n')) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
  }

  PyValue parse_value(int depth) {
    if (depth > 32) fail("nesting too deep");
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    const size_t begin = at_;
    const char c = text_[at_];
    PyValue value;
    if (c == '\'' || c == '"') {
      // A string ends at its own quote; its content is checked where it is used (a dtype, a key).
      const size_t close = text_.find(c, at_ + 1);
      if (close == std::string_view::npos) fail("a string without its closing quote");
      if (text_.substr(at_ + 1, close - at_ - 1).find('\\') != std::string_view::npos) fail("an escape in a string");
      value.kind = PyValue::String;
      value.text = text_.substr(at_ + 1, close - at_ - 1);
      at_ = close + 1;
      return value;
    }
    if (is_digit(c)) {
      while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
      value.kind = PyValue::Int;
      value.text = text_.substr(begin, at_ - begin);
      // Python 3 has no leading zeros ("007"); Python 2 wrote longs as "3L", which numpy reads in versions 1 and 2.
      if (value.text.size() > 1 && value.text.front() == '0') fail("an integer with a leading zero");
      if (long_ints_ && at_ < text_.size() && (text_[at_] == 'L' || text_[at_] == 'l')) ++at_;
      if (at_ < text_.size() && is_name_char(text_[at_])) fail("a malformed integer");
      return value;
    }
    if (is_name_char(c)) {
      while (at_ < text_.size() && is_name_char(text_[at_])) ++at_;
      value.kind = PyValue::Name;
      value.text = text_.substr(begin, at_ - begin);
      if (value.text != "True" && value.text != "False" && value.text != "None") fail("an unknown name");
      return value;
    }
    if (c == '(' || c == '[' || c == '{') {
      const char close = c == '(' ? ')' : c == '[' ? ']' : '}';
      value.kind = c == '(' ? PyValue::Tuple : c == '[' ? PyValue::List : PyValue::Dict;
      ++at_;
      bool comma = false;  // a comma after the last item
      while (!take(close)) {
        if (!value.items.empty() && !comma) fail(fmt::format("expected ',' or '{}'", close));
        value.items.push_back(parse_value(depth + 1));
        if (value.kind == PyValue::Dict) {
          if (!take(':')) fail("expected ':' after a key");
          value.items.push_back(parse_value(depth + 1));
        }
        comma = take(',');
      }
      // "(3)" is the number 3 in parentheses, not a tuple: numpy says the shape is not valid.
      if (value.kind == PyValue::Tuple && value.items.size() == 1 && !comma) {
        PyValue inner = std::move(value.items.front());
        inner.text = text_.substr(begin, at_ - begin);
        return inner;
      }
      value.text = text_.substr(begin, at_ - begin);
      return value;
    }
    fail(fmt::format("unexpected '{}'", printable(std::string_view(&c, 1))));
  }

  std::string_view text_;
  bool long_ints_;
  std::string_view name_;
  size_t at_ = 0;
};

size_t npy_count_from_shape(const PyValue& shape, std::string_view name) {
  if (shape.kind != PyValue::Tuple ||
      !std::all_of(shape.items.begin(), shape.items.end(), [](const PyValue& v) { return v.kind == PyValue::Int; })) {
    throw AppError(fmt::format("{}: malformed npy shape {} (not a tuple of integers)", name, printable(shape.text)));
  }
  std::vector<size_t> dims;
  for (const PyValue& item : shape.items) {
    size_t dim = 0;
    const auto [end, error] = std::from_chars(item.text.data(), item.text.data() + item.text.size(), dim);
    if (error == std::errc::result_out_of_range) {
      throw AppError(fmt::format("{}: the npy shape {} is too large", name, printable(shape.text)));
    }
    if (error != std::errc() || end != item.text.data() + item.text.size()) {
      throw AppError(fmt::format("{}: malformed npy shape {}", name, printable(shape.text)));
    }
    dims.push_back(dim);
  }
  if (dims.size() != 1) {
    throw AppError(
        fmt::format("{}: the array has shape {}; only 1-D arrays can be sorted", name, printable(shape.text)));
  }
  return dims[0];
}

/// How parsing one piece of text went.
struct ParsedPiece {
  size_t values = 0;
  bool failed = false;
  bool out_of_range = false;
  size_t failed_line = 0;  // counted from the piece's first line
  std::string failed_token;
};

/// std::from_chars, reading numbers as numpy does where it differs: "-0" is 0 for an unsigned type (any other negative
/// number is out of range), and a float too small for its type rounds to a denormal or to zero.
template <class K>
std::from_chars_result parse_number(const char* first, const char* last, K& value) {
  if constexpr (std::is_unsigned_v<K>) {
    if (first < last && *first == '-') {
      std::from_chars_result result = std::from_chars(first + 1, last, value);
      if (result.ec == std::errc() && value != 0) result.ec = std::errc::result_out_of_range;
      return result;
    }
  }
  std::from_chars_result result = std::from_chars(first, last, value);
  if constexpr (std::is_floating_point_v<K>) {
    if (result.ec == std::errc::result_out_of_range) {
      // from_chars reports underflow as it does overflow; strtof/strtod round it correctly and leave only overflow
      // infinite. (Rare, so copying the token to terminate it costs nothing that matters.)
      const std::string token(first, result.ptr);
      K rounded;
      if constexpr (std::is_same_v<K, float>) {
        rounded = std::strtof(token.c_str(), nullptr);
      } else {
        rounded = std::strtod(token.c_str(), nullptr);
      }
      if (!std::isinf(rounded)) {
        value = rounded;
        result.ec = std::errc();
      }
    }
  }
  return result;
}

/// Parses the lines of `piece` into `out`, which has room for one value per line; stops at the first bad line.
template <class K>
void parse_piece(std::string_view piece, K* out, ParsedPiece& result) {
  const char* cursor = piece.data();
  const char* const end = piece.data() + piece.size();
  size_t stored = 0;
  for (size_t line = 0; cursor < end; ++line) {
    const char* first = cursor;
    while (first < end && is_blank(*first)) ++first;
    if (first == end) break;
    if (*first == '\n') {
      cursor = first + 1;
      continue;
    }
    // from_chars takes a leading minus only; a plus sign is allowed in front of a number.
    const char* number = first;
    if (*number == '+' && end - number > 1 && number[1] != '-' && number[1] != '+') ++number;
    K value{};
    const auto [parsed_end, error] = parse_number(number, end, value);
    const char* after = parsed_end;
    while (after < end && is_blank(*after)) ++after;
    if (error == std::errc() && (after == end || *after == '\n')) {
      out[stored++] = value;
      cursor = after + 1;
      continue;
    }
    const char* line_end = static_cast<const char*>(std::memchr(first, '\n', static_cast<size_t>(end - first)));
    const char* last = line_end ? line_end : end;
    while (last > first && is_blank(last[-1])) --last;
    result.failed = true;
    result.out_of_range = error == std::errc::result_out_of_range && parsed_end == last;
    result.failed_line = line;
    result.failed_token.assign(first, std::min<size_t>(static_cast<size_t>(last - first), 40));
    break;
  }
  result.values = stored;
}

/// Splits text into about `pieces` runs of whole lines.
std::vector<std::string_view> split_lines(std::string_view text, size_t pieces) {
  std::vector<std::string_view> result;
  const size_t target = std::max<size_t>(text.size() / std::max<size_t>(pieces, 1), 1);
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.size(), begin + target);
    if (end < text.size()) {
      const size_t newline = text.find('\n', end - 1);
      end = newline == std::string_view::npos ? text.size() : newline + 1;
    }
    result.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return result;
}

size_t count_newlines(std::string_view text) {
  size_t count = 0;
  for (const char c : text) count += c == '\n';
  return count;
}

template <class K>
Column parse_text_as(std::string_view text, unsigned threads, std::string_view name, size_t lines_before,
                     size_t* newlines_in_text) {
  const std::vector<std::string_view> pieces = split_lines(text, size_t(threads) * 4);
  // Each line holds at most one value: count the lines of every piece to know where its values go.
  std::vector<size_t> newlines(pieces.size());
  parallel_for(pieces.size(), threads, [&](size_t i) { newlines[i] = count_newlines(pieces[i]); });
  std::vector<size_t> offsets(pieces.size());
  size_t room = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    offsets[i] = room;
    room += newlines[i] + (pieces[i].back() == '\n' ? 0 : 1);
  }
  // Left uninitialized: the parsing threads write (and fault in) their own parts.
  std::shared_ptr<K[]> values(new K[std::max<size_t>(room, 1)]);
  std::vector<ParsedPiece> parsed(pieces.size());
  parallel_for(pieces.size(), threads, [&](size_t i) { parse_piece(pieces[i], values.get() + offsets[i], parsed[i]); });

  size_t total = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (parsed[i].failed) {
      const size_t line = lines_before + parsed[i].failed_line + 1;
      const std::string token = printable(parsed[i].failed_token);
      if (parsed[i].out_of_range) {
        throw AppError(fmt::format("{}:{}: '{}' is out of range for {}", name, line, token,
                                   key_type_name(key_type_of<K>())));
      }
      throw AppError(fmt::format("{}:{}: '{}' is not a valid {} number", name, line, token,
                                 key_type_name(key_type_of<K>())));
    }
    lines_before += newlines[i];
    // Blank lines leave gaps; close them (nothing moves for text without blank lines).
    if (offsets[i] != total) std::memmove(values.get() + total, values.get() + offsets[i], parsed[i].values * sizeof(K));
    total += parsed[i].values;
  }
  if (newlines_in_text) *newlines_in_text = std::accumulate(newlines.begin(), newlines.end(), size_t(0));
  K* data = values.get();
  return Column{key_type_of<K>(), total, data, std::shared_ptr<const void>(values, data)};
}

/// Splits `count` elements into runs for the printing threads; at least `min_items` each.
constexpr size_t min_print_items = size_t(1) << 16;

template <class K>
void print_as(const K* keys, size_t count, unsigned threads, std::vector<std::unique_ptr<char[]>>& buffers,
              std::vector<size_t>& capacities, std::vector<std::string_view>& pieces) {
  const size_t max_chars = max_text_line(key_type_of<K>());
  const size_t runs = std::clamp<size_t>(count / min_print_items, 1, threads);
  const size_t run_items = (count + runs - 1) / runs;
  if (buffers.size() < runs) {
    buffers.resize(runs);
    capacities.resize(runs, 0);
  }
  pieces.assign(count == 0 ? 0 : runs, std::string_view{});
  parallel_for(pieces.size(), threads, [&](size_t run) {
    const size_t begin = std::min(count, run * run_items);
    const size_t end = std::min(count, begin + run_items);
    const size_t needed = (end - begin) * max_chars;
    if (capacities[run] < needed) {
      buffers[run].reset(new char[needed]);
      capacities[run] = needed;
    }
    char* const text = buffers[run].get();
    char* out = text;
    for (size_t i = begin; i < end; ++i) {
      out = std::to_chars(out, out + max_chars, keys[i]).ptr;
      *out++ = '\n';
    }
    pieces[run] = std::string_view(text, static_cast<size_t>(out - text));
  });
}

}  // namespace

std::string_view format_name(Format format) {
  switch (format) {
    case Format::Binary:
      return "bin";
    case Format::Text:
      return "text";
    case Format::Npy:
      return "npy";
    case Format::Auto:
      break;
  }
  return "auto";
}

std::optional<Format> parse_format(std::string_view name) {
  for (Format format : {Format::Auto, Format::Binary, Format::Text, Format::Npy}) {
    if (format_name(format) == name) return format;
  }
  return std::nullopt;
}

bool has_npy_magic(std::string_view bytes) { return bytes.substr(0, npy_magic.size()) == npy_magic; }

Format detect_format(std::string_view path, std::string_view bytes) {
  // An .npy name without the magic is read as npy too, so that the parser says it is not one.
  if (has_npy_magic(bytes) || ends_with(path, ".npy")) return Format::Npy;
  for (std::string_view extension : {".txt", ".csv", ".tsv", ".text"}) {
    if (ends_with(path, extension)) return Format::Text;
  }
  // Binary data may happen to look like text (bytes such as '1', '\n', 'e'); the name settles it.
  for (std::string_view extension : {".bin", ".raw", ".dat"}) {
    if (ends_with(path, extension)) return Format::Binary;
  }
  const std::string_view head = without_bom(bytes).substr(0, size_t(64) << 10);
  // Text holds at least one number, so at least one digit: only whitespace (or "nan" alone) stays binary.
  if (std::all_of(head.begin(), head.end(), is_text_char) && std::any_of(head.begin(), head.end(), is_digit))
    return Format::Text;
  return Format::Binary;
}

Format resolve_format(Format format, std::string_view path, std::string_view bytes) {
  return format == Format::Auto ? detect_format(path, bytes) : format;
}

NpyHeader parse_npy_header(std::string_view head, size_t file_bytes, std::string_view name) {
  if (!has_npy_magic(head)) throw AppError(fmt::format("{}: not a NumPy .npy file (no \\x93NUMPY magic)", name));
  if (head.size() < 10) throw AppError(fmt::format("{}: truncated npy header", name));
  const auto byte_at = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(head[i])); };
  const size_t major = byte_at(6);
  const size_t minor = byte_at(7);
  // numpy reads and writes versions 1.0, 2.0 and 3.0 only.
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    throw AppError(fmt::format("{}: unsupported npy format version {}.{} (numpy's are 1.0, 2.0 and 3.0)", name, major,
                               minor));
  }
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = byte_at(8) | byte_at(9) << 8;
    header_start = 10;
  } else {
    if (head.size() < 12) throw AppError(fmt::format("{}: truncated npy header", name));
    header_length = byte_at(8) | byte_at(9) << 8 | byte_at(10) << 16 | byte_at(11) << 24;
    header_start = 12;
  }
  if (file_bytes < header_start + header_length) throw AppError(fmt::format("{}: truncated npy header", name));
  if (header_start + header_length > max_npy_header_bytes || head.size() < header_start + header_length) {
    throw AppError(fmt::format("{}: the npy header is {} bytes long, more than the {} this program reads", name,
                               header_length, max_npy_header_bytes));
  }
  const std::string_view dict_text = head.substr(header_start, header_length);

  // A Python dict literal with exactly the keys 'descr', 'fortran_order' and 'shape', then only padding.
  const PyValue dict = PyLiteralParser(dict_text, major < 3, name).parse();
  if (dict.kind != PyValue::Dict) {
    throw AppError(fmt::format("{}: malformed npy header (not a dictionary): {}", name, printable(dict.text)));
  }
  const PyValue* descr = nullptr;
  const PyValue* fortran_order = nullptr;
  const PyValue* shape = nullptr;
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    const PyValue* const value = &dict.items[i + 1];
    if (key.kind == PyValue::String && key.text == "descr") {
      descr = value;
    } else if (key.kind == PyValue::String && key.text == "fortran_order") {
      fortran_order = value;
    } else if (key.kind == PyValue::String && key.text == "shape") {
      shape = value;
    } else {
      throw AppError(fmt::format("{}: the npy header has the unexpected key {} (numpy's are 'descr', "
                                 "'fortran_order' and 'shape')",
                                 name, printable(key.kind == PyValue::String ? "'" + std::string(key.text) + "'"
                                                                             : std::string(key.text))));
    }
  }
  for (const auto& [value, key] : {std::pair{descr, "descr"}, std::pair{fortran_order, "fortran_order"},
                                   std::pair{shape, "shape"}}) {
    if (!value) throw AppError(fmt::format("{}: the npy header has no '{}'", name, key));
  }

  NpyHeader header;
  if (descr->kind != PyValue::String) {
    throw AppError(fmt::format("{}: unsupported npy dtype {} (structured arrays are not supported)", name,
                               printable(descr->text)));
  }
  header.type = npy_type_from_descr(descr->text, name);
  if (fortran_order->kind == PyValue::Name && fortran_order->text == "True") {
    throw AppError(
        fmt::format("{}: Fortran-ordered npy arrays are not supported; save with fortran_order=False", name));
  }
  if (fortran_order->kind != PyValue::Name || fortran_order->text != "False") {
    throw AppError(fmt::format("{}: malformed npy fortran_order {}", name, printable(fortran_order->text)));
  }
  header.count = npy_count_from_shape(*shape, name);
  header.data_offset = header_start + header_length;

  const size_t element = key_type_size(header.type);
  // The size in bytes must be computable before it is compared or printed.
  if (header.count > std::numeric_limits<size_t>::max() / element) {
    throw AppError(fmt::format("{}: the npy shape ({},) is too large", name, header.count));
  }
  const size_t data_bytes = file_bytes - header.data_offset;
  if (data_bytes != header.count * element) {
    throw AppError(fmt::format("{}: the npy header promises {} values ({} bytes) but {} bytes of data follow", name,
                               header.count, header.count * element, data_bytes));
  }
  return header;
}

NpyHeader parse_npy_header(std::string_view bytes, std::string_view name) {
  return parse_npy_header(bytes, bytes.size(), name);
}

std::string make_npy_header(KeyType type, size_t count) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}", npy_descr(type), count);
  constexpr size_t prefix = 10;  // magic, version, 2-byte length
  constexpr size_t alignment = 64;
  const size_t unpadded = prefix + dict.size() + 1;
  dict.append((alignment - unpadded % alignment) % alignment, ' ');
  dict.push_back('\n');
  std::string header(npy_magic);
  header.push_back('\x01');
  header.push_back('\x00');
  header.push_back(static_cast<char>(dict.size() & 0xff));
  header.push_back(static_cast<char>(dict.size() >> 8));
  return header + dict;
}

Column binary_column(std::string_view bytes, KeyType type, std::string_view name, std::shared_ptr<const void> owner) {
  const size_t element = key_type_size(type);
  if (bytes.size() % element != 0) throw_not_whole_elements(bytes.size(), type, name);
  Column column{type, bytes.size() / element, bytes.data(), std::move(owner)};
  if (reinterpret_cast<uintptr_t>(bytes.data()) % element != 0) {
    auto aligned = std::make_shared<std::vector<uint64_t>>((bytes.size() + 7) / 8);
    std::memcpy(aligned->data(), bytes.data(), bytes.size());
    column.data = aligned->data();
    column.owner = aligned;
  }
  return column;
}

Column parse_text(std::string_view text, KeyType type, unsigned threads, std::string_view name,
                  size_t lines_before, size_t* newlines) {
  return visit_key_type(type, [&](auto tag) {
    return parse_text_as<typename decltype(tag)::type>(without_bom(text), threads, name, lines_before, newlines);
  });
}

size_t max_text_line(KeyType type) {
  // Longest forms: "-9223372036854775808", "-2.2250738585072014e-308", "-1.17549435e-38"; plus the newline.
  return visit_key_type(type, [](auto tag) -> size_t {
    using K = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<K>) {
      return sizeof(K) == 4 ? 16 : 25;
    } else {
      return std::numeric_limits<K>::digits10 + 1 + (std::is_signed_v<K> ? 1 : 0) + 1;
    }
  });
}

const std::vector<std::string_view>& TextPrinter::print(const void* data, size_t count) {
  visit_key_type(type_, [&](auto tag) {
    using K = typename decltype(tag)::type;
    print_as(static_cast<const K*>(data), count, threads_, buffers_, capacities_, pieces_);
  });
  return pieces_;
}

void format_text(const void* data, KeyType type, size_t count, unsigned threads,
                 const std::function<void(std::string_view)>& sink) {
  TextPrinter printer(type, threads);
  const size_t element = key_type_size(type);
  const size_t round_items = size_t(threads) << 20;
  for (size_t first = 0; first < count; first += round_items) {
    const size_t items = std::min(round_items, count - first);
    for (std::string_view piece : printer.print(static_cast<const char*>(data) + first * element, items)) sink(piece);
  }
}

size_t text_line_of_value(std::string_view text, size_t index) {
  size_t line = 1;
  size_t values_seen = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view content = text.substr(begin, end - begin);
    if (!std::all_of(content.begin(), content.end(), is_blank)) {
      if (values_seen++ == index) return line;
    }
    ++line;
    begin = end + 1;
  }
  return line;
}

ColumnShape describe_column(std::string_view head, size_t file_bytes, Format format, std::optional<KeyType> type,
                            std::string_view name) {
  ColumnShape shape;
  shape.format = resolve_format(format, name, head);
  shape.type = type.value_or(KeyType::I32);
  if (shape.format == Format::Npy) {
    const NpyHeader header = parse_npy_header(head, file_bytes, name);
    if (type && *type != header.type) {
      throw AppError(fmt::format("{}: --type {} does not match the npy dtype {}", name, key_type_name(*type),
                                 key_type_name(header.type)));
    }
    shape.type = header.type;
    shape.count = header.count;
    shape.data_offset = header.data_offset;
  } else if (shape.format == Format::Binary) {
    const size_t element = key_type_size(shape.type);
    if (file_bytes % element != 0) throw_not_whole_elements(file_bytes, shape.type, name);
    shape.count = file_bytes / element;
  }
  return shape;
}

ColumnShape describe_column(std::string_view bytes, Format format, std::optional<KeyType> type,
                            std::string_view name) {
  return describe_column(bytes, bytes.size(), format, type, name);
}

Column load_column(std::string_view bytes, Format format, std::optional<KeyType> type, unsigned threads,
                   std::string_view name, std::shared_ptr<const void> owner) {
  const ColumnShape shape = describe_column(bytes, format, type, name);
  if (shape.format == Format::Text) return parse_text(bytes, shape.type, threads, name);
  return binary_column(bytes.substr(shape.data_offset), shape.type, name, std::move(owner));
}

}  // namespace radix_sort
