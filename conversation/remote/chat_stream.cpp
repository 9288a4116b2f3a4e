#include "conversation/remote/chat_stream.h"

namespace hearth::remote {

Error status_error(int status, const std::string& server_message, const std::string& where) {
  const std::string said = server_message.empty() ? std::string() : ": " + server_message;
  const std::string http = "HTTP " + std::to_string(status);
  switch (status) {
    case 401:
      return make_error(ErrorCode::kInvalidArgument,
                        where + " refused the API key (" + http + said + "); check the key given for it");
    case 403:
      return make_error(ErrorCode::kInvalidArgument, where + " forbids this request (" + http + said + ")");
    case 404:
      return make_error(ErrorCode::kNotFound,
                        where + " has no such model or route (" + http + said + "); check the base URL and model");
    case 429:
      return make_error(ErrorCode::kIo, where + " is rate-limiting or overloaded (" + http + said + "); try later");
    default:
      break;
  }
  if (status >= 400 && status < 500) {
    return make_error(ErrorCode::kInvalidArgument, where + " refused the request (" + http + said + ")");
  }
  if (status >= 500) return make_error(ErrorCode::kIo, where + " failed (" + http + said + ")");
  return make_error(ErrorCode::kIo, where + " answered " + http + said + " instead of 200");
}

ChatStreamReader::ChatStreamReader(TextFn on_text, StreamLimits limits)
    : on_text_(std::move(on_text)), limits_(limits), sse_(limits.sse) {}

void ChatStreamReader::start(int status, std::string_view content_type) {
  status_ = status;
  if (status != 200) {
    mode_ = Mode::kErrorBody;
  } else if (content_type.find("json") != std::string_view::npos) {
    mode_ = Mode::kWhole;  // the server ignored "stream": true
  } else {
    mode_ = Mode::kEvents;
  }
}

bool ChatStreamReader::stop_with(Error error) {
  if (!error_) error_ = std::move(error);
  return false;
}

bool ChatStreamReader::receive(std::string_view bytes) {
  body_bytes_ += bytes.size();
  if (error_ || done_) return false;
  switch (mode_) {
    case Mode::kNone:
      return stop_with(make_error(ErrorCode::kInternal, "body bytes before the response's headers"));
    case Mode::kErrorBody: {
      const std::size_t room = limits_.max_error_body_bytes - held_.size();
      held_.append(bytes.substr(0, room));
      return held_.size() < limits_.max_error_body_bytes;
    }
    case Mode::kWhole:
      if (held_.size() + bytes.size() > limits_.max_whole_answer_bytes) {
        return stop_with(
            make_error(ErrorCode::kCorruptFile,
                       "the answer is larger than " + std::to_string(limits_.max_whole_answer_bytes) + " bytes"));
      }
      held_ += bytes;
      return true;
    case Mode::kEvents:
      break;
  }
  events_.clear();
  const bool fed = sse_.feed(bytes, events_);
  for (const std::string& data : events_) {
    if (!on_event(data)) return false;
  }
  if (!fed) return stop_with(make_error(ErrorCode::kCorruptFile, *sse_.error()));
  return true;
}

bool ChatStreamReader::on_event(std::string_view data) {
  auto chunk = read_chunk(data);
  if (!chunk) return stop_with(std::move(chunk).error());
  if (chunk->done) {
    done_ = true;
    return false;
  }
  if (chunk->server_error) {
    return stop_with(make_error(ErrorCode::kIo, "it reported an error mid-answer: " + *chunk->server_error));
  }
  if (chunk->usage) usage_ = chunk->usage;
  if (!chunk->text.empty()) {
    ++text_chunks_;
    on_text_(chunk->text);
  }
  if (chunk->finish) finish_ = chunk->finish;
  return true;
}

StreamEnd ChatStreamReader::end(const std::string& transport_error, const std::string& where) const {
  StreamEnd end;
  end.usage = usage_;
  const auto failed = [&](Error e) {
    end.reason = FinishReason::kError;
    end.error = std::move(e);
    return end;
  };
  if (status_ == 0) {
    return failed(make_error(
        ErrorCode::kIo, "cannot reach " + where + ": " + (transport_error.empty() ? "no response" : transport_error)));
  }
  if (mode_ == Mode::kErrorBody) return failed(status_error(status_, error_body_message(held_), where));
  if (error_) {
    Error e = *error_;
    e.message = (e.code == ErrorCode::kCorruptFile ? "malformed data from " : "") + where +
                (e.code == ErrorCode::kCorruptFile ? ": " : " ") + e.message;
    if (e.code == ErrorCode::kCorruptFile) e.message += " (the answer stops there)";
    return failed(std::move(e));
  }
  if (mode_ == Mode::kWhole) {
    if (!transport_error.empty()) {
      return failed(make_error(ErrorCode::kIo, "the answer from " + where + " was cut: " + transport_error));
    }
    auto whole = read_whole_answer(held_);
    if (!whole) {
      Error e = std::move(whole).error();
      e.message = "malformed data from " + where + ": " + e.message;
      return failed(std::move(e));
    }
    // The whole text arrives now, as one piece (before the finish the caller sends next).
    if (!whole->text.empty()) on_text_(whole->text);
    end.reason = whole->finish;
    end.usage = whole->usage;
    return end;
  }
  // A stream: complete once [DONE] came, or a finish_reason did (some servers
  // close without the sentinel); anything else was cut in the middle.
  if (done_ || finish_) {
    end.reason = finish_.value_or(FinishReason::kStop);
    return end;
  }
  const std::string how = transport_error.empty() ? "the server closed it" : transport_error;
  return failed(make_error(ErrorCode::kIo, "the stream from " + where + " was cut before the answer finished (" + how +
                                               " after " + std::to_string(body_bytes_) +
                                               " bytes, no finish_reason or [DONE]); the answer is incomplete"));
}

}  // namespace hearth::remote
