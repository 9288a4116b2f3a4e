// EngineWorker's instruments (issue 19): profiling and the overflow check of
// the loaded engine, switched at run time from the UI, re-applied to each
// newly loaded model, and polled on the worker thread with the stats.
#include <memory>

#include "app/engine_worker.h"
#include "engine/core/log.h"

namespace hearth::app {

void EngineWorker::setProfiling(bool on) {
  profiling_ = on;
  if (on) {
    ++profile_window_;
    next_profile_step_ = 0;
    sent_profile_steps_ = -1;
  }
  engine_window_ = engine_ ? engine_->set_profiling(ProfileOptions{on, kProfileKeepSteps}) : 0;
}

void EngineWorker::setOverflowCheck(bool on) {
  overflow_check_ = on;
  overflow_reported_ = false;
  if (engine_) engine_->set_overflow_check(on);
}

void EngineWorker::applyInstruments() {
  if (profiling_) setProfiling(true);  // a fresh window for the new model
  if (overflow_check_) setOverflowCheck(true);
}

void EngineWorker::pollInstruments() {
  if (!engine_) return;
  if (profiling_) {
    auto report = std::make_shared<ProfileReport>(engine_->profile_since(next_profile_step_));
    // The engine starts the window asked for at its next step; until then
    // its reports are the old window's and are not sent as the new one.
    if (report->window == engine_window_ && report->steps != sent_profile_steps_) {
      sent_profile_steps_ = report->steps;
      if (!report->recent.empty()) next_profile_step_ = report->recent.back().step + 1;
      emit profileUpdated(ProfileUpdate{std::move(report), profile_window_});
    }
  }
  if (overflow_check_ && !overflow_reported_) {
    if (const std::optional<OverflowFinding> f = engine_->first_overflow()) {
      overflow_reported_ = true;
      log::get("app")->warn("overflow check: {} at layer {}, op {}, max |x| {:.6g}, token position {}", f->what,
                            f->layer, f->op, f->max_abs, f->position);
      emit overflowFound(*f);
    }
  }
}

}  // namespace hearth::app
