// Fuzzes the user's stage shapes (pipeline/stage_meta.h parse_stage_shapes,
// --stage-shapes FILE) and the metadata messages ranks exchange (decode_metas).
// A message decode_metas accepts must encode and decode to the same metas.
#include "fuzz_check.h"
#include "pipeline/stage_meta.h"

using namespace autopar;
using namespace autopar::pipeline;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  (void)parse_stage_shapes(text);
  Expected<MetaMessage> message = decode_metas(text);
  if (!message) return 0;
  Expected<MetaMessage> again = decode_metas(encode_metas(*message));
  fuzz::require(again.ok() && again->metas == message->metas && again->layouts == message->layouts &&
                    again->from == message->from && again->to == message->to,
                "a metadata message decodes from encode_metas' output the same");
  return 0;
}
