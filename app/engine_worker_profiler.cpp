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
  if (engine_) engine_->set_profiling(ProfileOptions{on, kProfileKeepSteps});
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
    if (sent_profile_steps_ >= 0 && report->steps < sent_profile_steps_) {
      // The engine started its window afresh after the last poll (profiling
      // turned on again: applied between steps): a new window, from step 0.
      ++profile_window_;
      next_profile_step_ = 0;
      report = std::make_shared<ProfileReport>(engine_->profile_since(0));
    }
    if (report->steps != sent_profile_steps_) {
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
