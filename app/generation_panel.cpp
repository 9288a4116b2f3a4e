#include "app/generation_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QVBoxLayout>

#include "settings/settings.h"

namespace hearth::app {
namespace {

QDoubleSpinBox* number(double low, double high, double step, int decimals, const QString& name, const QString& tip,
                       QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setRange(low, high);
  box->setSingleStep(step);
  box->setDecimals(decimals);
  box->setObjectName(name);
  box->setToolTip(tip);
  return box;
}

QSpinBox* integer(int low, int high, int step, const QString& name, const QString& tip, QWidget* parent) {
  auto* box = new QSpinBox(parent);
  box->setRange(low, high);
  box->setSingleStep(step);
  box->setObjectName(name);
  box->setToolTip(tip);
  box->setGroupSeparatorShown(true);
  return box;
}

bool same_sampling(const SamplingParams& a, const SamplingParams& b) {
  return a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p && a.min_p == b.min_p &&
         a.repeat_penalty == b.repeat_penalty && a.frequency_penalty == b.frequency_penalty &&
         a.presence_penalty == b.presence_penalty && a.penalty_last_n == b.penalty_last_n && a.seed == b.seed;
}

SamplingParams with(float temperature, int top_k, float top_p, float min_p, float repeat_penalty) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.repeat_penalty = repeat_penalty;
  return p;
}

}  // namespace

bool same_generation(const GenerationSettings& a, const GenerationSettings& b) {
  return same_sampling(a.sampling, b.sampling) && a.max_tokens == b.max_tokens && a.system_prompt == b.system_prompt;
}

GenerationSettings generation_defaults(const settings::Settings& s) {
  return {s.sampling, s.max_tokens, QString::fromStdString(s.system_prompt)};
}

void store_generation_defaults(const GenerationSettings& g, settings::Settings& s) {
  s.sampling = g.sampling;
  s.max_tokens = g.max_tokens;
  s.system_prompt = g.system_prompt.toStdString();
}

const std::vector<SamplingPreset>& sampling_presets() {
  static const std::vector<SamplingPreset> presets = {
      {GenerationPanel::tr("Balanced"), GenerationPanel::tr("The defaults: varied but on topic"), SamplingParams{}},
      {GenerationPanel::tr("Precise"), GenerationPanel::tr("Low temperature: facts, code, extraction"),
       with(0.2f, 40, 0.9f, 0.05f, 1.05f)},
      {GenerationPanel::tr("Creative"), GenerationPanel::tr("High temperature: stories, brainstorming"),
       with(1.1f, 100, 0.98f, 0.02f, 1.0f)},
      {GenerationPanel::tr("Deterministic"),
       GenerationPanel::tr("Greedy: the most likely token every time; the same answer for the same prompt"),
       with(0.0f, 40, 0.95f, 0.05f, 1.0f)},
  };
  return presets;
}

GenerationPanel::GenerationPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("generationPanel"));
  auto* column = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  // A narrow dock puts each label above its field instead of cutting the fields off.
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
  column->addLayout(form);
  preset_ = new QComboBox(this);
  preset_->setObjectName(QStringLiteral("presetCombo"));
  for (const SamplingPreset& p : sampling_presets()) {
    preset_->addItem(p.name);
    preset_->setItemData(preset_->count() - 1, p.description, Qt::ToolTipRole);
  }
  preset_->addItem(tr("Custom"));
  form->addRow(tr("Preset"), preset_);
  system_prompt_ = new QPlainTextEdit(this);
  system_prompt_->setObjectName(QStringLiteral("systemPromptEdit"));
  system_prompt_->setPlaceholderText(tr("System prompt (optional): how the assistant should behave"));
  system_prompt_->setToolTip(tr("Sent before the conversation with every answer, unless the conversation has its own"));
  system_prompt_->setTabChangesFocus(true);
  system_prompt_->setFixedHeight(system_prompt_->fontMetrics().lineSpacing() * 4 + 12);
  form->addRow(tr("System"), system_prompt_);
  buildSampling(form);

  auto* buttons = new QVBoxLayout;  // one above the other: side by side they would not fit a narrow dock
  auto* reset = new QPushButton(tr("Reset"), this);
  reset->setObjectName(QStringLiteral("resetGenerationButton"));
  reset->setToolTip(tr("Back to the app-wide defaults"));
  auto* save = new QPushButton(tr("Save as defaults"), this);
  save->setObjectName(QStringLiteral("saveDefaultsButton"));
  save->setToolTip(tr("Use these settings for new conversations (saved in the settings file)"));
  buttons->addWidget(reset);
  buttons->addWidget(save);
  column->addLayout(buttons);
  column->addStretch(1);

  connect(preset_, &QComboBox::activated, this, [this](int index) {
    if (index < 0 || index >= static_cast<int>(sampling_presets().size())) return;
    GenerationSettings g = settings();
    const std::uint64_t seed = g.sampling.seed;
    g.sampling = sampling_presets()[static_cast<std::size_t>(index)].sampling;
    g.sampling.seed = seed;
    setSettings(g);
    emit changed(settings());
  });
  connect(system_prompt_, &QPlainTextEdit::textChanged, this, &GenerationPanel::emitChanged);
  connect(reset, &QPushButton::clicked, this, &GenerationPanel::resetRequested);
  connect(save, &QPushButton::clicked, this, [this] { emit saveDefaultsRequested(settings()); });
  setSettings(GenerationSettings{});
}

void GenerationPanel::buildSampling(QFormLayout* form) {
  temperature_ = number(0, 2, 0.05, 2, QStringLiteral("temperatureSpin"),
                        tr("Temperature, 0 to 2: how random the choice of each token is. 0 always takes the most "
                           "likely token; 0.7-1.0 is usual; above 1.2 answers wander."),
                        this);
  top_p_ = number(0.01, 1, 0.01, 2, QStringLiteral("topPSpin"),
                  tr("Top-p (nucleus), 0.01 to 1: keep the most likely tokens that together make up this share "
                     "of the probability. 1 turns it off; 0.9-0.95 is usual."),
                  this);
  top_k_ = integer(0, 1000, 5, QStringLiteral("topKSpin"),
                   tr("Top-k, 0 to 1000: keep only the k most likely tokens. 0 turns it off; 40 is usual."), this);
  min_p_ = number(0, 1, 0.01, 2, QStringLiteral("minPSpin"),
                  tr("Min-p, 0 to 1: drop tokens less likely than this fraction of the most likely one. 0 turns it "
                     "off; 0.05 is usual."),
                  this);
  repeat_penalty_ = number(0.5, 2, 0.05, 2, QStringLiteral("repeatPenaltySpin"),
                           tr("Repetition penalty, 0.5 to 2: makes tokens of the last 64 less likely (above 1) or "
                              "more likely (below 1). 1 turns it off; 1.05-1.15 against loops."),
                           this);
  max_tokens_ = integer(1, settings::kMaxContextLength, 64, QStringLiteral("maxTokensSpin"),
                        tr("The longest answer, in tokens. An answer that reaches it is marked \"length\"."), this);
  seed_ = new QLineEdit(this);
  seed_->setObjectName(QStringLiteral("seedEdit"));
  seed_->setPlaceholderText(tr("random"));
  seed_->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("\\d{0,19}")), seed_));
  seed_->setToolTip(
      tr("Seed: the same seed, prompt and settings give the same answer. Empty: a new seed per answer "
         "(Regenerate gives another answer)."));
  context_ = integer(settings::kMinContextLength, settings::kMaxContextLength, 1024, QStringLiteral("contextSpin"),
                     tr("Context length, in tokens: how much of the conversation the model sees. The model's own "
                        "setting, for every conversation: Apply reloads the model."),
                     this);
  form->addRow(tr("Temperature"), temperature_);
  form->addRow(tr("Top-p"), top_p_);
  form->addRow(tr("Top-k"), top_k_);
  form->addRow(tr("Min-p"), min_p_);
  form->addRow(tr("Repetition penalty"), repeat_penalty_);
  form->addRow(tr("Max tokens"), max_tokens_);
  form->addRow(tr("Seed"), seed_);
  auto* context_row = new QHBoxLayout;
  context_row->addWidget(context_, 1);
  auto* apply = new QPushButton(tr("Apply"), this);
  apply->setObjectName(QStringLiteral("applyContextButton"));
  apply->setToolTip(context_->toolTip());
  context_row->addWidget(apply);
  form->addRow(tr("Context"), context_row);
  for (QDoubleSpinBox* box : {temperature_, top_p_, min_p_, repeat_penalty_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, &GenerationPanel::emitChanged);
  }
  for (QSpinBox* box : {top_k_, max_tokens_})
    connect(box, &QSpinBox::valueChanged, this, &GenerationPanel::emitChanged);
  connect(seed_, &QLineEdit::textChanged, this, &GenerationPanel::emitChanged);
  connect(apply, &QPushButton::clicked, this, [this] { emit contextLengthChosen(context_->value()); });
}

GenerationSettings GenerationPanel::settings() const {
  GenerationSettings g;
  g.sampling = hidden_;
  g.sampling.temperature = static_cast<float>(temperature_->value());
  g.sampling.top_p = static_cast<float>(top_p_->value());
  g.sampling.top_k = top_k_->value();
  g.sampling.min_p = static_cast<float>(min_p_->value());
  g.sampling.repeat_penalty = static_cast<float>(repeat_penalty_->value());
  g.sampling.seed = seed_->text().toULongLong();
  g.max_tokens = max_tokens_->value();
  g.system_prompt = system_prompt_->toPlainText();
  return g;
}

void GenerationPanel::setSettings(const GenerationSettings& g) {
  updating_ = true;
  hidden_ = g.sampling;
  temperature_->setValue(g.sampling.temperature);
  top_p_->setValue(g.sampling.top_p);
  top_k_->setValue(g.sampling.top_k);
  min_p_->setValue(g.sampling.min_p);
  repeat_penalty_->setValue(g.sampling.repeat_penalty);
  seed_->setText(g.sampling.seed == 0 ? QString() : QString::number(g.sampling.seed));
  max_tokens_->setValue(g.max_tokens);
  if (system_prompt_->toPlainText() != g.system_prompt) system_prompt_->setPlainText(g.system_prompt);
  updating_ = false;
  showPreset();
}

void GenerationPanel::setContextLength(int tokens) {
  context_->setValue(tokens);
}

void GenerationPanel::emitChanged() {
  if (updating_) return;
  showPreset();
  emit changed(settings());
}

// The preset whose values the fields hold, else "Custom" (the seed is not part of a preset).
void GenerationPanel::showPreset() {
  SamplingParams shown = settings().sampling;
  shown.seed = 0;
  const auto& presets = sampling_presets();
  int index = static_cast<int>(presets.size());
  for (std::size_t i = 0; i < presets.size(); ++i) {
    SamplingParams p = presets[i].sampling;
    p.frequency_penalty = shown.frequency_penalty;
    p.presence_penalty = shown.presence_penalty;
    p.penalty_last_n = shown.penalty_last_n;
    if (same_sampling(p, shown)) index = static_cast<int>(i);
  }
  preset_->setCurrentIndex(index);
}

}  // namespace hearth::app
