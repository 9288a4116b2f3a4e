#include "app/latency_advisor.h"

#include <vector>

namespace hearth::app {

LatencyAdvisor::LatencyAdvisor(QObject* parent) : QObject(parent) {
  qRegisterMetaType<advice::Suggestion>();
}

void LatencyAdvisor::restart() {
  window_.clear();
  last_ = advice::Advice{};
  offered_ = false;
}

void LatencyAdvisor::setTarget(advice::LatencyMetric metric, double target_ms) {
  target_.metric = metric;
  target_.target_ms = target_ms;
  restart();
}

void LatencyAdvisor::setModel(const LoadedModel& m) {
  setup_.weight_format = m.quantization.toStdString();
  setup_.kv_precision = m.kv_precision.toStdString();
  setup_.cuda = m.device.startsWith(QStringLiteral("cuda"));
  setup_.context_length = m.context_length;
  setup_.streams = 1;  // one user
  restart();
}

void LatencyAdvisor::setShares(double weight_share, double attention_share) {
  setup_.weight_share = weight_share;
  setup_.attention_share = attention_share;
}

void LatencyAdvisor::addAnswer(const GenerationDone& done) {
  if (target_.target_ms <= 0 || done.reason == FinishReason::kError) return;
  const bool itl = target_.metric == advice::LatencyMetric::kInterTokenP99;
  if (itl && done.usage.generated_tokens < 2) return;  // no inter-token gap measured
  window_.push_back(itl ? done.usage.itl_p99_ms : done.usage.ttft_ms);
  if (window_.size() > kWindowAnswers) window_.pop_front();
  advice::AdviceOptions options;
  options.min_samples = kMinAnswers;
  const std::vector<double> samples(window_.begin(), window_.end());
  last_ = advice::advise(target_, samples, setup_, options);
  if (last_.verdict != advice::Advice::Verdict::kOverTarget || !last_.recommended || offered_) return;
  offered_ = true;
  emit suggestionReady(*last_.recommended, describe(last_, target_));
}

QString LatencyAdvisor::describe(const advice::Advice& a, const advice::LatencyTarget& t) {
  const QString metric =
      t.metric == advice::LatencyMetric::kInterTokenP99 ? tr("Inter-token latency p99") : tr("Time to first token p99");
  QString text = tr("%1 is %2 ms over the last %3 answers (the newer half: %4 ms), above your target of %5 ms.")
                     .arg(metric)
                     .arg(a.measured_ms, 0, 'f', 1)
                     .arg(a.samples)
                     .arg(a.recent_ms, 0, 'f', 1)
                     .arg(t.target_ms, 0, 'f', 1);
  if (!a.recommended) return text;
  const advice::Suggestion& s = *a.recommended;
  const QString what = s.change == "weight_format"    ? tr("weights %1 \u2192 %2")
                       : s.change == "kv_precision"   ? tr("KV cache %1 \u2192 %2")
                       : s.change == "context_length" ? tr("context %1 \u2192 %2 tokens")
                                                      : tr("streams %1 \u2192 %2");
  text += tr(" Suggested: %1 (%2): expected %3 ms, %4 ms faster%5. Apply reloads the model.")
              .arg(what.arg(QString::fromStdString(s.from), QString::fromStdString(s.to)))
              .arg(QString::fromStdString(s.reason))
              .arg(s.predicted_ms, 0, 'f', 1)
              .arg(s.gain_ms, 0, 'f', 1)
              .arg(s.meets_target ? tr(", within the target") : tr(", still above the target"));
  return text;
}

}  // namespace hearth::app
