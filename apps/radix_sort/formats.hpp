#pragma once
// The three file formats: raw little-endian binary, text (one number per line) and NumPy .npy.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "key_type.hpp"

namespace radix_sort {

enum class Format { Auto, Binary, Text, Npy };

/// "auto", "bin", "text" or "npy".
std::string_view format_name(Format format);

/// The format named `name`, or nothing.
std::optional<Format> parse_format(std::string_view name);

/// A typed array of elements: a view into a mapped file or an owned buffer kept alive by `owner`.
struct Column {
  KeyType type = KeyType::I32;
  size_t count = 0;
  const void* data = nullptr;
  std::shared_ptr<const void> owner;

  /// The elements as K (K must be the C++ type of `type`).
  template <class K>
  const K* as() const {
    return static_cast<const K*>(data);
  }
  size_t bytes() const { return count * key_type_size(type); }
};

/// Picks the format of an input: npy by its magic or a .npy extension (without the magic, reading it then fails);
/// text by extension (.txt, .csv, .tsv, .text); binary by extension (.bin, .raw, .dat); otherwise text by content
/// (after a UTF-8 byte order mark, only digits, signs, points, exponents, nan/inf letters and whitespace in the first
/// 64 KiB, and at least one digit), else binary. So an empty file, or one of only whitespace, is binary.
Format detect_format(std::string_view path, std::string_view bytes);

/// True where `bytes` start with the NumPy magic "\x93NUMPY".
bool has_npy_magic(std::string_view bytes);

/// What an .npy header says.
struct NpyHeader {
  KeyType type = KeyType::I32;
  size_t count = 0;
  size_t data_offset = 0;
};

/// The longest .npy header (magic, version, length and dictionary) read; numpy itself refuses more than 10000
/// bytes of dictionary unless told otherwise.
inline constexpr size_t max_npy_header_bytes = size_t(1) << 20;

/// Parses the header of an .npy file as numpy does and checks that the data that follows has the size the header
/// promises: the magic, a version of 1.0, 2.0 or 3.0, the header's length (2 bytes little-endian for 1.0, 4 for 2.0
/// and 3.0), then a Python dict literal with exactly the keys 'descr', 'fortran_order' and 'shape' (in any order,
/// either quotes, a trailing comma allowed; 'shape' a tuple of integers, written "3L" too before 3.0) and only
/// whitespace after it. Throws AppError with one line for anything else, big-endian or unsupported dtypes, Fortran
/// order, shapes that are not 1-D, and truncated files. `name` is used in messages.
NpyHeader parse_npy_header(std::string_view bytes, std::string_view name);
/// The same for a file of `file_bytes` bytes of which `head` holds the first (at least the whole header).
NpyHeader parse_npy_header(std::string_view head, size_t file_bytes, std::string_view name);

/// The header of a 1-D little-endian .npy array of `count` elements, padded so the data starts 64-byte aligned.
std::string make_npy_header(KeyType type, size_t count);

/// Interprets `bytes` as little-endian binary elements of `type`, without copying where they are aligned.
/// Throws AppError when the size is not a whole number of elements.
Column binary_column(std::string_view bytes, KeyType type, std::string_view name,
                     std::shared_ptr<const void> owner = nullptr);

/// Parses text with one number per line (a leading UTF-8 byte order mark, surrounding whitespace and blank lines
/// allowed, optional sign, decimal; floats also in exponent, inf and nan forms) on up to `threads` threads. As numpy
/// does, "-0" is 0 for unsigned types and floats too small for `type` round to a denormal or zero. Throws AppError
/// naming the line of the first value that is not a number or does not fit `type`; `lines_before` is added to the
/// line numbers (text that continues a file's earlier lines). Where `newlines` is given, it receives the number of
/// newlines in `text` (counted in the parse anyway).
Column parse_text(std::string_view text, KeyType type, unsigned threads, std::string_view name,
                  size_t lines_before = 0, size_t* newlines = nullptr);

/// Prints `count` elements of `type`, one per line, on up to `threads` threads; the text is handed to `sink` in
/// large pieces, in order. Floats print in the shortest form that reads back to the same value.
void format_text(const void* data, KeyType type, size_t count, unsigned threads,
                 const std::function<void(std::string_view)>& sink);

/// The longest line, newline included, that printing one element of `type` makes.
size_t max_text_line(KeyType type);

/// Prints elements one per line on several threads into buffers it keeps from call to call.
/// Example:
///   TextPrinter printer(KeyType::I32, 16);
///   for (std::string_view piece : printer.print(keys, count)) out.write(piece);
class TextPrinter {
 public:
  TextPrinter(KeyType type, unsigned threads) : type_(type), threads_(std::max(threads, 1u)) {}
  /// Prints `count` elements of `data`: the text, in order, as pieces valid until the next call.
  const std::vector<std::string_view>& print(const void* data, size_t count);

 private:
  KeyType type_;
  unsigned threads_;
  std::vector<std::unique_ptr<char[]>> buffers_;
  std::vector<size_t> capacities_;
  std::vector<std::string_view> pieces_;
};

/// The 1-based line of the `index`-th value of a text input (blank lines hold no value).
size_t text_line_of_value(std::string_view text, size_t index);

/// What an input holds, known without reading its elements.
struct ColumnShape {
  Format format = Format::Binary;  // resolved
  KeyType type = KeyType::I32;
  std::optional<size_t> count;     // binary and npy; text says it only once parsed
  size_t data_offset = 0;          // where the elements start (after an npy header)
};

/// Resolves the format and checks what can be checked without reading the elements (the npy header and its
/// dtype against `type`, a binary file's size): the same errors as load_column. Throws AppError.
ColumnShape describe_column(std::string_view bytes, Format format, std::optional<KeyType> type,
                            std::string_view name);
/// The same for a file of `file_bytes` bytes of which `head` holds the first (enough to detect the format, and any
/// npy header whole).
ColumnShape describe_column(std::string_view head, size_t file_bytes, Format format, std::optional<KeyType> type,
                            std::string_view name);

/// Reads `bytes` in the given format (Auto detects it). Binary and text take `type`, i32 when not given; npy takes
/// the type from its header, and a `type` given must match it. Throws AppError.
Column load_column(std::string_view bytes, Format format, std::optional<KeyType> type, unsigned threads,
                   std::string_view name, std::shared_ptr<const void> owner = nullptr);

/// The format an input resolves to (Auto replaced by what detect_format finds).
Format resolve_format(Format format, std::string_view path, std::string_view bytes);

}  // namespace radix_sort
