#include "store/store_impl.h"

namespace hearth::store {

StoreResult<std::string> Store::export_json(const ExportOptions&) {
  return make_store_error(StoreErrorCode::kUnsupported, "export is not written yet");
}

StoreResult<std::string> Store::export_markdown(Id) {
  return make_store_error(StoreErrorCode::kUnsupported, "export is not written yet");
}

StoreResult<ImportSummary> Store::import_json(std::string_view) {
  return make_store_error(StoreErrorCode::kUnsupported, "import is not written yet");
}

}  // namespace hearth::store
