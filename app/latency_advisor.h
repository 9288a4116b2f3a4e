// Latency advice in the app (issue 19): the user's target (settings:
// latency_target, ITL p99 or TTFT p99) against each finished answer's
// measurement (its inter-token p99, or its TTFT), over a window of the last
// answers of the loaded model. When the p99 of the window stays above the
// target (engine/advice: the whole window and its newer half), it offers the
// lighter configuration once (suggestionReady) and never acts on its own: the
// main window shows it, and accepting applies the setting and reloads.
#pragma once

#include <QObject>
#include <QString>

#include <deque>
#include <optional>

#include "app/engine_types.h"
#include "engine/advice/latency_advice.h"

namespace hearth::app {

class LatencyAdvisor : public QObject {
  Q_OBJECT

 public:
  static constexpr std::size_t kWindowAnswers = 16;
  static constexpr std::size_t kMinAnswers = 4;

  explicit LatencyAdvisor(QObject* parent = nullptr);

  // target_ms <= 0: no target, no advice. A change starts a fresh window.
  void setTarget(advice::LatencyMetric metric, double target_ms);
  // The loaded model's configuration (a new one starts a fresh window).
  void setModel(const LoadedModel& model);
  // The shares of a decode step (weights' products, attention + KV), from a
  // profile when one ran; the advice's defaults otherwise.
  void setShares(double weight_share, double attention_share);
  const advice::Advice& lastAdvice() const { return last_; }
  std::size_t samples() const { return window_.size(); }

  // One line for the user: the measured numbers, the change, the expected gain.
  static QString describe(const advice::Advice& advice, const advice::LatencyTarget& target);

 public slots:
  void addAnswer(const hearth::app::GenerationDone& done);

 signals:
  // Once per episode over the target (again only after the window restarts).
  void suggestionReady(const hearth::advice::Suggestion& suggestion, const QString& text);

 private:
  void restart();

  advice::LatencyTarget target_;
  advice::CurrentSetup setup_;
  std::deque<double> window_;  // ms, oldest first
  advice::Advice last_;
  bool offered_ = false;
};

}  // namespace hearth::app

Q_DECLARE_METATYPE(hearth::advice::Suggestion)
