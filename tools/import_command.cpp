#include "import_command.hpp"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cuzk_import.hpp"
#include "guarded_command.hpp"
#include "scenario.hpp"

namespace zkpipe::tools {

namespace {

void add_import_cuzk(CLI::App& import) {
  struct Options {
    std::vector<std::string> logs;
    std::string output, staging;
    model::cuzk::ImportOptions import;
    std::uint32_t pcie_generation = 5;
    std::optional<double> pcie_h2d_gbps;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = import.add_subcommand(
      "cuzk", "A cuzk daemon's log lines (TIMELINE, CUZK_TIMING, CUZK_NTT_H, GPU_TIMING, FIN_TIMING) to a measured trace");
  command->add_option("logs", options->logs, "the daemon's logs, read in order as one run (stderr and stdout, together or apart)")
      ->required()->check(CLI::ExistingFile);
  command->add_option("-o,--output", options->output, "folder for trace.csv, trace.json (sidecar) and trace.perfetto.json")
      ->required();
  command->add_option("--run", options->import.run, "the trace's run name (letters, digits and . _ - +)")->capture_default_str();
  command->add_option("--constraints", options->import.constraints,
                      "constraints per partition (default: the log's 'cached synthesis capacity hint')")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  command->add_option("--staging", options->staging,
                      "pinned or pageable: where synthesis wrote a/b/c (default: pinned where the log shows "
                      "'attempting pinned memory synthesis', else pageable)")
      ->check(CLI::IsMember({"pinned", "pageable"}));
  auto* generation = command->add_option("--pcie-generation", options->pcie_generation,
                                         "the host's PCIe x16 generation, for the sidecar's link rate")
                         ->capture_default_str()->check(CLI::Range(3, 6));
  command->add_option("--pcie-h2d-gbps", options->pcie_h2d_gbps, "the host's host-to-device link rate instead")
      ->check(CLI::Range(0.1, 1e4))->excludes(generation);
  command->add_option("--cores", options->import.cores, "the host's CPU cores (calibration's synthesis core shares)")
      ->check(CLI::Range(1, 4096));
  command->callback(guarded("import cuzk", [options] {
    model::cuzk::ImportOptions import = options->import;
    if (import.run.empty() || import.run.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+") !=
                                  std::string::npos)
      throw std::runtime_error(fmt::format("--run '{}': use letters, digits and . _ - + only", import.run));
    if (!options->staging.empty()) import.staging = policy::parse_staging(options->staging);
    import.pcie_h2d_gbps = options->pcie_h2d_gbps.value_or(model::pcie_generation_gbps(options->pcie_generation));
    const model::cuzk::ImportResult result =
        model::cuzk::import_logs({options->logs.begin(), options->logs.end()}, std::move(import));
    model::cuzk::write_import(options->output, result);
    std::cout << model::cuzk::format_import_summary(result)
              << fmt::format("trace written to {}/trace.csv (sidecar trace.json, Perfetto trace.perfetto.json)\n",
                             options->output);
  }));
}

}  // namespace

void add_import_command(CLI::App& app) {
  CLI::App* import = app.add_subcommand("import", "Import another prover's logs as a trace in zkpipe's schema");
  import->require_subcommand(1);
  add_import_cuzk(*import);
}

}  // namespace zkpipe::tools
