// The report page's fixed CSS and JavaScript, inlined into every report so the
// file needs no network. The script reads the graph from the JSON block
// <script id="graph-data"> (html_report.h) and draws it as SVG.
#pragma once

#include <string_view>

namespace autopar::report {

extern const std::string_view kReportCss;
extern const std::string_view kReportScript;

}  // namespace autopar::report
