// The report in a real browser: headless Chromium loads the page, runs its
// script (which marks <body data-status="ready"> only when drawing finished,
// and "error: ..." on any uncaught error) and takes a screenshot. One browser
// launch does both (--dump-dom and --screenshot); it takes ~20 s on a loaded
// 2-core machine, hence the single test and the generous timeout.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "report/graph_view.h"
#include "report/html_report.h"
#include "report_fixtures.h"
#include "support/require.h"

namespace autopar::report {
namespace {

namespace fs = std::filesystem;

// AUTOPAR_CHROMIUM when set (if that file exists), else chromium or
// chromium-browser on PATH; "" if none.
std::string find_chromium() {
  if (const char* env = std::getenv("AUTOPAR_CHROMIUM"); env && *env) return fs::exists(env) ? env : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      if (fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
    }
  }
  return "";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string body_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  std::regex re("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "(missing)";
}

uint32_t big_endian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

TEST(ReportInBrowser, LoadsWithoutErrorsDrawsTheGraphAndScreenshotsIt) {
  std::string chromium = find_chromium();
  AUTOPAR_REQUIRE(!chromium.empty(), "chromium not found (install Debian's chromium, or set AUTOPAR_CHROMIUM to "
                                     "its path): the headless report check cannot run");
  Graph g = testing::debug_model(2);
  Plan p = testing::plan_on(g, {2, 2});
  GraphView view = build_graph_view(g, p);
  fs::path dir = fs::path(::testing::TempDir()) / "autopar_report_browser";
  fs::create_directories(dir);
  fs::path page = dir / "report.html", png = dir / "shot.png", dom = dir / "dom.html";
  fs::remove(png);
  std::ofstream(page) << html_report(g, p, estimate_memory(g, p));
  std::string command = "timeout 180 " + chromium +
                        " --headless --no-sandbox --disable-gpu --hide-scrollbars"
                        " --window-size=1200,900 --screenshot=" + png.string() +
                        " --dump-dom 'file://" + page.string() + "#expand=layers.0' > " +
                        dom.string() + " 2> " + (dir / "chromium.log").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\nsee " << (dir / "chromium.log");
  std::string html = read_file(dom);
  EXPECT_EQ(body_attribute(html, "data-status"), "ready");
  EXPECT_EQ(body_attribute(html, "data-groups"), std::to_string(view.groups.size()));
  // The hash expanded layers.0: every group box plus that layer's nodes.
  size_t layer0 = 0;
  for (const ViewGroup& group : view.groups) {
    if (group.name == "layers.0") layer0 = group.nodes.size();
  }
  ASSERT_GT(layer0, 0u);
  EXPECT_EQ(body_attribute(html, "data-expanded-groups"), "1");
  EXPECT_EQ(body_attribute(html, "data-rendered-nodes"),
            std::to_string(view.groups.size() + layer0));
  std::string shot = read_file(png);
  ASSERT_GT(shot.size(), 24u) << "no screenshot at " << png;
  EXPECT_EQ(shot.substr(1, 3), "PNG");
  EXPECT_EQ(big_endian(shot, 16), 1200u);  // IHDR width
  EXPECT_EQ(big_endian(shot, 20), 900u);   // IHDR height
  // A 1200x900 screenshot of a page with one word of text is ~5.8 KB (the
  // PNG of a near-blank page compresses well); the drawn report is far busier.
  EXPECT_GT(shot.size(), 30000u);
}

}  // namespace
}  // namespace autopar::report
