#include "store/store_error.h"

namespace hearth::store {

const char* to_string(StoreErrorCode code) {
  switch (code) {
    case StoreErrorCode::kInvalidArgument:
      return "invalid argument";
    case StoreErrorCode::kNotFound:
      return "not found";
    case StoreErrorCode::kIo:
      return "I/O error";
    case StoreErrorCode::kCorruptFile:
      return "corrupt file";
    case StoreErrorCode::kUnsupported:
      return "unsupported";
    case StoreErrorCode::kInternal:
      return "internal error";
  }
  return "unknown error";
}

}  // namespace hearth::store
