// The generation settings of the open conversation: system prompt, sampling
// (temperature, top-p, top-k, min-p, repetition penalty; each field's tooltip
// says its range and what it does), max tokens and seed, with presets; and
// the context length, which is the model's (app-wide: changing it reloads
// the model). The main window keeps one GenerationSettings per conversation,
// starting from the app-wide defaults in the settings file ("Save as
// defaults" writes them there).
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "hearth/sampling.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace hearth::settings {
struct Settings;
}

namespace hearth::app {

struct GenerationSettings {
  SamplingParams sampling;
  int max_tokens = 1024;
  QString system_prompt;
};
bool same_generation(const GenerationSettings& a, const GenerationSettings& b);
GenerationSettings generation_defaults(const settings::Settings& settings);
void store_generation_defaults(const GenerationSettings& generation, settings::Settings& settings);

// Named sampling settings: "Balanced" (the defaults), "Precise", "Creative", "Deterministic".
struct SamplingPreset {
  QString name;
  QString description;
  SamplingParams sampling;
};
const std::vector<SamplingPreset>& sampling_presets();

class GenerationPanel : public QWidget {
  Q_OBJECT

 public:
  explicit GenerationPanel(QWidget* parent = nullptr);

  GenerationSettings settings() const;
  void setSettings(const GenerationSettings& settings);  // shows them; no changed()
  void setContextLength(int tokens);                     // the setting, shown in its field

 signals:
  void changed(const hearth::app::GenerationSettings& settings);  // the user edited a field
  void saveDefaultsRequested(const hearth::app::GenerationSettings& settings);
  void resetRequested();                 // back to the app-wide defaults
  void contextLengthChosen(int tokens);  // Apply next to the context length

 private:
  void buildSampling(QFormLayout* form);
  void emitChanged();
  void showPreset();

  QComboBox* preset_ = nullptr;
  QPlainTextEdit* system_prompt_ = nullptr;
  QDoubleSpinBox* temperature_ = nullptr;
  QDoubleSpinBox* top_p_ = nullptr;
  QSpinBox* top_k_ = nullptr;
  QDoubleSpinBox* min_p_ = nullptr;
  QDoubleSpinBox* repeat_penalty_ = nullptr;
  QSpinBox* max_tokens_ = nullptr;
  QLineEdit* seed_ = nullptr;  // digits; empty or 0: a fresh seed per answer
  QSpinBox* context_ = nullptr;
  SamplingParams hidden_;  // the fields the panel does not show (frequency/presence penalties, window)
  bool updating_ = false;  // setSettings() is filling the fields
};

}  // namespace hearth::app
