#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"autopar: plan and run how a training step is split across devices"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
