#include "formats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
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

/// The value after `'key':` in an npy header dictionary, up to the next top-level comma or closing brace.
std::string_view dict_value(std::string_view dict, std::string_view key, std::string_view name) {
  size_t at = dict.find(fmt::format("'{}'", key));
  if (at == std::string_view::npos) at = dict.find(fmt::format("\"{}\"", key));
  if (at == std::string_view::npos) throw AppError(fmt::format("{}: the npy header has no '{}'", name, key));
  at = dict.find(':', at);
  if (at == std::string_view::npos) throw AppError(fmt::format("{}: malformed npy header", name));
  ++at;
  while (at < dict.size() && is_blank(dict[at])) ++at;
  int depth = 0;
  size_t end = at;
  for (; end < dict.size(); ++end) {
    const char c = dict[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string_view value = dict.substr(at, end - at);
  while (!value.empty() && is_blank(value.back())) value.remove_suffix(1);
  return value;
}

KeyType npy_type_from_descr(std::string_view quoted, std::string_view name) {
  if (quoted.size() < 2 || (quoted.front() != '\'' && quoted.front() != '"')) {
    throw AppError(
        fmt::format("{}: unsupported npy dtype {} (structured arrays are not supported)", name, printable(quoted)));
  }
  const std::string_view descr = quoted.substr(1, quoted.size() - 2);
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

size_t npy_count_from_shape(std::string_view shape, std::string_view name) {
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
    throw AppError(fmt::format("{}: malformed npy shape {}", name, printable(shape)));
  }
  std::vector<size_t> dims;
  std::string_view rest = shape.substr(1, shape.size() - 2);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    while (!item.empty() && is_blank(item.front())) item.remove_prefix(1);
    while (!item.empty() && (is_blank(item.back()) || item.back() == 'L')) item.remove_suffix(1);
    if (item.empty()) continue;
    size_t dim = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), dim);
    if (error == std::errc::result_out_of_range) {
      throw AppError(fmt::format("{}: the npy shape {} is too large", name, printable(shape)));
    }
    if (error != std::errc() || end != item.data() + item.size()) {
      throw AppError(fmt::format("{}: malformed npy shape {}", name, printable(shape)));
    }
    dims.push_back(dim);
  }
  if (dims.size() != 1) {
    throw AppError(
        fmt::format("{}: the array has shape {}; only 1-D arrays can be sorted", name, printable(shape)));
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
Column parse_text_as(std::string_view text, unsigned threads, std::string_view name, size_t lines_before) {
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

NpyHeader parse_npy_header(std::string_view bytes, std::string_view name) {
  if (!has_npy_magic(bytes)) throw AppError(fmt::format("{}: not a NumPy .npy file (no \\x93NUMPY magic)", name));
  if (bytes.size() < 10) throw AppError(fmt::format("{}: truncated npy header", name));
  const auto byte_at = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(bytes[i])); };
  const size_t major = byte_at(6);
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = byte_at(8) | byte_at(9) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw AppError(fmt::format("{}: truncated npy header", name));
    header_length = byte_at(8) | byte_at(9) << 8 | byte_at(10) << 16 | byte_at(11) << 24;
    header_start = 12;
  } else {
    throw AppError(fmt::format("{}: unsupported npy format version {}.{}", name, major, byte_at(7)));
  }
  if (bytes.size() < header_start + header_length) throw AppError(fmt::format("{}: truncated npy header", name));
  const std::string_view dict = bytes.substr(header_start, header_length);

  NpyHeader header;
  header.type = npy_type_from_descr(dict_value(dict, "descr", name), name);
  const std::string_view fortran_order = dict_value(dict, "fortran_order", name);
  if (fortran_order == "True") {
    throw AppError(
        fmt::format("{}: Fortran-ordered npy arrays are not supported; save with fortran_order=False", name));
  }
  if (fortran_order != "False") {
    throw AppError(fmt::format("{}: malformed npy fortran_order {}", name, printable(fortran_order)));
  }
  header.count = npy_count_from_shape(dict_value(dict, "shape", name), name);
  header.data_offset = header_start + header_length;

  const size_t element = key_type_size(header.type);
  // The size in bytes must be computable before it is compared or printed.
  if (header.count > std::numeric_limits<size_t>::max() / element) {
    throw AppError(fmt::format("{}: the npy shape ({},) is too large", name, header.count));
  }
  const size_t data_bytes = bytes.size() - header.data_offset;
  if (data_bytes != header.count * element) {
    throw AppError(fmt::format("{}: the npy header promises {} values ({} bytes) but {} bytes of data follow", name,
                               header.count, header.count * element, data_bytes));
  }
  return header;
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
  if (bytes.size() % element != 0) {
    throw AppError(
        fmt::format("{}: {} bytes is not a whole number of {} values ({} bytes each); is the file truncated "
                    "or the --type wrong?",
                    name, bytes.size(), key_type_name(type), element));
  }
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
                  size_t lines_before) {
  return visit_key_type(type, [&](auto tag) {
    return parse_text_as<typename decltype(tag)::type>(without_bom(text), threads, name, lines_before);
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

ColumnShape describe_column(std::string_view bytes, Format format, std::optional<KeyType> type,
                            std::string_view name) {
  ColumnShape shape;
  shape.format = resolve_format(format, name, bytes);
  shape.type = type.value_or(KeyType::I32);
  if (shape.format == Format::Npy) {
    const NpyHeader header = parse_npy_header(bytes, name);
    if (type && *type != header.type) {
      throw AppError(fmt::format("{}: --type {} does not match the npy dtype {}", name, key_type_name(*type),
                                 key_type_name(header.type)));
    }
    shape.type = header.type;
    shape.count = header.count;
    shape.data_offset = header.data_offset;
  } else if (shape.format == Format::Binary) {
    // A view (the bytes of a mapped file or of stdin are aligned): it only checks the size.
    shape.count = binary_column(bytes, shape.type, name).count;
  }
  return shape;
}

Column load_column(std::string_view bytes, Format format, std::optional<KeyType> type, unsigned threads,
                   std::string_view name, std::shared_ptr<const void> owner) {
  const ColumnShape shape = describe_column(bytes, format, type, name);
  if (shape.format == Format::Text) return parse_text(bytes, shape.type, threads, name);
  return binary_column(bytes.substr(shape.data_offset), shape.type, name, std::move(owner));
}

}  // namespace radix_sort
