// Text helpers for the report's HTML and SVG: escaping (names come from user
// graphs and may hold any character) and compact numbers.
#pragma once

#include <string>
#include <string_view>

namespace autopar::report {

// & < > " ' as entities: safe in element text and in quoted attributes.
std::string html_escape(std::string_view text);

// A JSON string literal that is also safe inside <script>: < > & and the
// line separators are \u escapes, so "</script>" in a name cannot end it.
std::string json_string(std::string_view text);

// 1536 -> "1.5 KiB"; 0 -> "0 B".
std::string format_bytes(double bytes);

// 0.0012 -> "1.20 ms"; 3e-6 -> "3.0 us".
std::string format_seconds(double seconds);

}  // namespace autopar::report
