// Host-only tests of radix_sort's file formats: npy headers, binary, text parsing and printing, detection.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "errors.hpp"
#include "formats.hpp"

namespace radix_sort {
namespace {

/// The message of the AppError `call` throws ("" when it throws none).
template <class Call>
std::string error_of(Call call) {
  try {
    call();
  } catch (const AppError& error) {
    return error.what();
  }
  return "";
}

std::string npy_file(std::string_view dict, int major = 1) {
  std::string header(dict);
  header.push_back('\n');
  std::string file = "\x93NUMPY";
  file.push_back(static_cast<char>(major));
  file.push_back('\0');
  const size_t length = header.size();
  file.push_back(static_cast<char>(length & 0xff));
  file.push_back(static_cast<char>(length >> 8));
  if (major >= 2) {
    file.push_back('\0');
    file.push_back('\0');
  }
  return file + header;
}

TEST(NpyHeader, RoundTripsEveryType) {
  for (KeyType type : all_key_types) {
    for (size_t count : {0, 1, 5}) {
      const std::string header = make_npy_header(type, count);
      EXPECT_EQ(header.size() % 64, 0u);
      EXPECT_EQ(header.back(), '\n');
      const NpyHeader parsed = parse_npy_header(header + std::string(count * key_type_size(type), '\0'), "x.npy");
      EXPECT_EQ(parsed.type, type) << key_type_name(type);
      EXPECT_EQ(parsed.count, count);
      EXPECT_EQ(parsed.data_offset, header.size());
    }
  }
  EXPECT_NE(make_npy_header(KeyType::I32, 12345678901).find("(12345678901,)"), std::string::npos);
}

TEST(NpyHeader, WritesNumpyDtypeNames) {
  EXPECT_NE(make_npy_header(KeyType::I8, 3).find("'descr': '|i1'"), std::string::npos);
  EXPECT_NE(make_npy_header(KeyType::U16, 3).find("'descr': '<u2'"), std::string::npos);
  EXPECT_NE(make_npy_header(KeyType::F64, 3).find("'descr': '<f8'"), std::string::npos);
  EXPECT_NE(make_npy_header(KeyType::I32, 3).find("'shape': (3,)"), std::string::npos);
}

TEST(NpyHeader, ReadsEachAcceptedDtypeSpelling) {
  const std::pair<const char*, KeyType> cases[] = {{"<i1", KeyType::I8},  {"|i1", KeyType::I8},  {"<u1", KeyType::U8},
                                                   {"|u1", KeyType::U8},  {"<i2", KeyType::I16}, {"<u2", KeyType::U16},
                                                   {"<i4", KeyType::I32}, {"<u4", KeyType::U32}, {"<i8", KeyType::I64},
                                                   {"<u8", KeyType::U64}, {"<f4", KeyType::F32}, {"<f8", KeyType::F64}};
  for (const auto& [descr, type] : cases) {
    const std::string file =
        npy_file(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,), }") +
        std::string(2 * key_type_size(type), '\0');
    EXPECT_EQ(parse_npy_header(file, "x.npy").type, type) << descr;
  }
}

TEST(NpyHeader, ReadsVersionsTwoAndThree) {
  for (int major : {2, 3}) {
    const std::string file =
        npy_file("{'descr': '<u8', 'fortran_order': False, 'shape': (3,), }", major) + std::string(24, '\0');
    const NpyHeader header = parse_npy_header(file, "x.npy");
    EXPECT_EQ(header.type, KeyType::U64);
    EXPECT_EQ(header.count, 3u);
    EXPECT_EQ(header.data_offset, file.size() - 24);
  }
}

TEST(NpyHeader, RejectsWithClearMessages) {
  const auto parse = [](std::string dict, size_t data_bytes) {
    return error_of([&] { parse_npy_header(npy_file(dict) + std::string(data_bytes, '\0'), "x.npy"); });
  };
  EXPECT_NE(parse("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", 8).find("big-endian"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 4).find("unsupported npy dtype"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }", 8).find("Fortran"), std::string::npos);
  EXPECT_NE(parse("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 24).find("only 1-D"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", 4).find("only 1-D"), std::string::npos);
  EXPECT_NE(parse("{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 8).find("promises 5 values"),
            std::string::npos);
  EXPECT_NE(parse("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", 8).find("structured"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_npy_header(std::string("\x93NUMPY\x04\x00\x00\x00", 10), "x.npy"); }).find("version"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_npy_header("plain", "x.npy"); }).find("not a NumPy"), std::string::npos);
}

/// An npy file of two i4 zeros whose header bytes (after the magic) are `version` and then the dictionary `dict`,
/// its length in 2 bytes (version 1) or 4.
std::string npy_raw(std::string_view dict, char major, char minor) {
  std::string file = "\x93NUMPY";
  file.push_back(major);
  file.push_back(minor);
  file.push_back(static_cast<char>(dict.size() & 0xff));
  file.push_back(static_cast<char>(dict.size() >> 8));
  if (major != 1) file.append(2, '\0');
  return file + std::string(dict) + std::string(8, '\0');
}

TEST(NpyHeader, AcceptsWhatNumpyReads) {
  // numpy's reader takes any Python dict literal with the three keys: either quotes, any order, no trailing comma,
  // extra whitespace and newlines, padding without a final newline, Python 2 longs in versions 1 and 2.
  const char* dicts[] = {
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n",
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}\n",
      "{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}",
      "{ 'descr' : '<i4' ,\n  'fortran_order' : False ,\t'shape' : ( 2 , ) , }      \n",
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2L,), }\n",
  };
  for (const char* dict : dicts) {
    for (const char major : {1, 2}) {
      const std::string file = npy_raw(dict, major, 0);
      NpyHeader header;
      EXPECT_NO_THROW(header = parse_npy_header(file, "x.npy")) << dict;
      EXPECT_EQ(header.type, KeyType::I32) << dict;
      EXPECT_EQ(header.count, 2u) << dict;
      EXPECT_EQ(header.data_offset, file.size() - 8) << dict;
    }
  }
  EXPECT_EQ(parse_npy_header(npy_raw("{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}", 3, 0), "x.npy").count,
            2u);
}

TEST(NpyHeader, RejectsMalformedHeadersAsNumpyDoes) {
  const auto error = [](std::string_view dict, char major = 1, char minor = 0) {
    return error_of([&] { parse_npy_header(npy_raw(dict, major, minor), "x.npy"); });
  };
  const std::string good = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_EQ(error(good + "\n"), "");
  const std::pair<std::string, std::string> cases[] = {
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), \n", "(unexpected end at byte"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,,), }\n", "(unexpected ',' at byte"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (,), }\n", "(unexpected ',' at byte"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), } x\n", "(text after the dictionary at byte"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }}\n", "(text after the dictionary at byte"},
      {"{'descr': '<i4', 'fortran_order' False, 'shape': (2,), }\n", "(expected ':' after a key"},
      {"{'descr': '<i4' 'fortran_order': False, 'shape': (2,), }\n", "(expected ',' or '}'"},
      {"{'descr': '<i4', 'fortran_order': False 'shape': (2,), }\n", "(expected ',' or '}'"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2 3,), }\n", "(expected ',' or ')'"},
      {"{'descr': '<i4, 'fortran_order': False, 'shape': (2,), }\n", "malformed npy header"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (02,), }\n", "(an integer with a leading zero"},
      {"{'descr': '<i4', 'fortran_order': false, 'shape': (2,), }\n", "(an unknown name at byte"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2x,), }\n", "(a malformed integer"},
      {"['descr', '<i4']\n", "malformed npy header (not a dictionary)"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'extra': 1}\n", "unexpected key 'extra'"},
      {"{'descr': '<i4', 'fortran_order': False}\n", "the npy header has no 'shape'"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (2), }\n", "malformed npy shape (2) (not a tuple"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': [2], }\n", "malformed npy shape [2] (not a tuple"},
      {"{'descr': '<i4', 'fortran_order': 0, 'shape': (2,), }\n", "malformed npy fortran_order 0"},
  };
  for (const auto& [dict, expected] : cases) {
    const std::string message = error(dict);
    EXPECT_EQ(message.rfind("x.npy: ", 0), 0u) << dict << " -> " << message;
    EXPECT_NE(message.find(expected), std::string::npos) << dict << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Python 3 has no longs: "2L" is read only in versions 1 and 2, as numpy does.
  EXPECT_NE(error("{'descr': '<i4', 'fortran_order': False, 'shape': (2L,), }\n", 3).find("malformed integer"),
            std::string::npos);
  for (const auto& [major, minor] : {std::pair{1, 1}, {3, 7}, {0, 0}, {4, 0}, {2, 1}}) {
    EXPECT_EQ(error(good + "\n", static_cast<char>(major), static_cast<char>(minor)),
              fmt::format("x.npy: unsupported npy format version {}.{} (numpy's are 1.0, 2.0 and 3.0)", major, minor));
  }
  // A header longer than the file, or than this program reads, is one line too.
  std::string huge = npy_raw(good, 2, 0);
  huge[10] = '\x7f';
  EXPECT_EQ(error_of([&] { parse_npy_header(huge, "x.npy"); }), "x.npy: truncated npy header");
  EXPECT_NE(error_of([&] { parse_npy_header(huge.substr(0, 64), size_t(1) << 31, "x.npy"); }).find("more than"),
            std::string::npos);
}

TEST(NpyHeader, QuotesHeaderTextOnOneLine) {
  const auto parse = [](std::string dict) {
    return error_of([&] { parse_npy_header(npy_file(dict) + std::string(8, '\0'), "x.npy"); });
  };
  std::string message = parse("{'descr': '<i4\n\x1b[31m', 'fortran_order': False, 'shape': (2,), }");
  EXPECT_NE(message.find("'<i4\\x0A\\x1B[31m'"), std::string::npos) << message;
  message = parse("{'descr': '<i4', 'fortran_order': False, 'shape': (2,\n3), }");
  EXPECT_NE(message.find("(2,\\x0A3)"), std::string::npos) << message;
  message = parse("{'descr': '<i4', 'fortran_order': Fa\tlse, 'shape': (2,), }");
  EXPECT_NE(message.find("Fa\\x09lse"), std::string::npos) << message;
}

TEST(NpyHeader, SaysWhenTheShapeIsTooLarge) {
  const auto parse = [](std::string dict) {
    return error_of([&] { parse_npy_header(npy_file(dict) + std::string(8, '\0'), "x.npy"); });
  };
  // 2^62 eight-byte values: their size in bytes does not fit in 64 bits.
  std::string message = parse("{'descr': '<u8', 'fortran_order': False, 'shape': (4611686018427387904,), }");
  EXPECT_NE(message.find("x.npy: the npy shape (4611686018427387904,) is too large"), std::string::npos) << message;
  message = parse("{'descr': '<u1', 'fortran_order': False, 'shape': (99999999999999999999999,), }");
  EXPECT_NE(message.find("x.npy: the npy shape (99999999999999999999999,) is too large"), std::string::npos)
      << message;
}

TEST(Binary, ViewsWholeElementsAndRejectsTruncatedFiles) {
  std::vector<int32_t> values = {3, -1, 7};
  const std::string_view bytes(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  const Column column = binary_column(bytes, KeyType::I32, "x.bin");
  ASSERT_EQ(column.count, 3u);
  EXPECT_EQ(column.as<int32_t>()[1], -1);
  const std::string message = error_of([&] { binary_column(bytes.substr(0, 11), KeyType::I32, "x.bin"); });
  EXPECT_NE(message.find("11 bytes is not a whole number of i32 values"), std::string::npos) << message;
}

TEST(Binary, CopiesMisalignedData) {
  std::vector<char> storage(1 + 2 * sizeof(double));
  const double values[] = {1.5, -2.5};
  std::memcpy(storage.data() + 1, values, sizeof values);
  const Column column = binary_column({storage.data() + 1, sizeof values}, KeyType::F64, "x.bin");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(column.data) % alignof(double), 0u);
  EXPECT_EQ(column.as<double>()[1], -2.5);
}

template <class K>
std::vector<K> parse_as(std::string_view text, unsigned threads = 3) {
  const Column column = parse_text(text, key_type_of<K>(), threads, "in.txt");
  return std::vector<K>(column.as<K>(), column.as<K>() + column.count);
}

TEST(Text, ToleratesWhitespaceSignsAndBlankLines) {
  EXPECT_EQ(parse_as<int32_t>("  12 \n\t-3\r\n+4\n\n   \n5"), (std::vector<int32_t>{12, -3, 4, 5}));
  EXPECT_EQ(parse_as<uint8_t>("255\n0\n+7\n"), (std::vector<uint8_t>{255, 0, 7}));
  EXPECT_EQ(parse_as<int64_t>("-9223372036854775808\n9223372036854775807\n"),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}));
  EXPECT_TRUE(parse_as<int32_t>("").empty());
  EXPECT_TRUE(parse_as<int32_t>("\n \n").empty());
}

TEST(Text, ReadsFloatForms) {
  const std::vector<double> values = parse_as<double>("1.5\n-2e3\n+.25\ninf\n-inf\nnan\n1E-2\n");
  ASSERT_EQ(values.size(), 7u);
  EXPECT_EQ(values[0], 1.5);
  EXPECT_EQ(values[1], -2000.0);
  EXPECT_EQ(values[2], 0.25);
  EXPECT_EQ(values[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(values[4], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(values[5]));
  EXPECT_EQ(values[6], 0.01);
}

TEST(Text, ReadsMinusZeroAndTinyFloatsAsNumpyDoes) {
  EXPECT_EQ(parse_as<uint8_t>("-0\n-000\n+0\n"), (std::vector<uint8_t>{0, 0, 0}));
  EXPECT_EQ(parse_as<uint64_t>("-0\n"), (std::vector<uint64_t>{0}));
  const std::vector<float> floats = parse_as<float>("1e-320\n-1e-400\n1e-40\n1e-45\n");
  ASSERT_EQ(floats.size(), 4u);
  EXPECT_EQ(floats[0], 0.0f);
  EXPECT_FALSE(std::signbit(floats[0]));
  EXPECT_EQ(floats[1], 0.0f);
  EXPECT_TRUE(std::signbit(floats[1]));
  EXPECT_EQ(floats[2], 1e-40f);
  EXPECT_EQ(floats[3], std::numeric_limits<float>::denorm_min());
  const std::vector<double> doubles = parse_as<double>("1e-320\n1e-400\n");
  ASSERT_EQ(doubles.size(), 2u);
  EXPECT_EQ(doubles[0], 1e-320);
  EXPECT_EQ(doubles[1], 0.0);
  std::string message = error_of([] { parse_as<uint8_t>("1\n-1\n"); });
  EXPECT_NE(message.find("in.txt:2: '-1' is out of range for u8"), std::string::npos) << message;
  message = error_of([] { parse_as<double>("-1e400\n"); });
  EXPECT_NE(message.find("'-1e400' is out of range for f64"), std::string::npos) << message;
}

TEST(Text, NamesTheLineOfABadValue) {
  // Many lines and threads, so the bad line is far from the first piece.
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "1\n\n";
  text += "12x\n5\n";
  std::string message = error_of([&] { parse_as<int32_t>(text, 4); });
  EXPECT_NE(message.find("in.txt:200001: '12x' is not a valid i32 number"), std::string::npos) << message;

  message = error_of([] { parse_as<int16_t>("1\n2\n40000\n"); });
  EXPECT_NE(message.find("in.txt:3: '40000' is out of range for i16"), std::string::npos) << message;
  message = error_of([] { parse_as<uint32_t>("-1\n"); });
  EXPECT_NE(message.find("in.txt:1:"), std::string::npos) << message;
  message = error_of([] { parse_as<int32_t>("1\nabc\n"); });
  EXPECT_NE(message.find("in.txt:2: 'abc'"), std::string::npos) << message;
  message = error_of([] { parse_as<int32_t>("1 2\n"); });
  EXPECT_NE(message.find("in.txt:1: '1 2'"), std::string::npos) << message;
  message = error_of([] { parse_as<int32_t>("1.5\n"); });
  EXPECT_NE(message.find("in.txt:1:"), std::string::npos) << message;
  message = error_of([] { parse_as<int32_t>("1\r2\xff\n"); });
  EXPECT_NE(message.find("in.txt:1: '1\\x0D2\\xFF' is not a valid i32 number"), std::string::npos) << message;
  message = error_of([] { parse_as<float>("1e60\n"); });
  EXPECT_NE(message.find("out of range for f32"), std::string::npos) << message;
}

template <class K>
void expect_text_round_trip(const std::vector<K>& values) {
  std::string text;
  format_text(values.data(), key_type_of<K>(), values.size(), 3, [&](std::string_view piece) { text += piece; });
  const std::vector<K> back = parse_as<K>(text);
  ASSERT_EQ(back.size(), values.size());
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * sizeof(K)), 0) << text.substr(0, 200);
}

TEST(Text, PrintsWhatItReadsBackForEveryType) {
  expect_text_round_trip<int8_t>({-128, 127, 0, -1});
  expect_text_round_trip<uint8_t>({0, 255, 17});
  expect_text_round_trip<int16_t>({-32768, 32767});
  expect_text_round_trip<uint16_t>({65535, 0});
  expect_text_round_trip<int32_t>({std::numeric_limits<int32_t>::min(), 5});
  expect_text_round_trip<uint32_t>({std::numeric_limits<uint32_t>::max()});
  expect_text_round_trip<int64_t>({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  expect_text_round_trip<uint64_t>({std::numeric_limits<uint64_t>::max(), 1});
  expect_text_round_trip<float>({0.1f, -3.4e38f, 1e-45f, std::numeric_limits<float>::infinity(), -0.0f});
  expect_text_round_trip<double>({0.1, -1.7976931348623157e308, 5e-324, -std::numeric_limits<double>::infinity()});
  std::vector<int32_t> many(3'000'000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int32_t>(i * 2654435761u);
  expect_text_round_trip(many);
}

TEST(Text, PrintsOneValuePerLine) {
  const int32_t values[] = {-5, 0, 42};
  std::string text;
  format_text(values, KeyType::I32, 3, 2, [&](std::string_view piece) { text += piece; });
  EXPECT_EQ(text, "-5\n0\n42\n");
}

TEST(Format, DetectsNpyTextAndBinary) {
  EXPECT_EQ(detect_format("data.bin", make_npy_header(KeyType::I32, 0)), Format::Npy);
  EXPECT_EQ(detect_format("data.txt", std::string("\x01\x02", 2)), Format::Text);
  EXPECT_EQ(detect_format("data.csv", ""), Format::Text);
  EXPECT_EQ(detect_format("data", "12\n-3\n4.5e6\nnan\n-inf\n"), Format::Text);
  EXPECT_EQ(detect_format("data", std::string("\x01\x00\x00\x00", 4)), Format::Binary);
  EXPECT_EQ(detect_format("data", ""), Format::Binary);
}

TEST(Format, TrustsBinaryExtensionsAndNeedsADigitToSniffText) {
  EXPECT_EQ(detect_format("data.bin", "12\n"), Format::Binary);
  EXPECT_EQ(detect_format("data.raw", "1234"), Format::Binary);
  EXPECT_EQ(detect_format("data.dat", "1e10"), Format::Binary);
  EXPECT_EQ(detect_format("data", "\n\n\n\n"), Format::Binary);
  EXPECT_EQ(detect_format("data", " \t\n "), Format::Binary);
  EXPECT_EQ(detect_format("data", "\xEF\xBB\xBF" "7\n"), Format::Text);
}

TEST(Format, AnNpyNameWithoutTheMagicIsAnError) {
  EXPECT_EQ(detect_format("data.npy", "1\n2\n"), Format::Npy);
  EXPECT_NE(error_of([] { load_column(std::string(8, '\0'), Format::Auto, std::nullopt, 2, "x.npy"); })
                .find("x.npy: not a NumPy .npy file"),
            std::string::npos);
}

TEST(Text, CountsTheNewlinesItParsed) {
  // Blank lines and a last line without a newline, on more threads than lines and on one.
  const std::string text = "\xEF\xBB\xBF" "1\n\n  2\n\n\n3";
  for (unsigned threads : {1u, 8u}) {
    size_t newlines = 99;
    const Column column = parse_text(text, KeyType::I32, threads, "in.txt", 0, &newlines);
    EXPECT_EQ(column.count, 3u);
    EXPECT_EQ(newlines, 5u) << threads << " threads";
  }
  size_t none = 99;
  parse_text("", KeyType::U8, 4, "in.txt", 0, &none);
  EXPECT_EQ(none, 0u);
}

TEST(Text, SkipsAByteOrderMark) {
  EXPECT_EQ(parse_as<int32_t>("\xEF\xBB\xBF" "5\n-2\n"), (std::vector<int32_t>{5, -2}));
  EXPECT_EQ(load_column("\xEF\xBB\xBF" "3\n", Format::Auto, std::nullopt, 2, "x").count, 1u);
}

TEST(Format, NamesParse) {
  for (Format format : {Format::Auto, Format::Binary, Format::Text, Format::Npy}) {
    EXPECT_EQ(parse_format(format_name(format)), format);
  }
  EXPECT_FALSE(parse_format("csv"));
  for (KeyType type : all_key_types) EXPECT_EQ(parse_key_type(key_type_name(type)), type);
  EXPECT_FALSE(parse_key_type("i128"));
}

TEST(Format, LoadColumnTakesTheTypeFromNpyAndChecksAGivenOne) {
  const std::string file = make_npy_header(KeyType::U16, 2) + std::string(4, '\0');
  EXPECT_EQ(load_column(file, Format::Auto, std::nullopt, 2, "x.npy").type, KeyType::U16);
  EXPECT_EQ(load_column(file, Format::Auto, KeyType::U16, 2, "x.npy").count, 2u);
  EXPECT_NE(error_of([&] { load_column(file, Format::Auto, KeyType::I32, 2, "x.npy"); }).find("does not match"),
            std::string::npos);
  EXPECT_EQ(load_column("1\n2\n", Format::Auto, std::nullopt, 2, "x").type, KeyType::I32);
}

TEST(Format, FindsTheLineOfAValue) {
  EXPECT_EQ(text_line_of_value("1\n\n 2\n3\n", 0), 1u);
  EXPECT_EQ(text_line_of_value("1\n\n 2\n3\n", 1), 3u);
  EXPECT_EQ(text_line_of_value("1\n\n 2\n3\n", 2), 4u);
}

}  // namespace
}  // namespace radix_sort
