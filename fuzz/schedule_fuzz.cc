// Fuzzes the pipeline schedule readers (pipeline/schedule.h: text and CSV) and
// the simulator's durations (pipeline/simulate.h parse_durations). A schedule
// either reader accepts must print (to_text, to_csv) and parse back the same.
#include "fuzz_check.h"
#include "pipeline/schedule.h"
#include "pipeline/simulate.h"

using namespace autopar;
using namespace autopar::pipeline;

namespace {

void check_round_trip(const Schedule& schedule) {
  Expected<Schedule> text = parse_schedule_text(to_text(schedule));
  fuzz::require(text.ok() && *text == schedule, "a schedule reads back from to_text");
  Expected<Schedule> csv = parse_schedule_csv(to_csv(schedule));
  fuzz::require(csv.ok() && *csv == schedule, "a schedule reads back from to_csv");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  if (Expected<Schedule> s = parse_schedule_text(text)) check_round_trip(*s);
  if (Expected<Schedule> s = parse_schedule_csv(text)) check_round_trip(*s);
  (void)parse_durations(text);
  return 0;
}
